"""The lattice of kinds: what sort of value a variable holds.

A leaf module (rules and stages import it).  A kind is ``"float"``, ``"int"``,
``"bool"``, ``"str"``, ``"none"``, ``"unknown"``, a tuple of kinds for a tuple
value, a :class:`StructKind` (a tuple of kinds that remembers the dataclass,
dict or named tuple it stands for), a :class:`StaticKind` (a value fixed when
the code is generated, such as a function held in a structure's field), an
:class:`ArrayKind` or a :class:`ListKind`.

>>> join("int", "float"), join(("float",), ("int",))
('float', ('float',))
"""

from __future__ import annotations

import ctypes
import dataclasses
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


NO_DERIVATIVE = "s2s_ad.no_derivative"  # dataclass field metadata key (ad.no_derivative)


class StructKind(tuple):
    """A differentiable structure: the kinds of its leaves, in field order.

    Generated code holds a structure as the tuple of its *dynamic* fields (numbers,
    arrays, nested structures and tuples); ``cls`` (a dataclass, ``dict`` or a named
    tuple class) and ``fields`` name them.  *Static* fields (functions, strings,
    ``None``) are not passed at run time: ``statics`` holds their values, which are
    part of the kind, so code is generated again for other values.  ``cut`` names the
    dynamic fields marked ``ad.no_derivative``: carried, never differentiated.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class P:
    ...     x: float
    ...     label: str
    >>> k = kind_of_value(P(1.0, "a"))
    >>> k, tuple(k), k.fields, k.static("label")
    (P(x='float', label='a'), ('float',), ('x',), 'a')
    """

    cls: Any
    fields: tuple[str, ...]
    statics: tuple[tuple[str, Any], ...]
    cut: frozenset[str]

    def __new__(cls, items: Any, struct: Any, fields: Any, statics: Any = (),
                cut: Any = (), names: Any = None) -> StructKind:
        self = super().__new__(cls, items)
        self.cls, self.fields = struct, tuple(fields)
        self.statics, self.cut = tuple(statics), frozenset(cut)
        self.names = tuple(names) if names is not None else \
            self.fields + tuple(n for n, _ in self.statics)
        return self

    def _identity(self) -> tuple:
        return (self.cls, self.fields, tuple((n, _static_key(v)) for n, v in self.statics),
                self.cut, self.names)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, StructKind) and tuple.__eq__(self, other)
                and self._identity() == other._identity())

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((tuple(self), self._identity()))

    def __repr__(self) -> str:
        parts = dict(zip(self.fields, map(repr, self), strict=True))
        parts.update({n: repr(v) for n, v in self.statics})
        name = getattr(self.cls, "__name__", "structure")
        return f"{name}({', '.join(f'{n}={parts[n]}' for n in self.order())})"

    def order(self) -> tuple[str, ...]:
        """Every field name, dynamic and static, in the structure's own order."""
        return self.names

    def with_items(self, items: Any) -> StructKind:
        """The same structure holding leaves of kinds ``items``."""
        return StructKind(items, self.cls, self.fields, self.statics, self.cut, self.names)

    def static(self, name: str) -> Any:
        return dict(self.statics)[name]


@dataclass(frozen=True, eq=False)
class StaticKind:
    """A value fixed when the code is generated (a function in a structure's field)."""

    value: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StaticKind) and \
            _static_key(self.value) == _static_key(other.value)

    def __hash__(self) -> int:
        return hash(_static_key(self.value))

    def __repr__(self) -> str:
        return f"static {getattr(self.value, '__name__', repr(self.value))}"


def _static_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value), value)


Kind = str | tuple | ArrayKind | ListKind | StaticKind


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
    mixed = mixed_array_index(index, kind_of)
    if mixed is not None:  # x[idx, 1:], x[0, idx]: the array's axes replace the indexed one
        ints = sum(1 for p in parts if not isinstance(p, gast.Slice)) - 1
        return ArrayKind(base.ndim - ints - 1 + mixed[1].ndim, base.floating, base.boolean)
    ndim = base.ndim
    ellipsis = any(isinstance(p, gast.Constant) and p.value is Ellipsis for p in parts)
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and part.value is None:
            ndim += 1
            continue
        if isinstance(part, gast.Constant) and part.value is Ellipsis:
            continue  # x[...], x[..., 0]: the axes not named
        kind = kind_of(part)
        if kind is None:
            return None
        if kind not in ("int", "bool"):
            return "unknown"  # fancy indexing mixed with other parts
        ndim -= 1
    if ndim == 0 and not ellipsis:  # with '...', NumPy returns a 0-d array (a view)
        return base.element()
    return ArrayKind(ndim, base.floating, base.boolean)


def mixed_array_index(index: Any, kind_of: Any) -> tuple[int, ArrayKind] | None:
    """(position, kind) of the one integer array (of known rank, at least 1-d) in an index
    whose other parts are integers and slices (``x[idx, 1:]``, ``x[0, idx]``); else None."""
    if not isinstance(index, gast.Tuple):
        return None
    found = None
    for position, part in enumerate(index.elts):
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis):
            return None
        kind = kind_of(part)
        if kind in ("int", "bool") and not (isinstance(part, gast.Constant)
                                            and isinstance(part.value, bool)):
            continue
        if not (isinstance(kind, ArrayKind) and not kind.floating and not kind.boolean
                and kind.ndim) or found is not None:
            return None
        found = (position, kind)
    return found


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
    if isinstance(a, StructKind) or isinstance(b, StructKind):
        return _join_structures(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(join(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, StaticKind) or isinstance(b, StaticKind):
        return "unknown"
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


def _join_structures(a: Kind, b: Kind) -> Kind:
    if not (isinstance(a, StructKind) and isinstance(b, StructKind)
            and a.with_items(()) == b.with_items(()) and len(a) == len(b)):
        return "unknown"
    return a.with_items(join(x, y) for x, y in zip(a, b, strict=True))


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
    structure = structure_kind(value)
    if structure is not None:
        return structure
    if isinstance(value, tuple):
        return tuple(kind_of_value(v) for v in value)
    return "unknown"


def is_structure(value: Any) -> bool:
    """Whether ``value`` is a differentiable structure: a dataclass instance, a dict
    with string keys, or a named tuple."""
    cls = type(value)
    return (dataclasses.is_dataclass(value) and not isinstance(value, type)) or \
        (cls is dict and all(type(k) is str for k in value)) or \
        (isinstance(value, tuple) and hasattr(cls, "_fields"))


def structure_items(value: Any) -> list[tuple[str, Any, bool]]:
    """``(field name, value, marked no_derivative)`` of a structure, in its order."""
    if isinstance(value, dict):
        return [(k, v, False) for k, v in value.items()]
    if isinstance(value, tuple):
        return [(k, v, False) for k, v in zip(type(value)._fields, value, strict=True)]
    return [(f.name, getattr(value, f.name), bool(f.metadata.get(NO_DERIVATIVE)))
            for f in dataclasses.fields(value)]


def is_dynamic(value: Any) -> bool:
    """Whether a field's value is passed at run time (numbers, arrays, structures,
    tuples of these) rather than fixed in the generated code (functions, strings)."""
    if isinstance(value, np.ndarray | bool | int | float | np.generic) or is_structure(value):
        return True
    return isinstance(value, tuple) and len(value) > 0 and all(map(is_dynamic, value))


def structure_kind(value: Any) -> StructKind | None:
    """The :class:`StructKind` of a structure (None for other values)."""
    if not is_structure(value):
        return None
    items, fields, statics, cut, names = [], [], [], [], []
    for name, v, no_derivative in structure_items(value):
        names.append(name)
        if is_dynamic(v):
            items.append(kind_of_value(v))
            fields.append(name)
            if no_derivative:
                cut.append(name)
        else:
            statics.append((name, v))
    return StructKind(items, type(value), fields, statics, cut, names)


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
    if isinstance(kind, StructKind):
        return any(carries_derivative(k) for name, k in zip(kind.fields, kind, strict=True)
                   if name not in kind.cut)
    if isinstance(kind, tuple):
        return any(carries_derivative(k) for k in kind)
    if isinstance(kind, ArrayKind):
        return kind.floating
    if isinstance(kind, ListKind):
        return kind.element is None or carries_derivative(kind.element)
    return kind in ("float", "unknown")


def holds_structure_kind(kind: Kind | None) -> bool:
    """Whether a value of this kind is (or holds, in a tuple) a structure."""
    if isinstance(kind, StructKind):
        return True
    return isinstance(kind, tuple) and any(map(holds_structure_kind, kind))
