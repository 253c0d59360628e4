"""sacrebleu's test sets (``-t``), read from where sacrebleu keeps them; never downloaded.

sacrebleu downloads a test set once into ``$SACREBLEU`` (default
``~/.sacrebleu``) and writes one text file per field there:
``$SACREBLEU/<name>/<name, '/' as '_'>.<src-trg>.<field>`` (``:`` of a field
name as ``-``), the raw release under ``raw/``.  This module reads those files
as sacrebleu reads them, and takes from sacrebleu only its index of test sets
(``sacrebleu.dataset.DATASETS``: names, language pairs, descriptions,
citations), imported when first needed.  No call made here can download: where
sacrebleu would fetch or process a file that is not there, an
:class:`~fastbleu.errors.InputError` gives the ``sacrebleu`` command that
fetches it.
"""

from __future__ import annotations

import gzip
import os
import re

from ..errors import InputError
from .testset_files import sgm_lines, wmt_xml_fields

__all__ = ["sacrebleu_dir", "check_test_sets", "check_language_pair", "fieldnames",
           "field_files", "reference_files", "read_field", "keep_mask", "echo",
           "available_origlangs", "available_subsets", "listing", "citations"]


def sacrebleu_dir() -> str:
    """``$SACREBLEU``, else ``~/.sacrebleu``: where sacrebleu keeps its test sets."""
    return os.environ.get("SACREBLEU", os.path.join(os.path.expanduser("~"), ".sacrebleu"))


def _index():
    """sacrebleu's ``DATASETS`` and ``SUBSETS`` (importing them reads no file)."""
    try:
        from sacrebleu.dataset import DATASETS, SUBSETS
    except ImportError:
        raise InputError("test sets (-t, --list, --citation) need sacrebleu's index of test "
                         "sets: install sacrebleu (pip install sacrebleu)") from None
    return DATASETS, SUBSETS


def _dataset(name: str):
    return _index()[0][name]


def _is_wmt_xml(dataset) -> bool:
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    return isinstance(dataset, WMTXMLDataset)


def _fetch_hint(name: str, langpair: str | None) -> str:
    pair = f" -l {langpair}" if langpair else ""
    return f"fetch it with: sacrebleu --download {name}{pair}"


def _not_downloaded(name: str, langpair: str | None) -> InputError:
    where = f"{name} ({langpair})" if langpair else name
    return InputError(f"test set {where} is not in {sacrebleu_dir()} (fastbleu never "
                      f"downloads); {_fetch_hint(name, langpair)}")


def check_test_sets(test_sets: str) -> list[str]:
    """The names of ``-t a,b``, each known to sacrebleu, or an InputError."""
    datasets = _index()[0]
    names = test_sets.split(",")
    for name in names:
        if name not in datasets:
            raise InputError(f"unknown test set {name!r}; fastbleu --list shows the test "
                             "sets")
    return names


def check_language_pair(names: list[str], langpair: str | None) -> None:
    """``-l`` is given and every test set of ``names`` has it, or an InputError."""
    if langpair is None:
        raise InputError(f"-t needs a language pair (-l); fastbleu --list -t {names[0]} "
                         "shows them")
    for name in names:
        pairs = list(_dataset(name).langpairs)
        if langpair not in pairs:
            raise InputError(f"test set {name!r} has no language pair {langpair!r}; it has "
                             f"{', '.join(pairs)}")


# The paths are made here from $SACREBLEU as it is now: sacrebleu's own datasets fix
# theirs when sacrebleu is imported.

def _raw_file(dataset, langpair: str) -> str:
    """The raw file of ``langpair`` under ``raw/`` (sacrebleu's first file of the pair; a
    WMT 2022+ pair may give it as ``{"path": ...}``)."""
    entry = dataset.langpairs[langpair]
    relative = entry["path"] if isinstance(entry, dict) else entry[0]
    return os.path.join(sacrebleu_dir(), dataset.name, "raw", relative)


def _text_file(name: str, langpair: str, field: str) -> str:
    """A field's processed file: ``<name>/<name, '/' as '_'>.<pair>.<field, ':' as '-'>``."""
    return os.path.join(sacrebleu_dir(), name,
                        f"{name.replace('/', '_')}.{langpair}.{field.replace(':', '-')}")


def _xml_fields(dataset, langpair: str) -> dict:
    """The fields of a WMT 2021+ XML release, parsed from its raw file (as sacrebleu)."""
    raw = _raw_file(dataset, langpair)
    if not os.path.lexists(raw):
        raise _not_downloaded(dataset.name, langpair)
    fields = wmt_xml_fields(raw, dataset.name, langpair)  # sacrebleu's unwrapping, guarded
    # sacrebleu orders the translators as a set of str does: by their hashes, another order
    # in each process.  Sorted here, so that --echo all and --list say the same each time.
    refs = sorted(key for key in fields if key.startswith("ref"))
    ordered, placed = {}, False
    for key, values in fields.items():
        if key.startswith("ref"):
            if not placed:
                ordered.update((ref, fields[ref]) for ref in refs)
                placed = True
        else:
            ordered[key] = values
    return ordered


def fieldnames(name: str, langpair: str) -> list[str]:
    """The fields of ``name``/``langpair`` (``src``, ``ref``..., ``docid``, ``origlang``...)
    in sacrebleu's order.  sacrebleu reads those of a WMT 2021+ release from its raw XML
    file, downloading it first; here a missing file is an InputError."""
    dataset = _dataset(name)
    if _is_wmt_xml(dataset):
        return list(_xml_fields(dataset, langpair))
    return list(dataset.fieldnames(langpair))


def field_files(name: str, langpair: str) -> dict[str, str]:
    """Each field's processed text file, all present, or an InputError with the command
    that fetches them."""
    files = {field: _text_file(name, langpair, field) for field in fieldnames(name, langpair)}
    if not all(os.path.isfile(path) for path in files.values()):
        raise _not_downloaded(name, langpair)
    return files


def reference_files(name: str, langpair: str) -> list[str]:
    """The reference files sacrebleu scores against: every ``ref*`` field, or for a WMT
    2021+ release the translators its index allows (``refs``)."""
    dataset = _dataset(name)
    files = field_files(name, langpair)
    if _is_wmt_xml(dataset):
        allowed = dataset._get_langpair_allowed_refs(langpair)
        return [path for field, path in files.items() if field in allowed]
    return [path for field, path in files.items() if field.startswith("ref")]


def read_field(path: str, encoding: str = "utf-8") -> list[str]:
    """A processed file's lines, right-stripped, as sacrebleu reads references."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding=encoding, newline="\n") as stream:
            return [line.rstrip() for line in stream]
    except (OSError, UnicodeDecodeError, LookupError) as error:
        raise InputError(f"cannot read {path} ({error})") from None


def keep_mask(names: list[str], langpair: str, origlang: str | None,
              subset: str | None) -> list[bool] | None:
    """Which segments of the concatenated test sets ``--origlang``/``--subset`` keep
    (None: all), from the raw files as sacrebleu's ``filter_subset`` reads them.

    ``--origlang xx`` keeps documents originally in xx (``non-xx``: the others);
    ``--subset`` is a regular expression searched in a WMT 2021+ document's domain, or
    in the tags sacrebleu's ``SUBSETS`` give a WMT 2018/2019 document (``country:``
    prefix dropped).
    """
    if origlang is None and subset is None:
        return None
    if subset is not None and subset.startswith("country:"):
        subset = subset[len("country:"):]

    def keeps(doc_origlang: str) -> bool:
        if origlang is None:
            return True
        if origlang.startswith("non-"):
            return doc_origlang != origlang[4:]
        return doc_origlang == origlang

    try:
        pattern = None if subset is None else re.compile(subset)
    except re.error as error:
        raise InputError(f"--subset {subset!r} is not a regular expression ({error})") from None
    mask: list[bool] = []
    for name in names:
        dataset = _dataset(name)
        raw = _raw_file(dataset, langpair)
        if _is_wmt_xml(dataset):
            fields = _xml_fields(dataset, langpair)
            domains = fields.get("domain") or [None] * len(fields["origlang"])
            for doc_origlang, domain in zip(fields["origlang"], domains):
                mask.append(keeps(doc_origlang) and (
                    pattern is None or (domain is not None and pattern.search(domain)
                                        is not None)))
        elif raw.endswith(".sgm"):
            mask += _sgm_mask(name, langpair, raw, keeps, pattern)
        else:
            raise InputError(f"--origlang and --subset need a WMT test set with .sgm or .xml "
                             f"raw files; {name} has {os.path.basename(raw)}")
    return mask


def _sgm_mask(name: str, langpair: str, raw: str, keeps, pattern) -> list[bool]:
    """One bool per ``<seg`` line of an SGML release: its ``<doc``'s verdict."""
    tags = {}
    if pattern is not None:
        subsets = _index()[1]
        if name not in subsets:
            raise InputError(f"--subset: test set {name} has no subset annotation (sacrebleu "
                             f"has it for {', '.join(subsets)})")
        tags = subsets[name]
    if not os.path.lexists(raw):
        raise _not_downloaded(name, langpair)
    mask, keep = [], False
    for line in sgm_lines(raw, name, langpair):
        if line.startswith("<doc "):
            keep = keeps(_attribute(line, "origlang"))
            if pattern is not None and not pattern.search(tags.get(_attribute(line,
                                                                               "docid"), "")):
                keep = False
        if line.startswith("<seg "):
            mask.append(keep)
    return mask


def _attribute(line: str, key: str) -> str:
    """An attribute of a ``<doc`` line as sacrebleu's regular expression takes it (the
    whole line when it is absent)."""
    return re.sub(rf'.* {key}="([^"]+)".*\n', r"\1", line)


def apply_mask(columns: list, mask: list[bool] | None) -> list:
    """Each column (a list of str) with only the segments ``mask`` keeps (zip's length,
    as sacrebleu filters)."""
    if mask is None:
        return columns
    return [[value for value, keep in zip(column, mask) if keep] for column in columns]


def echo(names: list[str], langpair: str, requested: list[str], origlang: str | None,
         subset: str | None) -> str:
    """``--echo``: the requested fields of every test set, tab-separated, one line per
    segment (``all``: every field; ``ref``: the first ``ref:`` field when there is no
    plain ``ref``), as sacrebleu's ``print_test_set``."""
    lines = []
    for name in names:
        fields = fieldnames(name, langpair)
        chosen = list(requested)
        if "all" in chosen:
            if len(chosen) != 1:
                raise InputError("--echo all takes no other field")
            chosen = fields
        refs = [field for field in fields if field.startswith("ref")]
        if "ref" in chosen and "ref" not in fields and refs:
            chosen = [min(refs) if field == "ref" else field for field in chosen]
        for field in chosen:
            if field not in fields:
                raise InputError(f"--echo: test set {name} has no field {field!r} for "
                                 f"{langpair}; it has {', '.join(fields)}")
        files = field_files(name, langpair)
        columns = [read_field(files[field]) for field in chosen]
        columns = apply_mask(columns, keep_mask([name], langpair, origlang, subset))
        lines += ["\t".join(values) for values in zip(*columns)]
    return "\n".join(lines)


def available_origlangs(names: list[str], langpair: str) -> list[str]:
    """The original languages of the documents of the raw files (for ``-d``), sorted."""
    found = set()
    for name in names:
        dataset = _dataset(name)
        raw = _raw_file(dataset, langpair)
        if _is_wmt_xml(dataset):
            found |= set(_xml_fields(dataset, langpair)["origlang"])
        if raw.endswith(".sgm"):
            if not os.path.lexists(raw):
                raise _not_downloaded(name, langpair)
            found |= {_attribute(line, "origlang") for line in sgm_lines(raw, name, langpair)
                      if line.startswith("<doc ")}
    return sorted(found)


def available_subsets(names: list[str], langpair: str) -> list[str]:
    """The domains of a WMT 2021+ release, or the countries (``country:xx``) and domains
    of sacrebleu's ``SUBSETS`` annotation (for ``-d``), sorted."""
    datasets, subsets = _index()
    found = set()
    for name in names:
        dataset = datasets[name]
        if _is_wmt_xml(dataset):
            found |= set(_xml_fields(dataset, langpair).get("domain", []))
        elif name in subsets:
            found |= {"country:" + tag.split("-")[0] for tag in subsets[name].values()}
            found |= {tag.split("-")[1] for tag in subsets[name].values()}
    return sorted(found)


def listing(test_set: str | None, langpair: str | None) -> str:
    """``--list``: the test sets (of ``langpair``, either direction) with their
    descriptions, or with ``-t`` every language pair's fields, as sacrebleu lists them."""
    datasets = _index()[0]
    if test_set:
        if test_set not in datasets:
            check_test_sets(test_set)
        pairs = [langpair] if langpair else list(datasets[test_set].langpairs)
        if langpair:
            check_language_pair([test_set], langpair)
        try:
            return "\n".join(f"{pair}: {', '.join(fieldnames(test_set, pair))}"
                             for pair in pairs)
        except InputError:  # every pair is listed: the command fetching them all
            raise _not_downloaded(test_set, langpair) from None
    if langpair:
        parts = langpair.split("-")
        if len(parts) < 2:
            raise InputError(f"-l/--language-pair takes SRC-TRG, got {langpair!r}")
        both = {f"{parts[0]}-{parts[1]}", f"{parts[1]}-{parts[0]}"}
        names = [d.name for d in datasets.values() if both & set(d.langpairs)]
        head = f"The available test sets for {langpair} are:"
    else:
        names, head = list(datasets), "The available test sets are:"
    return "\n".join([head] + [f"{name:<30}: {datasets[name].description.strip()}"
                               for name in sorted(names)])


def citations(test_sets: str) -> str:
    """``--citation``: each test set's BibTeX entry, or an InputError for one without."""
    lines = []
    for name in check_test_sets(test_sets):
        citation = _dataset(name).citation
        if not citation:
            raise InputError(f"no citation found for {name}")
        lines.append(citation)
    return "\n".join(lines)
