"""Index ranges: which integer indices of a normalized function are in range for
the axis they index, by a simple range analysis; the bounds checks
(:mod:`s2s_ad.compiler.bounds_checks`) leave those out.

The analysis follows the function once, in order, keeping facts about names:

* an int lies between two *bounds*, each a constant or the size of an array's
  axis plus a constant (``i`` of ``for i in range(1, n - 1)`` where
  ``n = x.shape[0]`` lies in ``[1, size(x, 0) - 2]``);
* an array's shape, when it was made by ``np.zeros((n + 1, m))`` and its kin or
  is another array's (``np.zeros_like(x)``); otherwise each axis has a size of
  its own;
* a name holds the shape of an array (``x_shape = np.shape(x)``) or a tuple of
  ints (``shape = (n + 1, m)``).

A fact lasts until a name it mentions is bound again.  A loop's body starts with
the facts of none of the names the loop binds (a value may come from the previous
iteration), plus its range variable's; after a loop or a branch, the names it
binds are forgotten.  An index ``x[i]`` is in range when its lower bound is at
least 0 and its upper bound is below the size of the axis (the same size minus
at least one, or a smaller constant).  Sizes are never negative.

>>> import gast
>>> from s2s_ad.compiler.syntax.annotations import set_callee
>>> from s2s_ad.kinds import ArrayKind
>>> tree = gast.parse('''
... def f(x):
...     n = len(x)
...     for i in range(1, n):
...         a = i - 1
...         b = x[a]
...         c = x[i]
...         d = x[n]
... ''').body[0]
>>> for node in gast.walk(tree):   # as normalize resolves them
...     if isinstance(node, gast.Call):
...         set_callee(node, {"len": len, "range": range}[node.func.id])
>>> kinds = {"x": ArrayKind(1), "n": "int", "i": "int", "a": "int"}
>>> ranges = IndexRanges(tree, kinds)
>>> [ranges.in_range(s.value, 0) for s in tree.body[1].body[1:]]
[True, True, False]
"""

from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from s2s_ad.compiler.syntax.annotations import callee_of
from s2s_ad.kinds import ArrayKind, Kind

#: constructors whose first argument is the shape of the array they make
_SHAPED = (np.zeros, np.ones, np.empty, np.full)
#: functions whose result has the shape of their first argument
_SAME_SHAPE = (np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy)


@dataclass(frozen=True)
class Bound:
    """``size(array, axis) + offset`` (``size`` None: the constant ``offset``)."""

    size: tuple[str, int] | None
    offset: int

    def plus(self, other: Bound) -> Bound | None:
        if self.size is not None and other.size is not None:
            return None
        return Bound(self.size or other.size, self.offset + other.offset)

    def minus(self, constant: Bound) -> Bound | None:
        return Bound(self.size, self.offset - constant.offset) if constant.size is None \
            else None


@dataclass(frozen=True)
class Interval:
    """An int between ``low`` and ``high`` (inclusive; None: unknown)."""

    low: Bound | None
    high: Bound | None


@dataclass(frozen=True)
class Shape:
    """A tuple of ints (or an array's shape): each a bound, or None when unknown."""

    dims: tuple[Bound | None, ...]


@dataclass(frozen=True)
class ShapeOf:
    """``np.shape(array)``: the shape of ``array`` as it is bound now."""

    array: str


Fact = Interval | Shape | ShapeOf


def _exact(b: Bound | None) -> Interval | None:
    return None if b is None else Interval(b, b)


class IndexRanges:
    """The range analysis of the normalized function ``fdef`` with ``kinds``; ask
    :meth:`in_range` about one of its subscripts."""

    def __init__(self, fdef: gast.FunctionDef, kinds: dict[str, Kind]):
        self.kinds = kinds
        self.proven: set[tuple[int, int]] = set()  # (id of a subscript, axis)
        self._block(fdef.body, {})

    def in_range(self, subscript: gast.Subscript, axis: int) -> bool:
        """Whether the integer index of ``subscript`` at ``axis`` is always in range."""
        return (id(subscript), axis) in self.proven

    # ---- following the code ---------------------------------------------------------
    def _block(self, stmts: list[gast.stmt], facts: dict[str, Fact]) -> dict[str, Fact]:
        for s in stmts:
            facts = self._statement(s, facts)
        return facts

    def _statement(self, s: gast.stmt, facts: dict[str, Fact]) -> dict[str, Fact]:
        if isinstance(s, gast.FunctionDef):
            return _forget(facts, {s.name})
        if isinstance(s, gast.For | gast.While | gast.If | gast.Try | gast.With):
            return self._compound(s, facts)
        for node in gast.walk(s):
            if isinstance(node, gast.Subscript):
                self._judge(node, facts)
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            fact = self._value(s.value, facts)
            facts = _forget(facts, {name})
            if fact is not None:
                facts[name] = fact
            return facts
        return _forget(facts, bound_names([s]))

    def _compound(self, s: gast.stmt, facts: dict[str, Fact]) -> dict[str, Fact]:
        bound = bound_names([s])
        inside = _forget(facts, bound)
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            loop = self._loop_range(s.iter, facts)
            if loop is not None and not _mentions(loop) & bound:
                inside[s.target.id] = loop
        for field in ("body", "orelse", "handlers", "finalbody"):
            part = getattr(s, field, None)
            if isinstance(part, list) and part and isinstance(part[0], gast.stmt):
                self._block(part, dict(inside if field == "body" else _forget(facts, bound)))
        return inside if not isinstance(s, gast.For) else _forget(inside, {s.target.id})

    def _loop_range(self, node: gast.expr, facts: dict[str, Fact]) -> Interval | None:
        """The values ``range(...)`` gives, when its step is a positive or negative
        constant."""
        if not (isinstance(node, gast.Call) and callee_of(node) is range and not node.keywords
                and 1 <= len(node.args) <= 3):
            return None
        args = [self._interval(a, facts) for a in node.args]
        if any(a is None for a in args):
            return None
        start, stop = (Interval(Bound(None, 0), Bound(None, 0)), args[0]) \
            if len(args) == 1 else (args[0], args[1])
        step = args[2] if len(args) == 3 else Interval(Bound(None, 1), Bound(None, 1))
        if step.low != step.high or step.low is None or step.low.size is not None:
            return None
        one = Bound(None, 1)
        if step.low.offset > 0:
            high = stop.high.minus(one) if stop.high is not None else None
            return Interval(start.low, high)
        if step.low.offset < 0:
            low = stop.low.plus(one) if stop.low is not None else None
            return Interval(low, start.high)
        return None

    # ---- values -----------------------------------------------------------------------
    def _value(self, node: gast.expr, facts: dict[str, Fact]) -> Fact | None:
        """What an assigned value is known to be."""
        if isinstance(node, gast.Tuple):
            return Shape(tuple(_single(self._interval(e, facts)) for e in node.elts))
        if isinstance(node, gast.Call):
            return self._call(node, facts)
        if isinstance(node, gast.Name) and isinstance(facts.get(node.id), Shape | ShapeOf):
            return facts[node.id]
        if isinstance(node, gast.Name) and isinstance(self.kinds.get(node.id), ArrayKind):
            return self._shape(node.id, facts)  # y = x: x's shape, in x's sizes
        return self._interval(node, facts)

    def _call(self, node: gast.Call, facts: dict[str, Fact]) -> Fact | None:
        callee = callee_of(node)
        first = node.args[0] if node.args else None
        if not isinstance(first, gast.Name):
            return None
        if callee is np.shape:
            return ShapeOf(first.id)
        if callee is len and isinstance(self.kinds.get(first.id), ArrayKind):
            return _exact(self._size(first.id, 0, facts))
        if callee in _SAME_SHAPE and isinstance(self.kinds.get(first.id), ArrayKind):
            return self._shape(first.id, facts)
        if callee in _SHAPED and not isinstance(self.kinds.get(first.id), ArrayKind):
            dims = facts.get(first.id)  # (np.zeros(counts) takes its shape from its values)
            if isinstance(dims, Shape):
                return dims
            if isinstance(dims, Interval):
                return Shape((_single(dims),))
        return None

    def _interval(self, node: gast.expr, facts: dict[str, Fact]) -> Interval | None:
        """The interval of an int atom or of ``a + b``, ``a - b``, ``s[k]``."""
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return _exact(Bound(None, node.value))
        if isinstance(node, gast.Name):
            fact = facts.get(node.id)
            return fact if isinstance(fact, Interval) else None
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add | gast.Sub):
            left, right = self._interval(node.left, facts), self._interval(node.right, facts)
            if left is None or right is None:
                return None
            if isinstance(node.op, gast.Add):
                return Interval(_both(Bound.plus, left.low, right.low),
                                _both(Bound.plus, left.high, right.high))
            return Interval(_both(Bound.minus, left.low, right.high),
                            _both(Bound.minus, left.high, right.low))
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                isinstance(node.slice, gast.Constant) and type(node.slice.value) is int:
            shape = self._shape_fact(node.value.id, facts)
            k = node.slice.value
            if shape is not None and 0 <= k < len(shape.dims):
                return _exact(shape.dims[k])
        return None

    def _shape_fact(self, name: str, facts: dict[str, Fact]) -> Shape | None:
        """The ints the tuple ``name`` holds (an array's ``Shape`` is its shape, not
        its items: ``counts[0]`` is no size)."""
        fact = facts.get(name)
        if isinstance(fact, ShapeOf):
            return self._shape(fact.array, facts)
        if isinstance(self.kinds.get(name), ArrayKind):
            return None
        return fact if isinstance(fact, Shape) else None

    def _shape(self, array: str, facts: dict[str, Fact]) -> Shape | None:
        """The shape of ``array``: as it was made, or a size of its own per axis."""
        fact = facts.get(array)
        if isinstance(fact, Shape):
            return fact
        kind = self.kinds.get(array)
        if not isinstance(kind, ArrayKind) or kind.ndim is None:
            return None
        return Shape(tuple(Bound((array, k), 0) for k in range(kind.ndim)))

    def _size(self, array: str, axis: int, facts: dict[str, Fact]) -> Bound | None:
        shape = self._shape(array, facts)
        return shape.dims[axis] if shape is not None and axis < len(shape.dims) else None

    # ---- judging indices ----------------------------------------------------------------
    def _judge(self, node: gast.Subscript, facts: dict[str, Fact]) -> None:
        if not (isinstance(node.value, gast.Name) and
                isinstance(self.kinds.get(node.value.id), ArrayKind)):
            return
        for axis, part in integer_parts(node, self.kinds):
            index = self._interval(part, facts)
            size = self._size(node.value.id, axis, facts) if axis >= 0 else None
            if index is not None and size is not None and _within(index, size):
                self.proven.add((id(node), axis))


def integer_parts(node: gast.Subscript, kinds: dict[str, Kind]) -> list[tuple[int, gast.expr]]:
    """(axis, part) of each int or int-array part of the index of ``node`` (an array
    read or written); after ``...`` axes count from the end (-1: the last).  Boolean
    parts are left out, and an index whose axes cannot be told has none, as has a part
    past the array's last axis."""
    parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    ndim = getattr(kinds.get(node.value.id), "ndim", None)
    found, axis, ellipsis_at = [], 0, None
    for position, part in enumerate(parts):
        if isinstance(part, gast.Constant) and part.value is Ellipsis:
            ellipsis_at = position
            break
        step = _axes_taken(part, kinds)
        if step is None:
            return []
        if step and _integer(part, kinds):
            found.append((axis, part))
        axis += step
    if ellipsis_at is not None:
        axis = 0
        for part in reversed(parts[ellipsis_at + 1:]):
            step = _axes_taken(part, kinds)
            if step is None:
                return []
            axis -= step
            if step and _integer(part, kinds):
                found.append((axis if ndim is None else axis + ndim, part))
    # more parts than axes: NumPy and Numba refuse the index itself
    return [(a, p) for a, p in found if ndim is None or -ndim <= a < ndim]


def _axes_taken(part: gast.expr, kinds: dict[str, Kind]) -> int | None:
    """How many axes of the indexed array ``part`` stands for (None: not known)."""
    if isinstance(part, gast.Slice):
        return 1
    if isinstance(part, gast.Constant):
        if part.value is None or isinstance(part.value, bool):
            return 0
        return 1 if isinstance(part.value, int) else None
    kind = kinds.get(part.id) if isinstance(part, gast.Name) else None
    if kind == "int":
        return 1
    if kind == "bool":
        return 0
    if isinstance(kind, ArrayKind) and not kind.floating:
        return kind.ndim if kind.boolean else 1
    return None


def _integer(part: gast.expr, kinds: dict[str, Kind]) -> bool:
    if isinstance(part, gast.Constant):
        return type(part.value) is int
    kind = kinds.get(part.id) if isinstance(part, gast.Name) else None
    return kind == "int" or (isinstance(kind, ArrayKind) and not kind.floating
                             and not kind.boolean)


def _within(index: Interval, size: Bound) -> bool:
    """Whether ``index`` lies in ``[0, size)``."""
    low, high = index.low, index.high
    if low is None or high is None or low.offset < 0:
        return False  # a size plus a non-negative constant is non-negative
    return (high.size is None or high.size == size.size) and high.offset < size.offset


def _both(op, a: Bound | None, b: Bound | None) -> Bound | None:
    return None if a is None or b is None else op(a, b)


def _single(interval: Interval | None) -> Bound | None:
    """The one value of an exact interval."""
    return interval.low if interval is not None and interval.low == interval.high else None


def _mentions(fact: Fact) -> set[str]:
    """The names a fact depends on (bound again, the fact no longer holds)."""
    if isinstance(fact, ShapeOf):
        return {fact.array}
    bounds = (fact.low, fact.high) if isinstance(fact, Interval) else fact.dims
    return {b.size[0] for b in bounds if b is not None and b.size is not None}


def _forget(facts: dict[str, Fact], names: set[str]) -> dict[str, Fact]:
    """``facts`` without those about or mentioning ``names``."""
    if not names:
        return dict(facts)
    return {n: f for n, f in facts.items() if n not in names and not _mentions(f) & names}


def bound_names(stmts: list[gast.stmt]) -> set[str]:
    """Every name bound anywhere in ``stmts`` (nested blocks included)."""
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Del)} | \
        {s.name for s in stmts for s in gast.walk(s) if isinstance(s, gast.FunctionDef)}


