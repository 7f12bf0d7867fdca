"""The lattice of kinds: what sort of value a variable holds.

A leaf module (rules and stages import it).  A kind is ``"float"``, ``"int"``,
``"bool"``, ``"str"``, ``"none"``, ``"unknown"``, a tuple of kinds for a tuple
value, an :class:`ArrayKind` or a :class:`ListKind`.

>>> join("int", "float"), join(("float",), ("int",))
('float', ('float',))
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

NUMERIC = ("float", "int", "bool")


@dataclass(frozen=True)
class ArrayKind:
    """A NumPy array of ``ndim`` dimensions (None: unknown): float, int or boolean."""

    ndim: int | None
    floating: bool = True
    boolean: bool = False

    def __repr__(self) -> str:
        rank = "" if self.ndim is None else self.ndim
        return f"{self.element()} array{rank}"

    def element(self) -> str:
        return "float" if self.floating else ("bool" if self.boolean else "int")


@dataclass(frozen=True)
class ListKind:
    """A Python list that grows by ``append`` (None: no item appended yet)."""

    element: Any = None

    def __repr__(self) -> str:
        return f"list of {self.element or 'nothing yet'}"


Kind = str | tuple | ArrayKind | ListKind


def indexed(base: ArrayKind, index: Any, kind_of: Any) -> Kind | None:
    """The kind of ``base[index]``: integers drop a dimension, slices keep it.

    ``index`` is a gast index; ``kind_of(atom)`` gives the kind of one of its atoms.
    """
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if base.ndim is None:
        return ArrayKind(None, base.floating)
    chosen = array_index(index, kind_of)
    if chosen is not None:  # x[int_array] or x[mask]: the indexed axes become one shape
        if chosen.ndim is None:
            return ArrayKind(None, base.floating, base.boolean)
        ndim = base.ndim - chosen.ndim + 1 if chosen.boolean else base.ndim - 1 + chosen.ndim
        return ArrayKind(ndim, base.floating, base.boolean)
    ndim = base.ndim
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and part.value is None:
            ndim += 1
            continue
        kind = kind_of(part)
        if kind is None:
            return None
        if kind not in ("int", "bool"):
            return "unknown"  # fancy indexing mixed with other parts
        ndim -= 1
    return base.element() if ndim == 0 else ArrayKind(ndim, base.floating, base.boolean)


def array_index(index: Any, kind_of: Any) -> ArrayKind | None:
    """The kind of ``index`` when it is one integer or boolean array (fancy indexing)."""
    if isinstance(index, gast.Tuple | gast.Slice | gast.Constant):
        return None
    kind = kind_of(index)
    return kind if isinstance(kind, ArrayKind) and not kind.floating else None


def join(a: Kind | None, b: Kind | None) -> Kind | None:
    """The least kind holding both ``a`` and ``b`` (``None`` is 'no value yet')."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(join(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, ListKind) and isinstance(b, ListKind):
        return ListKind(join(a.element, b.element))
    if isinstance(a, ListKind) or isinstance(b, ListKind):
        return "unknown"
    if isinstance(a, ArrayKind) or isinstance(b, ArrayKind):
        return _join_arrays(a, b)
    if {a, b} <= {"int", "bool"}:
        return "int"
    if {a, b} <= set(NUMERIC):
        return "float"
    return "unknown"


def join_all(kinds: list) -> Kind | None:
    """The join of every kind in ``kinds`` (None for none).

    >>> join_all(["int", "float", "int"])
    'float'
    """
    result = None
    for k in kinds:
        result = join(result, k)
    return result


def _join_arrays(a: Kind, b: Kind) -> Kind:
    arrays = [k for k in (a, b) if isinstance(k, ArrayKind)]
    others = [k for k in (a, b) if not isinstance(k, ArrayKind)]
    if any(o not in NUMERIC for o in others):
        return "unknown"
    ndims = {k.ndim for k in arrays}
    floating = any(k.floating for k in arrays) or "float" in others
    boolean = all(k.boolean for k in arrays) and all(o == "bool" for o in others)
    return ArrayKind(ndims.pop() if len(ndims) == 1 else None, floating, boolean)


def compared(kinds: list) -> Kind | None:
    """The kind of a comparison: a boolean array when an operand is an array."""
    if any(k is None for k in kinds):
        return None
    arrays = [k for k in kinds if isinstance(k, ArrayKind)]
    if not arrays:
        return "bool"
    ndims = [k.ndim for k in arrays]
    return ArrayKind(None if None in ndims else max(ndims), floating=False, boolean=True)


def broadcast(kinds: list) -> Kind | None:
    """The kind of an element-wise result: arrays broadcast to the largest rank."""
    arrays = [k for k in kinds if isinstance(k, ArrayKind)]
    if not arrays:
        out = None
        for k in kinds:
            out = join(out, "int" if k == "bool" else k)
        return out
    if any(k is None for k in kinds):
        return None
    if any(not isinstance(k, ArrayKind) and k not in NUMERIC for k in kinds):
        return "unknown"
    ndims = [k.ndim for k in arrays]
    floating = any(k.floating for k in arrays) or "float" in kinds
    return ArrayKind(None if None in ndims else max(ndims), floating)


def kind_of_value(value: Any) -> Kind:
    """The kind of a Python value (an argument or a constant)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fiub":
            return "unknown"
        if value.ndim == 0:  # a 0-d array computes like a scalar
            return "float" if value.dtype.kind == "f" else "int"
        return ArrayKind(value.ndim, value.dtype.kind == "f", value.dtype.kind == "b")
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return tuple(kind_of_value(v) for v in value)
    return "unknown"


_INT_MATH = {"factorial", "comb", "perm", "gcd", "lcm", "isqrt"}
_MATH_VALUES = {id(getattr(math, name)) for name in dir(math) if callable(getattr(math, name))}


def foreign_kind(fn: Any) -> Kind:
    """The result kind of a callable without source (a C function's ``restype``)."""
    if getattr(fn, "__module__", None) == "math" or id(fn) in _MATH_VALUES:
        return "int" if getattr(fn, "__name__", "") in _INT_MATH else "float"
    restype = getattr(fn, "restype", None)
    if restype in (ctypes.c_double, ctypes.c_float, ctypes.c_longdouble):
        return "float"
    if restype in (ctypes.c_int, ctypes.c_long, ctypes.c_longlong, ctypes.c_short,
                   ctypes.c_int64, ctypes.c_int32, ctypes.c_size_t):
        return "int"
    return "unknown"


def carries_derivative(kind: Kind | None) -> bool:
    """Whether a value of this kind can have a nonzero cotangent."""
    if isinstance(kind, tuple):
        return any(carries_derivative(k) for k in kind)
    if isinstance(kind, ArrayKind):
        return kind.floating
    if isinstance(kind, ListKind):
        return kind.element is None or carries_derivative(kind.element)
    return kind in ("float", "unknown")
