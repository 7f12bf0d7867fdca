"""Indices that do not change in a loop, or step with its range, for the bounds
checks (:mod:`s2s_ad.compiler.bounds_checks`): such an index can be checked once,
before the loop, for every iteration.

Following a function in order, a name bound to an int may be known as

* :class:`Invariant`: the same ``expr`` in every iteration of an enclosing loop
  (``h = 2 * layer`` in the ``j`` loop inside the ``layer`` loop; ``h_add_1 = h + 1``
  bound in the ``j`` loop too), where ``expr`` reads int constants and names bound
  before that loop and not in it;
* :class:`Step`: a range loop's variable plus such an invariant offset
  (``b_add_j = b + j``, ``i_add_1 = i + 1``).

A fact lasts until its name is bound again (the caller forgets it); a name bound
in a loop starts each iteration with no fact, so the facts inside a loop are
those of the statements run in the iteration before the use.

>>> import gast
>>> loops = (Loop(gast.parse("for layer in range(2): pass").body[0], frozenset({"layer", "h"}),
...               frozenset({"b", "layer_count"})),)
>>> kinds = {"b": "int", "layer": "int", "h": "int", "j": "int"}
>>> facts = {"j": Step(0, gast.Constant(0, None))}
>>> fact = value_of(gast.parse("b + j").body[0].value, facts, loops, kinds)
>>> fact.loop, gast.unparse(fact.offset)
(0, 'b')
>>> value_of(gast.parse("h").body[0].value, facts, loops, kinds) is None  # bound in the loop
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gast

from s2s_ad.compiler.syntax.builders import binop, const

_OPS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul"}


@dataclass(frozen=True)
class Loop:
    """An enclosing loop: the names it binds, and those surely bound before it."""

    node: gast.stmt
    binds: frozenset[str]
    defined: frozenset[str]


@dataclass(frozen=True)
class Invariant:
    """An int that is ``expr`` in every iteration of ``loops[loop]`` (and of the
    loops inside it)."""

    loop: int
    expr: gast.expr


@dataclass(frozen=True)
class Step:
    """``i + offset``: ``i`` the variable of the range loop ``loops[loop]`` (never
    bound in its body), ``offset`` an int expression invariant in that loop."""

    loop: int
    offset: gast.expr


Fact = Invariant | Step


def value_of(node: gast.expr, facts: dict[str, Fact], loops: tuple[Loop, ...],
             kinds: dict) -> Fact | None:
    """What the int ``node`` (an atom, or ``a + b``, ``a - b``, ``a * b`` of atoms)
    is known to be where ``facts`` and ``loops`` hold; None: nothing."""
    if isinstance(node, gast.Constant):
        return Invariant(0, const(node.value)) if type(node.value) is int else None
    if isinstance(node, gast.Name):
        if node.id in facts:
            return facts[node.id]
        return _outside(node.id, loops) if kinds.get(node.id) == "int" else None
    if isinstance(node, gast.BinOp) and type(node.op) in _OPS:
        left, right = (value_of(part, facts, loops, kinds) if isinstance(
            part, gast.Name | gast.Constant) else None for part in (node.left, node.right))
        return None if left is None or right is None else _combine(node.op, left, right)
    return None


def _outside(name: str, loops: tuple[Loop, ...]) -> Invariant | None:
    """``name`` as an invariant of the outermost run of innermost loops that do not
    bind it and that it is bound before."""
    reached = len(loops)
    for position in range(len(loops) - 1, -1, -1):
        if name in loops[position].binds or name not in loops[position].defined:
            break
        reached = position
    return Invariant(reached, gast.Name(name, gast.Load(), None, None)) \
        if reached < len(loops) else None


def _combine(op: gast.operator, left: Fact, right: Fact) -> Fact | None:
    """``left op right``."""
    if isinstance(left, Invariant) and isinstance(right, Invariant):
        return Invariant(max(left.loop, right.loop), binop(left.expr, op, right.expr))
    if isinstance(op, gast.Mult):
        return None
    if isinstance(right, Invariant) and isinstance(left, Step) and right.loop <= left.loop:
        return Step(left.loop, _plus(left.offset, op, right.expr))
    if isinstance(op, gast.Add) and isinstance(left, Invariant) and isinstance(right, Step) \
            and left.loop <= right.loop:
        return Step(right.loop, _plus(right.offset, op, left.expr))
    return None


def _plus(offset: gast.expr, op: gast.operator, more: gast.expr) -> gast.expr:
    """``offset op more``, without a zero ``offset``."""
    if isinstance(offset, gast.Constant) and offset.value == 0:
        return more if isinstance(op, gast.Add) else \
            gast.UnaryOp(gast.USub(), more) if not isinstance(more, gast.Constant) \
            else const(-more.value)
    if isinstance(offset, gast.Constant) and isinstance(more, gast.Constant):
        return const(offset.value + more.value if isinstance(op, gast.Add)
                     else offset.value - more.value)
    return binop(offset, op, more)


def as_atom(expr: gast.expr, emit: Callable[[str, gast.expr], str]) -> gast.expr:
    """``expr`` as a name or a constant: each operation of it assigned to a new name
    by ``emit(stem, value)`` (which returns the name), inner ones first."""
    if isinstance(expr, gast.Constant):
        return const(expr.value)
    if isinstance(expr, gast.Name):
        return gast.Name(expr.id, gast.Load(), None, None)
    if isinstance(expr, gast.UnaryOp):
        operand = as_atom(expr.operand, emit)
        return gast.Name(emit(f"neg_{stem_of(expr.operand)}",
                              gast.UnaryOp(gast.USub(), operand)), gast.Load(), None, None)
    value = binop(as_atom(expr.left, emit), expr.op, as_atom(expr.right, emit))
    return gast.Name(emit(stem_of(expr), value), gast.Load(), None, None)


def stem_of(expr: gast.expr) -> str:
    """A name for ``expr`` as the ANF stage would give it (``h_add_1``, ``2_mul_b``)."""
    if isinstance(expr, gast.Name):
        return expr.id
    if isinstance(expr, gast.Constant):
        return str(expr.value).replace("-", "minus_")
    if isinstance(expr, gast.UnaryOp):
        return f"neg_{stem_of(expr.operand)}"
    return f"{stem_of(expr.left)}_{_OPS[type(expr.op)]}_{stem_of(expr.right)}"


def key_of(expr: gast.expr) -> str:
    """``expr`` as a key (equal expressions, equal keys)."""
    return gast.dump(expr)
