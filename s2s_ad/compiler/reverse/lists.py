"""Stage 5 (reverse), part: growing lists.

A list's cotangent ``d_items`` is a list of its items' cotangents, possibly
shorter than the list (the items past its end have none yet).  The forward
pass saves the length before each append; the pullback pops the appended
item's cotangent at that position (``rt.list_pop``), adds into an item read
(``rt.list_add_at``) and into every item of ``np.array(items)``
(``rt.list_add_rows``).  The list itself is never saved: its cotangent needs
no value of it.
"""

from __future__ import annotations

import gast

from s2s_ad.compiler.primitives import Primitive
from s2s_ad.compiler.reverse import arrays, calls, saving
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.annotations import set_line
from s2s_ad.compiler.syntax.builders import assign, call, expr_stmt, load, zero
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, ListKind, carries_derivative


def item_zero(kind: ListKind) -> gast.expr:
    """The zero cotangent of one item (an empty array for arrays: "none yet")."""
    return zero(kind.element) if isinstance(kind.element, ArrayKind) else zero("float")


def append_item(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``items = rt.appended(items, v)``: forward ``items.append(v)`` after saving the
    length; the pullback pops the item's cotangent into ``d_v``."""
    items, value = prim.operands
    kind = cx.kinds[target]
    if not (kind.element in NUMERIC or isinstance(kind.element, ArrayKind)):
        raise NonDifferentiableError(
            f"a list of {kind.element} values is not supported",
            cx.norm.parsed.location(s), "append numbers or arrays of one shape")
    length = cx.namer.fresh(f"{target}_len")
    cx.kinds[length] = "int"
    fwd = [assign(length, call("len", load(items.id)), cx.line)]
    saves, pops, position = saving.save(cx, load(length), where)
    fwd += saves + [calls.primal_stmt(cx, s)]
    popped = call("rt.list_pop", load(cx.adj(target)), position, item_zero(kind))
    if cx.active(value) and carries_derivative(cx.kind(value)):
        back = cx.accumulate(value.id, cx.kind(value), popped)
    else:  # nothing to pass on, but the item's cotangent must go
        back = [expr_stmt(popped)]
        set_line(back[0], cx.line)
    return fwd, [cx.header()] + pops + back


def read_item(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``y = items[position]``: the pullback adds ``d_y`` into that item's cotangent."""
    base = prim.operands[0]
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    head, g = cx.grad_source(target, prim)
    body: list[gast.stmt] = []
    if cx.active(base):
        position = arrays.index_reads(cx, s.value.slice, where, fwd, pops)
        d_items = cx.adj(base.id)
        body = [assign(d_items, call("rt.list_add_at", load(d_items), position, g,
                                     item_zero(cx.kinds[base.id])), cx.line)]
    rev = [cx.header()] + pops + head + arrays.guard(cx, target, g, body)
    return fwd + [s], rev + cx.reset(target, prim)


def as_array(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``a = rt.list_array(items)``: each row of ``d_a`` goes to its item."""
    items = prim.operands[0]
    head, g = cx.grad_source(target, prim)
    body: list[gast.stmt] = []
    if cx.active(items):
        d_items = cx.adj(items.id)
        body = [assign(d_items, call("rt.list_add_rows", load(d_items), g,
                                     item_zero(cx.kinds[items.id])), cx.line)]
    rev = [cx.header()] + head + arrays.guard(cx, target, g, body) + cx.reset(target, prim)
    return [calls.primal_stmt(cx, s)], rev
