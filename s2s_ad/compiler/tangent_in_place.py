"""The tangent stage, part: runtime helpers called for their effect.

Gradient code adds into a cotangent in place: ``rt.scatter_add(d_x, index, g)`` is
``d_x[index] += g`` with repeated positions adding up.  Such a helper is linear in
the array it writes and the operand it adds (``IN_PLACE`` in
``rules/runtime_rules.py``), together, so its tangent is the same call on their
tangents, into the written array's tangent::

    rt.scatter_add(d_x, index, g)
    rt.scatter_add(t_d_x, index, t_g)

The activity analysis reads the call as an assignment to the written array, which
is then varied when an operand is (its tangent starts at zero where it is made).
A list helper called for its effect alone (``rt.list_pop(d_items, n, zero)``, a
cotangent popped and dropped) takes the same step on the tangent list.  Any other
runtime helper that writes into an operand through which a tangent flows is refused
with its location.
"""

from __future__ import annotations

import copy
from typing import Any

import gast

from s2s_ad.compiler.primitives import RUNTIME, is_library
from s2s_ad.compiler.syntax.annotations import callee_of, set_line
from s2s_ad.compiler.syntax.builders import load
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.rules.registry import lookup
from s2s_ad.rules.runtime_rules import CHANGES_FIRST, IN_PLACE, JOINTLY_LINEAR_IN

TangentPass = Any  # s2s_ad.compiler.tangent.TangentPass (which imports this module)


def effect_tangent(tp: TangentPass, s: gast.Expr) -> list[gast.stmt]:
    """The tangent statements of the call statement ``s`` (none when nothing it writes
    carries a tangent)."""
    callee = callee_of(s.value) if isinstance(s.value, gast.Call) else None
    if callee in IN_PLACE:
        return _repeated_on_tangents(tp, s, callee)
    if callee in CHANGES_FIRST:
        return _list_step(tp, s, callee)
    _refuse_writes(tp, s, callee)
    return []


def _list_step(tp: TangentPass, s: gast.Expr, callee) -> list[gast.stmt]:
    """``rt.list_pop(d_items, n, zero)`` for its effect (a cotangent taken off a list
    and dropped): the tangent list takes the same step, so its items stay beside the
    list's (a zero for a linear operand without a tangent)."""
    params, linear, _ = JOINTLY_LINEAR_IN[callee]
    args = s.value.args
    if not tp.carries(args[0]):
        return []
    node = copy.deepcopy(s)
    for i, param in enumerate(params):
        if param in linear:
            node.value.args[i] = load(tp.tangent(args[i].id)) if tp.carries(args[i]) \
                else tp.zero_like(args[i], tp.cx.kind(args[i]))
    set_line(node, tp.line)
    return tp.header() + [node]


def _repeated_on_tangents(tp: TangentPass, s: gast.Expr, callee) -> list[gast.stmt]:
    params, added = IN_PLACE[callee]
    args = s.value.args
    written, position = args[0], params.index(added)
    if not (tp.carries(written) and tp.carries(args[position])):
        return []  # nothing is added into the written array's tangent
    node = copy.deepcopy(s)
    node.value.args[0] = load(tp.tangent(written.id))
    node.value.args[position] = load(tp.tangent(args[position].id))
    set_line(node, tp.line)
    return tp.header() + [node]


def _refuse_writes(tp: TangentPass, s: gast.Expr, callee) -> None:
    """A runtime helper called for its effect (``rt.add_in_place(view, c)`` in
    gradient code) writes into an operand: refused when a tangent flows into it."""
    if not (callee is not None and is_library(callee) and
            not lookup(callee, len(s.value.args)) and
            (getattr(callee, "__module__", None) or "").startswith(RUNTIME)):
        return
    if any(tp.carries(a) for a in s.value.args):
        raise NonDifferentiableError(
            f"forward mode: {callee.__name__} writes into its argument (gradient code "
            "adding into a slice of a cotangent), which is not supported yet",
            tp.location(s), "differentiate the slices' sum in one piece, or use "
            "ad.hessian on the whole array")
