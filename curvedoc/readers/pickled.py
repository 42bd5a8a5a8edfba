"""Training histories saved with pickle: Keras's ``np.save("history.npy", history.history)`` (a NumPy array of one
object, the dict) and ``pickle.dump(history.history, f)`` (to ``history.pkl``, a ``trainHistoryDict`` with no
suffix, ``loss.txt``), or a list of one metric's values pickled under its name. What they hold is read as a JSON
history is (:mod:`curvedoc.readers.history`).

Unpickling may call anything the file names, so these files are read by an unpickler that builds only what a
history is made of: dicts, lists, numbers, strings, and the NumPy arrays, scalars and dtypes that hold its values.
A pickle that names anything else (a Keras ``History`` object, a class of the training script, a torch tensor) is
refused before any of it is built.
"""

from __future__ import annotations

import collections
import io
import math
import pickle
import re
import struct
import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.readers import NUMPY_MAGIC, PICKLE_OPENINGS, is_pickle
from curvedoc.readers.series import read_numpy_header

# What any small pickle may expand to, whatever its size
MIN_BUDGET = 1 << 16
# Model checkpoints are pickles of the framework's tensors: never a history, and often gigabytes
CHECKPOINT_SUFFIXES = frozenset({".pt", ".pth", ".ckpt", ".bin", ".model", ".h5", ".pb"})


# The element types a history's values come in: bools, integers, floats, complex numbers, Python objects
SIMPLE_DTYPE = re.compile(r"[<>|=]?[?bBiufcO]\d{0,2}")
# What NumPy's pickles name under numpy.core (NumPy 1) or numpy._core (NumPy 2); each NumPy loads the other's
NUMPY_PACKAGES = ("numpy.core", "numpy._core")


class _Refused(pickle.UnpicklingError):
    """The pickle names something other than what a history is made of, or asks for more than its bytes hold."""


class _ArrayToBe:
    """What NumPy's ``_reconstruct`` makes: an array whose shape, type and values its BUILD state then gives."""


class _HistoryUnpickler(pickle._Unpickler):
    """An unpickler that builds containers, numbers, strings and NumPy values only (see the module's docstring).
    NumPy's own builders are never called: each array, scalar and dtype a pickle asks for is checked (a plain element
    type, no more values than the file's bytes hold: a damaged length would ask for terabytes, a damaged state crash
    NumPy's own __setstate__) and made afresh. Python's own unpickler, not the C one, so that BUILD can be checked
    too; a history is small enough for it."""

    dispatch: ClassVar[dict] = dict(pickle._Unpickler.dispatch)

    def __init__(self, stream: io.BytesIO, size: int):
        super().__init__(stream)
        self.size = size
        self.allowed: dict[tuple[str, str], Any] = {
            ("numpy", "dtype"): _dtype, ("collections", "OrderedDict"): collections.OrderedDict,
            # before protocol 3 a pickle holds an array's bytes as text and names _codecs.encode to turn them back
            ("_codecs", "encode"): _latin1_bytes}
        for package in NUMPY_PACKAGES:
            self.allowed[(f"{package}.multiarray", "_reconstruct")] = _reconstruct
            self.allowed[(f"{package}.multiarray", "scalar")] = _scalar
            self.allowed[(f"{package}.numeric", "_frombuffer")] = self._frombuffer

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("numpy", "ndarray"):
            return _ArrayToBe  # named only as what _reconstruct makes
        built = self.allowed.get((module, name))
        if built is None:
            raise _Refused(f"names {module}.{name}, which curvedoc does not load: unpickling it would run code the "
                           "file brings")
        return built

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused("refers to an object stored outside it (a persistent id)")

    def _build(self) -> None:
        """BUILD, for the two objects NumPy's pickles give a state: a dtype (its byte order) and an array."""
        state = self.stack.pop()
        made = self.stack[-1]
        if isinstance(made, np.dtype) and isinstance(state, tuple) and len(state) >= 5 and state[2:5] == (
                None, None, None) and state[1] in ("<", ">", "|", "="):
            self.stack[-1] = made.newbyteorder(state[1]) if state[1] in "<>" else made
        elif isinstance(made, _ArrayToBe) and isinstance(state, tuple) and len(state) == 5:
            _, shape, dtype, fortran, raw = state
            self.stack[-1] = self._array(raw, dtype, shape, "F" if fortran else "C")
        else:
            raise _Refused(f"gives a state to a {type(made).__name__}, which a history never holds")

    dispatch[pickle.BUILD[0]] = _build

    def _frombuffer(self, buffer: Any, dtype: Any, shape: Any, order: str) -> np.ndarray:
        return self._array(buffer, dtype, shape, order)

    def _array(self, raw: Any, dtype: Any, shape: Any, order: str) -> np.ndarray:
        if not (isinstance(dtype, np.dtype) and isinstance(shape, tuple)
                and all(isinstance(length, int) and length >= 0 for length in shape) and order in ("C", "F")):
            raise _Refused("holds an array described in a way NumPy never writes (damaged?)")
        count = math.prod(shape)
        if count * dtype.itemsize > self.size:
            raise _Refused(f"asks for an array of shape {shape}, more than its {self.size:,} bytes hold (damaged?)")
        if dtype.hasobject:
            if not (isinstance(raw, list) and len(raw) == count):
                raise _Refused("holds an array of objects without its values")
            values = np.empty(count, dtype=object)
            for place, value in enumerate(raw):
                values[place] = value
            return values.reshape(shape, order=order)
        if not (isinstance(raw, (bytes, bytearray)) and len(raw) == count * dtype.itemsize):
            raise _Refused("holds an array whose bytes do not fill its shape (damaged?)")
        return np.frombuffer(bytes(raw), dtype=dtype).reshape(shape, order=order)


def _dtype(spec: Any, align: Any = False, copy: Any = True) -> np.dtype:
    if not (isinstance(spec, str) and SIMPLE_DTYPE.fullmatch(spec)):
        raise _Refused(f"holds values of a NumPy type ({str(spec)[:40]!r}) that a history never has")
    return np.dtype(spec)


def _reconstruct(kind: Any, shape: Any, code: Any) -> _ArrayToBe:
    if kind is not _ArrayToBe:
        raise _Refused("reconstructs an array of a type other than numpy.ndarray")
    return _ArrayToBe()


def _scalar(dtype: Any, raw: Any = None) -> Any:
    if isinstance(dtype, np.dtype) and dtype.hasobject:
        return raw
    if not (isinstance(dtype, np.dtype) and isinstance(raw, bytes) and len(raw) == dtype.itemsize):
        raise _Refused("holds a NumPy number whose bytes do not match its type (damaged?)")
    return np.frombuffer(raw, dtype=dtype)[0].item()


def _latin1_bytes(text: Any, encoding: Any = "utf-8") -> bytes:
    if not (isinstance(text, str) and encoding in ("latin1", "latin-1")):
        raise _Refused("turns text into bytes the way NumPy's pickles never do")
    return text.encode("latin1")


def is_pickled(path: Path) -> bool:
    """Whether the file is a pickle, or a .npy file (whose array of objects is one)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(max(PICKLE_OPENINGS, key=len)))
    except OSError:
        return False
    return head.startswith(NUMPY_MAGIC) or is_pickle(head)


def load(path: Path) -> Any:
    """The history a pickle (or a .npy file of pickled objects) holds, as plain lists, dicts and numbers."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    stream = io.BytesIO(data)
    try:
        if data.startswith(NUMPY_MAGIC):
            read_numpy_header(stream)  # np.save pickles an array of objects right after its header
        # a value shared through the pickle's memo expands each time it is shared: the expansion is bounded too
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's deprecation notes on the arguments a damaged pickle passes
            return plain(_HistoryUnpickler(stream, len(data)).load(), budget=[max(len(data), MIN_BUDGET)])
    except _Refused as refused:
        raise CurvedocError(path, f"a pickle that {refused}. Save the history with json.dump(history.history, f)"
                            ) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            LookupError, OverflowError, MemoryError, RecursionError, struct.error) as exc:
        raise CurvedocError(path, f"not a readable pickle ({type(exc).__name__}: {exc}; cut off or corrupted?)"
                            ) from None


def plain(value: Any, budget: list[int]) -> Any:
    """``value`` with NumPy's arrays and scalars turned into the lists and numbers JSON would give, refused once it
    expands to more values than ``budget`` (a one-item list, counted down)."""
    budget[0] -= (value.size if isinstance(value, np.ndarray)
                  else len(value) if isinstance(value, (list, tuple, dict)) else 1)
    if budget[0] < 0:
        raise _Refused("expands to more values than its bytes hold (one list shared over and over)")
    if isinstance(value, np.ndarray):
        return plain(value.item() if value.dtype.hasobject and value.ndim == 0 else value.tolist(), budget)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): plain(item, budget) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, budget) for item in value]
    return value
