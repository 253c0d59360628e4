"""Token ids in device memory: :class:`DeviceIds`, the GPU counterpart of ``fastbleu.TokenIds``."""

from __future__ import annotations

import numpy as np


def check_id(value, name: str) -> int | None:
    """``pad_id``/``eos_id``: None or an int that fits int64."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int or None, got {type(value).__name__}")
    if not -2 ** 63 <= int(value) < 2 ** 63:
        raise ValueError(f"{name} must fit in int64, got {value}")
    return int(value)


class DeviceIds:
    """Segments of token ids on the GPU, for :func:`fastbleu.gpu.bleu_statistics`.

    The ids are read where they are (no copy); the meaning of every argument is
    that of :class:`fastbleu.TokenIds`, and the statistics equal the CPU
    path's for the same ids.

    Parameters
    ----------
    values : CUDA array or numpy array of int
        A 2-D ``(segments, length)`` array (a row per segment; drop the
        padding with ``pad_id``), or, with ``offsets``, the 1-D ids of all
        segments back to back.  Any object with ``__cuda_array_interface__``
        (torch, CuPy, JAX, numba) or DLPack; numpy arrays are copied to the
        device.
    offsets : array of int, optional
        ``n + 1`` non-decreasing offsets into ``values`` (device or numpy):
        segment ``i`` is ``values[offsets[i]:offsets[i + 1]]``.  They are
        checked on the device, in the same kernel that reads the ids.
    pad_id : int, optional
        A padding id, dropped wherever it occurs.
    eos_id : int, optional
        After the leading run of ``pad_id``, a segment ends at its first
        ``eos_id`` (not a token of it).
    valid : array of bool, optional
        ``False`` marks a missing segment (a missing reference); device or numpy.
    """

    def __init__(self, values, offsets=None, *, pad_id: int | None = None,
                 eos_id: int | None = None, valid=None):
        if isinstance(values, DeviceIds):
            offsets = values.offsets if offsets is None else offsets
            pad_id = values.pad_id if pad_id is None else pad_id
            eos_id = values.eos_id if eos_id is None else eos_id
            valid = values.valid if valid is None else valid
            values = values.values
        self.values = values
        self.offsets = offsets
        self.pad_id = check_id(pad_id, "pad_id")
        self.eos_id = check_id(eos_id, "eos_id")
        self.valid = valid
        shape = _shape(values, "values")
        if offsets is None:
            if len(shape) != 2:
                raise ValueError(f"values must be a 2-D (segments x length) array of ids, or "
                                 f"1-D with offsets; got shape {shape}")
            self.n = int(shape[0])
        else:
            if len(shape) != 1:
                raise ValueError(f"values must be 1-D with offsets, got shape {shape}")
            offset_shape = _shape(offsets, "offsets")
            if len(offset_shape) != 1 or offset_shape[0] == 0:
                raise ValueError("offsets must be 1-D with one more entry than segments, got "
                                 f"shape {offset_shape}")
            self.n = int(offset_shape[0]) - 1
        if valid is not None and tuple(_shape(valid, "valid")) != (self.n,):
            raise ValueError(f"valid must have one entry per segment ({self.n}), got shape "
                             f"{tuple(_shape(valid, 'valid'))}")

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"DeviceIds({self.n} segments, pad_id={self.pad_id}, eos_id={self.eos_id})"

    def with_defaults(self, pad_id, eos_id) -> DeviceIds:
        """These ids with ``pad_id``/``eos_id`` filled in where they are unset."""
        return DeviceIds(self, pad_id=pad_id, eos_id=eos_id)


def _interface(value) -> dict | None:
    try:
        return value.__cuda_array_interface__
    except Exception:
        return None


def _shape(value, name: str) -> tuple:
    """The shape of an array of any library, checking that it holds integers (or bools)."""
    interface = _interface(value)
    if interface is not None:
        shape, kind = tuple(interface["shape"]), np.dtype(interface["typestr"]).kind
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        shape = tuple(value.shape)
        try:
            kind = np.dtype(str(value.dtype).replace("torch.", "")).kind
        except TypeError:
            kind = "?"
    elif isinstance(value, (list, tuple)):
        array = np.asarray(value)
        shape, kind = array.shape, array.dtype.kind
    else:
        raise TypeError(f"{name} must be an array (CUDA or numpy), got {type(value).__name__}")
    wanted = "b" if name == "valid" else "iu"
    if kind not in wanted:
        what = "bools" if name == "valid" else "integer token ids"
        raise TypeError(f"{name} must hold {what}, got an array of kind {kind!r}")
    return shape
