"""The reverse stages, part: growing lists.

A list's cotangent ``d_items`` is a list of its items' cotangents, possibly
shorter than the list (the items past its end have none yet).  The forward
pass saves the length before each append; the pullback pops the appended
item's cotangent at that position (``rt.list_pop``), adds into an item read
(``rt.list_add_at``) and into every item of ``np.array(items)``
(``rt.list_add_rows``).  A join of the items (``np.concatenate``, ``np.hstack``,
``np.vstack`` of the list) gives each item its piece of the cotangent
(``rt.list_add_pieces``), the pieces' lengths saved by the forward pass, or one row
each where the join promotes the items (numbers, the rows of ``np.vstack``).  The
list itself is never saved: its cotangent needs no value of it.

``append_item``, ``as_array`` and ``join_items`` are the reverse steps of the rules of
``rt.appended``, ``rt.list_array`` and the joins (``@reverse_pass`` puts each on its
rule).
"""

from __future__ import annotations

import gast

from s2s_ad import runtime
from s2s_ad.compiler.primitives import Primitive
from s2s_ad.compiler.reverse import arrays, calls, saving
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.annotations import set_line
from s2s_ad.compiler.syntax.builders import assign, call, const, expr_stmt, load, zero
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, ListKind, carries_derivative
from s2s_ad.rules.registry import reverse_pass


def item_zero(kind: ListKind) -> gast.expr:
    """The zero cotangent of one item (an empty array for arrays: "none yet")."""
    return zero(kind.element) if isinstance(kind.element, ArrayKind) else zero("float")


@reverse_pass(runtime.appended)
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


@reverse_pass(runtime.list_array)
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


def _joining_axis(prim: Primitive, element) -> tuple[int, bool]:
    """(the axis a join of items of kind ``element`` joins along, whether it promotes
    each item to one row of the result: ``np.hstack`` of numbers, ``np.vstack`` of
    numbers and 1-d arrays)."""
    ndim = element.ndim if isinstance(element, ArrayKind) else 0
    if prim.callee is runtime.list_concatenate:
        axis = prim.operands[1].value
        return (axis + ndim if axis < 0 else axis), False
    if prim.callee is runtime.list_hstack:
        return (0 if ndim <= 1 else 1), ndim == 0
    return 0, ndim <= 1


def _rows_of(prim: Primitive, element, g: gast.expr) -> gast.expr:
    """The cotangent of a promoting join as one row per item (a column's entries for
    ``np.vstack`` of numbers)."""
    if prim.callee is runtime.list_vstack and not isinstance(element, ArrayKind):
        return call("rt.index_axis", g, const(1), const(0))
    return g


def join_items(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``a = rt.list_concatenate(items, axis)`` (``list_hstack``, ``list_vstack``): each
    item's piece of ``d_a`` goes to its cotangent, the pieces' lengths saved (items may
    differ in length along the axis)."""
    items = prim.operands[0]
    kind = cx.kinds[items.id]
    fwd: list[gast.stmt] = [calls.primal_stmt(cx, s)]
    pops: list[gast.stmt] = []
    head, g = cx.grad_source(target, prim)
    body: list[gast.stmt] = []
    if cx.active(items):
        if isinstance(kind.element, ArrayKind) and kind.element.ndim is None:
            raise NonDifferentiableError("the number of dimensions of the list's items is "
                                         "not known here", cx.norm.parsed.location(s))
        axis, promoted = _joining_axis(prim, kind.element)
        d_items = load(cx.adj(items.id))
        if promoted:
            added = call("rt.list_add_rows", d_items, _rows_of(prim, kind.element, g),
                         item_zero(kind))
        else:
            extents = cx.namer.fresh(f"{items.id}_extents")
            cx.kinds[extents] = ArrayKind(1, floating=False)
            fwd.insert(0, assign(extents, call("rt.list_extents", load(items.id),
                                               const(axis)), cx.line))
            saves, pops, saved = saving.save(cx, load(extents), where)
            fwd[1:1] = saves
            added = call("rt.list_add_pieces", d_items, g, saved, const(axis), item_zero(kind))
        body = [assign(d_items.id, added, cx.line)]
    rev = [cx.header()] + pops + head + arrays.guard(cx, target, g, body) + cx.reset(target, prim)
    return fwd, rev


for _join in (runtime.list_concatenate, runtime.list_hstack, runtime.list_vstack):
    reverse_pass(_join)(join_items)
