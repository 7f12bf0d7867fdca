"""Integers that can grow without bound, which compiled code would overflow.

A Python int never overflows; Numba computes ints in int64 and silently wraps
around (``10 ** 25`` becomes 7766279631452241920).  ``linking`` keeps a
function in Python when :func:`growing_int` finds, in its normalized (ANF)
body and the kinds of its variables, an int value that can grow past any
bound:

* a loop-carried int updated by ``*``, ``**`` or ``<<``
  (``for i in range(25): k = k * 10``), or added to itself (``k += k``, and
  Fibonacci's ``a, b = b, a + b``);
* ``a ** b`` where neither the int base nor the int exponent is a constant.

Not growing, so Numba still compiles them: loop counters, index and size
arithmetic (``i * n + j``, ``len(x) * 2``: nothing carried around a loop),
sums of a carried value and other values (``count += 1``, ``s += t``),
products with the constants 0, 1 and -1, and values reduced modulo something
(``h = (h * 31 + c) % m``).  A growing value bounded only by a ``while`` test
(``while k < n: k *= 2``), or a product of sizes in a loop, is still
reported: keeping it in Python is slower, never wrong.

How: one walk over the function visits every loop.  Within a loop, each int
assignment ``t = <op>`` makes edges from the names ``<op>`` reads (that the
loop assigns) to ``t``; a cycle of this graph through a name the loop body
reads before assigning it is a value carried around the loop, and an
operation on the cycle that multiplies (or doubles) it makes it grow.

>>> from s2s_ad.compiler.transforms import transform
>>> from s2s_ad.kinds import ArrayKind
>>> def powers(x):
...     k = 1
...     for i in range(25):
...         k = k * 10
...     return x * k
>>> t = transform(powers, ["float"], [0])
>>> growing_int(t.normal.node, t.kinds)
Growth(lineno=4, col=13, message="'k', carried around a loop, is multiplied in every iteration")
>>> def index_arithmetic(x):
...     n = len(x)
...     s = 0.0
...     for i in range(n):
...         for j in range(n):
...             s += x[(i * n + j) % n] * (i * j)
...     return s
>>> t = transform(index_arithmetic, [ArrayKind(1)], [0])
>>> print(growing_int(t.normal.node, t.kinds))
None
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from s2s_ad.compiler.syntax.annotations import line_of
from s2s_ad.compiler.syntax.builders import loaded_names
from s2s_ad.kinds import Kind

# (operator, side of the operand not carried) -> the constants there that keep it bounded
_BOUNDED_BY = {(gast.Mult, "left"): (0, 1, -1), (gast.Mult, "right"): (0, 1, -1),
               (gast.Pow, "left"): (0, 1, -1), (gast.Pow, "right"): (0, 1),
               (gast.LShift, "left"): (0,), (gast.LShift, "right"): (0,)}


@dataclass(frozen=True)
class Growth:
    """Where an int can grow without bound: 1-based line and column, and why."""

    lineno: int
    col: int
    message: str


def growing_int(fdef: gast.FunctionDef, kinds: dict[str, Kind]) -> Growth | None:
    """The first place (in source order) of ``fdef``, a normalized function, where an
    int value can grow without bound, or None (see the module docstring)."""
    ints = {name for name, kind in kinds.items() if kind == "int"}
    found = []
    for node in gast.walk(fdef):
        if isinstance(node, gast.For | gast.While):
            found += _carried_growth(node, ints)
        elif isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow) and all(
                isinstance(side, gast.Name) and side.id in ints
                for side in (node.left, node.right)):
            found.append(_growth(node, node, f"'{node.left.id} ** {node.right.id}' raises "
                                 "an int to an int power that is not a constant"))
    return min(found, key=lambda g: (g.lineno, g.col)) if found else None


def _growth(op: gast.AST, stmt: gast.stmt, message: str) -> Growth:
    line = getattr(op, "lineno", None) or line_of(stmt) or 0
    return Growth(line, getattr(op, "col_offset", 0) + 1, message)


def _assignments(stmts: list[gast.stmt]) -> list[gast.Assign]:
    """Every ``name = <op>`` in ``stmts``, nested blocks included."""
    return [s for stmt in stmts for s in gast.walk(stmt) if isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)]


# ---- values carried around a loop ------------------------------------------------------
def _carried_growth(loop: gast.For | gast.While, ints: set[str]) -> list[Growth]:
    """Int assignments in ``loop`` that multiply (or double) a value carried around it."""
    assigns = [s for s in _assignments(loop.body) if s.targets[0].id in ints]
    assigned = {s.targets[0].id for s in assigns}
    feeds: dict[str, set[str]] = {name: set() for name in assigned}
    for s in assigns:
        for name in _inputs(s.value) & assigned:
            feeds[name].add(s.targets[0].id)
    carried = _read_before_assigned(loop.body, set())
    found = []
    for s in assigns:
        target, op = s.targets[0].id, s.value
        cycle = _cycle_through(target, feeds)
        if not cycle & carried or not isinstance(op, gast.BinOp):
            continue
        left, right = (_on(side, cycle) for side in (op.left, op.right))
        if not (left or right):
            continue
        names = sorted(cycle & carried)
        what = " and ".join(f"'{n}'" for n in names) + ", carried around a loop, " + (
            "is" if len(names) == 1 else "are")
        side, other = ("right", op.right) if left else ("left", op.left)
        bounded_by = _BOUNDED_BY.get((type(op.op), side))
        if bounded_by is not None:
            if not (isinstance(other, gast.Constant) and other.value in bounded_by):
                found.append(_growth(op, s, f"{what} multiplied in every iteration"))
        elif isinstance(op.op, gast.Add) and left and right:
            together = "to itself" if len(names) == 1 else "together"
            found.append(_growth(op, s, f"{what} added {together} in every iteration"))
    return found


def _inputs(value: gast.expr) -> set[str]:
    """The names a value grows with: ``a % m`` is bounded by ``m``, not ``a``."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mod):
        return set(loaded_names(value.right))
    return set(loaded_names(value))


def _on(side: gast.expr, cycle: set[str]) -> bool:
    return isinstance(side, gast.Name) and side.id in cycle


def _cycle_through(start: str, feeds: dict[str, set[str]]) -> set[str]:
    """The names on a cycle through ``start`` (empty if there is none)."""
    reach = _reachable(start, feeds)
    if start not in reach:
        return set()
    return {name for name in reach if start in _reachable(name, feeds)}


def _reachable(start: str, feeds: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(feeds[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += feeds[name]
    return seen


def _read_before_assigned(stmts: list[gast.stmt], assigned: set[str]) -> set[str]:
    """Names read in ``stmts`` before every path assigns them: the values an iteration
    receives from the one before."""
    assigned = set(assigned)
    read: set[str] = set()
    for s in stmts:
        if isinstance(s, gast.If):
            read |= set(loaded_names(s.test)) - assigned
            read |= _read_before_assigned(s.body, assigned)
            read |= _read_before_assigned(s.orelse, assigned)
        elif isinstance(s, gast.For | gast.While):
            header = s.iter if isinstance(s, gast.For) else s.test
            read |= set(loaded_names(header)) - assigned
            read |= _read_before_assigned(s.body, assigned)
        else:
            read |= set(loaded_names(s)) - assigned
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                assigned.add(s.targets[0].id)
    return read
