"""``spm``, ``flores101``, ``flores200``, ``spBLEU-1K``: sentencepiece tokens, as sacrebleu's.

sacrebleu encodes each (right-stripped) line into sentencepiece pieces with
the model it downloads into its cache folder, ``$SACREBLEU/models``
(``~/.sacrebleu/models`` by default), and joins them with spaces.  fastbleu
never downloads anything: it reads the model from that same place under the
same file name, so a model sacrebleu has fetched once serves both, or from a
path given explicitly (``BLEU(spm_model=...)``, ``--spm-model``).

``spm`` is an old name of ``flores101`` (same model, signature ``flores101``).
With a model file other than sacrebleu's, the signature names the file
(``tok:spm-<file name>``, :func:`model_signature`).
Lines are encoded in batches by sentencepiece itself, each distinct line once
(:class:`~fastbleu.tokenizers.lines.LineTransform`).
"""

from __future__ import annotations

import logging
import os
import re
from functools import lru_cache
from pathlib import Path

from .._native.codes import TOKENIZE_NONE
from .base import Tokenizer
from .lines import LineTransform

logger = logging.getLogger("fastbleu")

#: sacrebleu's model file name (the last part of its download address) per tokenizer.
MODEL_FILES = {
    "spm": "sacrebleu_tokenizer_spm.model",
    "flores101": "sacrebleu_tokenizer_spm.model",
    "flores200": "flores200sacrebleuspm",
    "spBLEU-1K": "spbleu-1k_tokenizer_spm.model",
}

#: The signature sacrebleu prints per tokenizer name.
SIGNATURES = {"spm": "flores101", "flores101": "flores101", "flores200": "flores200",
              "spBLEU-1K": "spBLEU-1K"}


def models_folder() -> Path:
    """sacrebleu's model cache: ``$SACREBLEU/models``, by default ``~/.sacrebleu/models``."""
    root = os.environ.get("SACREBLEU", os.path.join(os.path.expanduser("~"), ".sacrebleu"))
    return Path(root) / "models"


def default_model_path(name: str) -> Path:
    """Where sacrebleu keeps the model of tokenizer ``name``."""
    return models_folder() / MODEL_FILES[name]


def spm_tokenizer(name: str, model: str | os.PathLike | None = None) -> Tokenizer:
    """The sentencepiece tokenizer ``name`` with ``model`` (default: sacrebleu's file).

    Raises
    ------
    TypeError
        If ``model`` is not a path.
    FileNotFoundError
        If the model file is missing; the message says where to put it.
    ImportError
        If sentencepiece is not installed.
    """
    if name not in MODEL_FILES:
        raise ValueError(f"unknown sentencepiece tokenizer {name!r}; available: "
                         f"{', '.join(MODEL_FILES)}")
    if model is None:
        path = default_model_path(name)
        if not path.is_file():
            raise FileNotFoundError(
                f"the {name!r} tokenizer needs sacrebleu's sentencepiece model, which is not at "
                f"{path}. fastbleu does not download models: put the file '{MODEL_FILES[name]}' "
                f"in {path.parent} (where sacrebleu itself downloads it on first use; the "
                "SACREBLEU environment variable moves that folder), or give the model's path "
                "with spm_model= (command line: --spm-model PATH)")
    else:
        if not isinstance(model, (str, os.PathLike)):
            raise TypeError(f"spm_model must be a path, got {type(model).__name__}")
        path = Path(model)
        if not path.is_file():
            raise FileNotFoundError(f"spm_model: no sentencepiece model file at {path}")
    if name == "spm":
        logger.warning("Tokenizer 'spm' has been changed to 'flores101', and may be removed in "
                       "the future.")
    return _load(name, str(path.resolve()), model_signature(name, path))


def model_signature(name: str, path: str | os.PathLike) -> str:
    """The signature's ``tok`` value for tokenizer ``name`` with the model file ``path``.

    sacrebleu's name (``flores101``, ``flores200``, ``spBLEU-1K``) when the
    file is one of sacrebleu's models (by its file name, wherever it lies: the
    name of the model's own tokenizer, since the model alone decides the
    tokens); otherwise ``spm-<file name>``, so that a score computed with
    another model never claims to be comparable with sacrebleu's.
    Characters that would break the signature's ``key:value|...`` format
    (anything but letters, digits, ``.``, ``_``, ``+`` and ``-``) become ``_``.
    """
    filename = Path(path).name
    if filename == MODEL_FILES[name]:
        return SIGNATURES[name]
    for other, file in MODEL_FILES.items():  # e.g. flores101's model given to flores200
        if filename == file:
            return SIGNATURES[other]
    return "spm-" + re.sub(r"[^A-Za-z0-9._+-]", "_", filename)


@lru_cache(maxsize=8)
def _load(name: str, path: str, signature: str) -> Tokenizer:
    try:
        import sentencepiece
    except ImportError:
        raise ImportError(f"the {name!r} tokenizer needs sentencepiece; install it with "
                          "pip install 'fastbleu[spm]'") from None
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(path)
    except (OSError, RuntimeError) as error:
        raise ValueError(f"{path} is not a sentencepiece model: {error}") from None

    def tokenize_lines(lines: list[str]) -> list[str]:
        return [" ".join(pieces) for pieces in processor.encode(lines, out_type=str)]

    return Tokenizer(name, signature, TOKENIZE_NONE, LineTransform(tokenize_lines))
