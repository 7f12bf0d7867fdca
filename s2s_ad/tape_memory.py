"""How much memory a forward run keeps for its pullback, and how much of it the
pullback reads.

The residuals are what the generated forward function returns beside the value:
a tuple of tapes (arrays, typed lists of arrays or of tuples), copies of arrays
and scalars.  ``residual_bytes`` sums what they hold: each memory block an array
keeps alive counted once and whole (a view keeps all of its base; the views of
one array that a typed list hands out at each iteration are one block), the
item storage of typed lists, and scalars, leaving out the caller's own argument
arrays (the forward keeps those by reference; they cost no memory).  Not counted:
the allocator's bookkeeping, a header and alignment of about 0.1 KB per block
(``tests/api/test_explain_bytes.py`` checks the sum against malloc's own count).

``read_bytes`` runs the generated Python pullback on the residuals with every
array wrapped so that the items it reads are recorded: the bytes of the items
read at least once are the values the pullback really needs, and the rest
(unused growth room of a growable tape, a value saved but never read) is
overhead.

>>> residual_bytes((np.zeros(10), 1.0, 3), arguments=())
96
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

_SCALAR_BYTES = 8   # a Python float or int, as the compiled code stores it


@dataclass(frozen=True)
class TapeMemory:
    """Bytes a forward run keeps for its pullback (``residual``), the bytes of
    argument arrays it keeps by reference (``arguments``, not counted in
    ``residual``), and the bytes of the kept values the pullback reads
    (``read``; None when it could not be measured, with ``why``)."""

    residual: int
    arguments: int
    read: int | None = None
    why: str = ""

    @property
    def ratio(self) -> float | None:
        """``residual / read``: 1.0 when the pullback reads everything kept."""
        if self.read is None:
            return None
        if self.read == 0:
            return float("inf") if self.residual else 1.0
        return self.residual / self.read

    def __str__(self) -> str:
        text = f"tape: {self.residual:,} bytes kept for the pullback"
        if self.arguments:
            text += f" (and {self.arguments:,} bytes of argument arrays, by reference)"
        if self.read is not None:
            text += f"; the pullback reads {self.read:,} bytes of them ({self.ratio:.2f}x)"
        elif self.why:
            text += f"; bytes read not measured: {self.why}"
        return text


def _leaves(value: Any) -> Iterator[Any]:
    """The arrays and scalars in a residual structure (tuples, lists, and the typed
    lists compiled code keeps tapes in), in order."""
    if isinstance(value, tuple | list) or _is_typed_list(value):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _is_typed_list(value: Any) -> bool:
    """Whether ``value`` is a Numba typed list (without importing Numba for others)."""
    cls = type(value)
    return cls.__name__ == "List" and cls.__module__.startswith("numba.")


def _array_key(array: np.ndarray) -> tuple[int, int]:
    """(address, bytes) of the memory block that keeps ``array``'s items: its root
    base, a Numba allocation (the same for each boxing of one array that a typed
    list hands out when it is iterated) or another buffer, whole."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    owner = array.base
    parent = getattr(owner, "parent", None)  # Numba's view of a NumPy array
    if isinstance(parent, np.ndarray):
        return _array_key(parent)
    if owner is not None:
        try:
            block = np.frombuffer(owner, dtype=np.uint8)
        except (TypeError, ValueError):  # no buffer to read its extent from
            block = None
        if block is not None and block.nbytes:
            return block.__array_interface__["data"][0], block.nbytes
    return _extent(array)


def _extent(array: np.ndarray) -> tuple[int, int]:
    """(first address, bytes) spanned by ``array``'s items (strides of any sign)."""
    low, high = np.lib.array_utils.byte_bounds(array)
    return low, high - low


def _typed_list_storage(value: Any) -> int:
    """Bytes a typed list stores its items in (each item's compiled layout: an array
    is a struct pointing to its memory block, a tuple its fields in a row)."""
    from numba.core.registry import cpu_target  # only here: typed lists imply Numba

    context = cpu_target.target_context
    item = context.get_data_type(value._list_type.item_type)
    return len(value) * context.get_abi_sizeof(item)


def _blocks(value: Any, stored: bool = False) -> Iterator[np.ndarray | int]:
    """The arrays in a residual structure, and the bytes held besides them: typed
    lists' item storage and scalars (``stored``: inside a typed list's items, where
    the storage counts them already)."""
    if _is_typed_list(value):
        yield _typed_list_storage(value)
        for item in value:
            yield from _blocks(item, stored=True)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _blocks(item, stored)
    elif isinstance(value, np.ndarray):
        yield value
    elif not stored:
        yield _scalar_bytes(value)


def _scalar_bytes(value: Any) -> int:
    if isinstance(value, np.generic):
        return value.itemsize
    if isinstance(value, bool | int | float):
        return _SCALAR_BYTES
    return 0


def _is_argument(array: np.ndarray, arguments: tuple) -> bool:
    return any(isinstance(a, np.ndarray) and np.shares_memory(array, a) for a in arguments)


def _kept_blocks(residuals: Any, arguments: tuple) -> tuple[dict[tuple, bool], int]:
    """``{memory block: whether it is an argument's}`` of the arrays in ``residuals``,
    and the bytes held besides them."""
    blocks: dict[tuple, bool] = {}
    other = 0
    for part in _blocks(residuals):
        if isinstance(part, np.ndarray):
            key = _array_key(part)
            if key not in blocks:
                blocks[key] = _is_argument(part, arguments)
        else:
            other += part
    return blocks, other


def residual_bytes(residuals: Any, arguments: tuple) -> int:
    """Bytes held by ``residuals``: the memory blocks of its arrays (each counted once,
    whole), typed lists' item storage and scalars, leaving out the blocks of the
    arrays in ``arguments``."""
    blocks, other = _kept_blocks(residuals, arguments)
    return other + sum(size for (_, size), argument in blocks.items() if not argument)


def argument_bytes(residuals: Any, arguments: tuple) -> int:
    """Bytes of the argument arrays that ``residuals`` keeps by reference."""
    blocks, _ = _kept_blocks(residuals, arguments)
    return sum(size for (_, size), argument in blocks.items() if argument)


class _ReadRecorder(np.ndarray):
    """An array that records which of its items are read.

    Indexing records the items it selects; any other use by NumPy (a ufunc, a
    NumPy function, a method that makes a new array) records every item.
    """

    _read: np.ndarray | None

    def __array_finalize__(self, obj: Any) -> None:
        # A view or copy made from a recorder by a method: count the whole source read.
        read = getattr(obj, "_read", None)
        if read is not None:
            read[...] = True
        self._read = None

    def __getitem__(self, key: Any) -> Any:
        key = _plain(key)
        if self._read is not None:
            self._read[key] = True
        return self.view(np.ndarray)[key]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(ufunc, method)(*_plain(inputs), **_plain_dict(kwargs))

    def __array_function__(self, func, types, args, kwargs):
        return func(*_plain(args), **_plain_dict(kwargs))

    def __iter__(self):
        return iter(self[...])


def _plain(values: Any) -> Any:
    """``values`` with every recorder in it marked read and replaced by a plain view."""
    if isinstance(values, _ReadRecorder):
        if values._read is not None:
            values._read[...] = True
        return values.view(np.ndarray)
    if isinstance(values, tuple | list):
        return type(values)(_plain(v) for v in values)
    return values


def _plain_dict(kwargs: dict) -> dict:
    return {k: _plain(v) for k, v in kwargs.items()}


def _recording(value: Any, recorders: dict[int, _ReadRecorder], arguments: tuple) -> Any:
    """``value`` with each array that is not an argument replaced by a recorder (one per
    array, however often it appears)."""
    if isinstance(value, tuple | list):
        return type(value)(_recording(v, recorders, arguments) for v in value)
    if isinstance(value, np.ndarray) and not _is_argument(value, arguments):
        if id(value) not in recorders:
            recorder = value.view(_ReadRecorder)
            recorder._read = np.zeros(value.shape, dtype=bool)
            recorders[id(value)] = recorder
        return recorders[id(value)]
    return value


# Functions that use only their arguments' shapes (by name; per module, the argument
# positions used for their shape only, or None for all of them).  The VJPs of sum
# and mean need only the shape of the reduced array.
_SHAPE_ONLY = {
    "np": {"shape": None, "ndim": None, "size": None, "zeros_like": None,
           "empty_like": None, "ones_like": None, "full_like": None},
    "rt": {"unbroadcast": {1}, "reshape_like": {1}, "einsum_like": {1},
           **{f"{reduction}_vjp_{form}": {1} for reduction in ("sum", "mean")
              for form in ("axis", "axis_keepdims", "all", "all_keepdims")}},
}


class _CountingModule:
    """A module whose functions mark the recorders passed to them as read (all their
    items), except at the argument positions that give only a shape, and pass the
    plain arrays on: ``np.asarray(recorder)`` would otherwise read it unseen."""

    def __init__(self, module: Any, shape_only: dict[str, set[int] | None]) -> None:
        self._module = module
        self._shape_only = shape_only

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type | np.ufunc):
            return value
        skip = self._shape_only.get(name, set())

        def counted(*args: Any, **kwargs: Any) -> Any:
            plain = [_shape_of(a) if skip is None or i in skip else _plain(a)
                     for i, a in enumerate(args)]
            return value(*plain, **_plain_dict(kwargs))
        return counted


def _shape_of(value: Any) -> Any:
    """``value`` as a plain array, without marking it read."""
    return value.view(np.ndarray) if isinstance(value, _ReadRecorder) else value


def _counting(pullback: Callable) -> Callable:
    """``pullback`` with its ``np`` and ``rt`` replaced by counting modules."""
    scope = dict(pullback.__globals__)
    for name, shape_only in _SHAPE_ONLY.items():
        if name in scope:
            scope[name] = _CountingModule(scope[name], shape_only)
    return types.FunctionType(pullback.__code__, scope, pullback.__name__,
                              pullback.__defaults__, pullback.__closure__)


def read_bytes(pullback: Callable, residuals: Any, cotangent: Any, arguments: tuple) -> int:
    """Run the Python ``pullback`` on ``residuals``; the bytes of the residual items it
    reads at least once, scalars included (a pullback unpacks every scalar).

    Reads are seen where the pullback indexes an array, passes it to NumPy or to
    the runtime (``rt``), or makes a view of it; a callee's pullback that gets an
    array and converts it with ``np.asarray`` reads it unseen."""
    recorders: dict[int, _ReadRecorder] = {}
    recorded = _recording(residuals, recorders, arguments)
    _counting(pullback)(recorded, cotangent)
    scalars = sum(_scalar_bytes(leaf) for leaf in _leaves(residuals)
                  if not isinstance(leaf, np.ndarray))
    return scalars + sum(int(np.count_nonzero(r._read)) * r.itemsize
                         for r in recorders.values())


def ones_like(value: Any) -> Any:
    """A cotangent of ones shaped like ``value`` (floats, arrays, tuples of them)."""
    if isinstance(value, tuple):
        return tuple(ones_like(v) for v in value)
    if isinstance(value, np.ndarray):
        return np.ones_like(value)
    return 1.0
