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

Before the loop, a flag says such an index is in range in every iteration (all
of a loop's such flags joined in one); in the loop, the check runs only when the
flag is false, so an index out of range still raises in the iteration that uses
it, with the same message.

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

import copy
from collections.abc import Callable
from dataclasses import dataclass

import gast

from s2s_ad import runtime
from s2s_ad.compiler.syntax.annotations import callee_of, set_callee
from s2s_ad.compiler.syntax.builders import binop, call, const, load, unary

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


def value_key(index: gast.expr, facts: dict[str, Fact], loops: tuple[Loop, ...],
              kinds: dict) -> tuple | None:
    """The value of ``index`` in the innermost loop as a check's key ``("value", ...,
    names it reads)`` (equal values, equal keys), when known there; else None."""
    fact = value_of(index, facts, loops, kinds)
    if fact is None or fact.loop >= len(loops):
        return None
    what = fact.offset if isinstance(fact, Step) else fact.expr
    return ("value", key_of(what), type(fact).__name__, fact.loop,
            frozenset(n.id for n in gast.walk(what) if isinstance(n, gast.Name)))


def outermost(name: str, loops: tuple[Loop, ...]) -> int:
    """The outermost of the innermost ``loops`` that do not bind ``name`` and that it
    is bound before (``len(loops)``: not the innermost)."""
    reached = len(loops)
    for position in range(len(loops) - 1, -1, -1):
        if name in loops[position].binds or name not in loops[position].defined:
            break
        reached = position
    return reached


def _outside(name: str, loops: tuple[Loop, ...]) -> Invariant | None:
    """``name``, bound before and not in the innermost loops, as their invariant."""
    reached = outermost(name, loops)
    return Invariant(reached, load(name)) \
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
            unary(gast.USub(), more) if not isinstance(more, gast.Constant) \
            else const(-more.value)
    if isinstance(offset, gast.Constant) and isinstance(more, gast.Constant):
        return const(offset.value + more.value if isinstance(op, gast.Add)
                     else offset.value - more.value)
    return binop(offset, op, more)


def flag_value(fact: Fact, loop: gast.stmt, array: str, axis: int, shape: gast.expr,
               emit: Callable[[str, gast.expr], str]) -> tuple[str, gast.Call]:
    """``(stem, value)`` of the flag computed before ``loop`` that says the index
    ``fact`` stands for is in range for ``shape[axis]`` (the shape of ``array``) in
    every iteration: ``rt.range_in_bounds(shape, axis, start, stop, step, offset)``
    of a :class:`Step`, ``rt.index_in_bounds(shape, axis, index)`` of an
    :class:`Invariant`; ``emit`` (see :func:`as_atom`) computes the offset or index."""
    if isinstance(fact, Step):
        value = call("rt.range_in_bounds", shape, const(axis), *range_args(loop),
                     as_atom(fact.offset, emit))
        set_callee(value, runtime.range_in_bounds)
        return f"{loop.target.id}_in_{array}", value
    value = call("rt.index_in_bounds", shape, const(axis), as_atom(fact.expr, emit))
    set_callee(value, runtime.index_in_bounds)
    constant = isinstance(fact.expr, gast.Constant)
    return f"{'index_' if constant else ''}{stem_of(fact.expr)}_in_{array}", value


def range_args(loop: gast.For) -> tuple[gast.expr, gast.expr, gast.expr] | None:
    """``(start, stop, step)`` of ``for i in range(...)`` (copies), or None."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and callee_of(it) is range and not it.keywords
            and 1 <= len(it.args) <= 3):
        return None
    args = [copy.copy(a) for a in it.args]
    if len(args) == 1:
        args = [const(0)] + args
    return (args[0], args[1], args[2] if len(args) == 3 else const(1))


def as_atom(expr: gast.expr, emit: Callable[[str, gast.expr], str]) -> gast.expr:
    """``expr`` as a name or a constant: each operation of it assigned to a new name
    by ``emit(stem, value)`` (which returns the name), inner ones first."""
    if isinstance(expr, gast.Constant):
        return const(expr.value)
    if isinstance(expr, gast.Name):
        return load(expr.id)
    if isinstance(expr, gast.UnaryOp):
        operand = as_atom(expr.operand, emit)
        return load(emit(f"neg_{stem_of(expr.operand)}", unary(gast.USub(), operand)))
    value = binop(as_atom(expr.left, emit), expr.op, as_atom(expr.right, emit))
    return load(emit(stem_of(expr), value))


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
