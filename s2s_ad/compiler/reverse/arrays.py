"""The reverse stages, part: arrays.

Rule specialisation (constant axis, ndims), broadcasting back to operand
shapes, guards for empty (not yet set) array cotangents, and item reads and
writes: a write saves the overwritten value and the pullback restores it.
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from s2s_ad.compiler.primitives import Primitive
from s2s_ad.compiler.reverse import saving
from s2s_ad.compiler.reverse.aliasing import aliases_at, definitions, is_view, sharing
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.reverse.held import refuse_write_into_held
from s2s_ad.compiler.reverse.order import Order, live_after
from s2s_ad.compiler.syntax.annotations import callee_of, set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    attribute,
    aug_item,
    call,
    compare,
    const,
    expr_stmt,
    if_stmt,
    load,
    slice_of,
    store_item,
    subscript_of,
    substitute,
    tuple_of,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, Kind, array_index, indexed, mixed_array_index
from s2s_ad.rules.registry import Rule


def broadcast_back(cx: Context, rule: Rule, target: str, atom: gast.expr, param: str,
                   value: gast.expr, shape_of) -> gast.expr:
    """An element-wise contribution summed back to its operand's shape
    (``shape_of(param)``: the pullback's expression for that shape)."""
    if not (rule.elementwise and isinstance(cx.kinds.get(target), ArrayKind)):
        return value
    if isinstance(cx.kind(atom), ArrayKind):
        return call("rt.unbroadcast_to_shape", value, shape_of(param))
    return call("rt.unbroadcast_scalar", value)


def guard(cx: Context, target: str, g: gast.expr, body: list[gast.stmt]) -> list[gast.stmt]:
    """Array cotangents: skip the contributions while ``g`` is still empty (zero)."""
    if not body or not isinstance(cx.kinds.get(target), ArrayKind):
        return body
    test = compare(attribute(g, "size"), [gast.NotEq()], [const(0)])
    return [if_stmt(test, body, [])]


def index_reads(cx: Context, index: gast.expr, where: Where, fwd: list, pops: list) -> gast.expr:
    """The index expression with its variable parts saved for the pullback."""
    index = copy.deepcopy(index)
    names = sorted({n.id for n in gast.walk(index) if isinstance(n, gast.Name)})
    reads = {}
    for name in names:
        reads[name] = saving.keep(cx, load(name), where, fwd, pops)
    return substitute(index, reads)


def read_item(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``y = x[index]``: the pullback adds ``d_y`` into ``d_x[index]``."""
    base = prim.operands[0]
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    rev_body: list[gast.stmt] = []
    head, g = cx.grad_source(target, prim)
    if cx.active(base):
        base_value = saving.keep(cx, base, where, fwd, pops, reference=True)  # for its shape
        index = index_reads(cx, s.value.slice, where, fwd, pops)
        d_x = cx.adj(base.id)
        rev_body = materialized(cx, d_x, base_value, base.id, where) + [
            _add_into(cx, s, d_x, index, g, base_value)]
    rev = [cx.header()] + pops + head + guard(cx, target, g, rev_body)
    read = copy.copy(s)
    read.value = masked_read(cx, s.value)
    return fwd + [read], rev + cx.reset(target, prim)


def masked_read(cx: Context, value: gast.Subscript) -> gast.expr:
    """``x[mask]`` with a boolean mask of two or more dimensions as ``rt.masked(x, mask)``
    (Numba reads only 1-d masks); any other read as written."""
    chosen = array_index(value.slice, cx.kind)
    if chosen is not None and chosen.boolean and chosen.ndim != 1:
        return call("rt.masked", value.value, value.slice)
    return value


def _add_into(cx: Context, s: gast.Assign, d_x: str, index: gast.expr,
              g: gast.expr, base: gast.expr) -> gast.stmt:
    """``d_x[index] += g``; through an integer-array index repeated entries add up
    (``rt.scatter_add``), as the gather read each of them. A slice is added into
    in place (``rt.add_in_place``): Numba's ``d_x[index] += g`` copies the slice
    back onto itself."""
    if array_index(s.value.slice, cx.kind) is not None:
        node = expr_stmt(call("rt.scatter_add", load(d_x), index, g))
        set_line(node, cx.line)
        return node
    mixed = mixed_array_index(s.value.slice, cx.kind)
    if mixed is not None:
        node = expr_stmt(_mixed_add(cx, s, d_x, index, g, base, mixed))
        set_line(node, cx.line)
        return node
    if cx.kinds.get(s.targets[0].id) == "unknown":
        raise NonDifferentiableError(
            "indexing that mixes an index array with other index parts is not "
            "differentiable yet", cx.norm.parsed.location(s),
            "index with one integer or boolean array, or with integers and slices")
    if isinstance(cx.kinds.get(s.targets[0].id), ArrayKind):  # a view: added in place
        node = expr_stmt(call("rt.add_in_place", subscript_of(load(d_x), index), g))
        set_line(node, cx.line)
        return node
    return aug_item(d_x, index, g, cx.line)


def _mixed_add(cx: Context, s: gast.Assign, d_x: str, index: gast.Tuple, g: gast.expr,
               base: gast.expr, mixed: tuple[int, ArrayKind]) -> gast.expr:
    """``y = x[..., idx, ...]`` with integers and slices around one integer array: ``y`` is
    ``np.take`` of the basic view ``x[..., :, ...]`` along the array's axis there, its
    axes first when NumPy puts them first (integers not next to the array); the VJP
    adds ``rt.take_vjp_axis`` of ``g`` into that view of ``d_x``."""
    position, kind = mixed
    parts = list(index.elts)
    ints = [i for i, p in enumerate(s.value.slice.elts) if not isinstance(p, gast.Slice)]
    axis = sum(1 for p in parts[:position] if isinstance(p, gast.Slice))
    if ints != list(range(ints[0], ints[-1] + 1)):  # NumPy moves the array's axes first
        if kind.ndim != 1:
            raise NonDifferentiableError(
                "an index array of more than one dimension with integers apart from it "
                "is not differentiable yet", cx.norm.parsed.location(s),
                "index with a 1-d array, or put the integers next to it")
        g = call("np.moveaxis", g, const(0), const(axis))
    parts[position] = slice_of(None, None, None)
    basic = tuple_of(parts)
    picked = call("rt.take_vjp_axis", g, subscript_of(base, basic), index.elts[position],
                  const(axis))
    return call("rt.add_in_place", subscript_of(load(d_x), copy.deepcopy(basic)), picked)


def write_item(cx: Context, s: gast.Assign, where: Where) -> tuple[list, list]:
    """``x[index] = v``: save the overwritten value; the pullback restores it,
    moves ``d_x[index]`` into ``d_v`` and zeroes it."""
    target = s.targets[0]
    name = target.value.id
    refuse_number_write(cx, name, s)
    target.slice = _spelled_out(cx.kinds.get(name), target.slice)
    chosen = array_index(target.slice, cx.kind)
    if mixed_array_index(target.slice, cx.kind) is not None:
        raise NonDifferentiableError(
            f"writing into '{name}' through an index array mixed with integers or slices "
            "is not differentiable yet", cx.norm.parsed.location(s),
            "write through the index array alone (x[idx] = v), or through slices")
    if chosen is not None and not (chosen.boolean or chosen.ndim == 1):
        raise NonDifferentiableError(
            f"writing into '{name}' through a {chosen.ndim}-d index array is not "
            "differentiable yet", cx.norm.parsed.location(s),
            "index with a 1-d integer array or a boolean mask")
    if not isinstance(cx.kinds.get(name), ArrayKind):  # an item of a list's nested list
        raise NonDifferentiableError(
            f"writing an item of '{name}', which is not an array (a list or tuple item), "
            "is not supported", cx.norm.parsed.location(s),
            "build the values as an array (np.array([...])) and write into that")
    refuse_write_into_held(cx, s)
    if name in cx.scratch:
        return write_scratch(cx, s, where)
    check_writable(cx, name, s)
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    index = index_reads(cx, target.slice, where, fwd, pops)
    item_kind = kind_of_item(cx, name, target.slice)
    if name not in cx.norm.params and not sharing(cx, name) and read_by_items_only(cx, name):
        # the pullback never reads the array's values (item reads are saved where
        # they happen), so nothing is saved to restore it
        rev = list(pops)
        if cx.activity.active(name):
            rev += item_adjoint(cx, name, index, s.value, where, fwd, item_kind, target.slice)
        return fwd + [s], [cx.header()] + rev if rev else []
    cx.written.append(name) if name not in cx.written else None
    cx.residual(name, cx.kinds.get(name))
    old = cx.namer.fresh(f"{name}_overwritten")
    cx.kinds[old] = item_kind
    read = subscript_of(load(name), copy.deepcopy(target.slice))
    if isinstance(item_kind, ArrayKind):
        read = call("np.copy", read)
    fwd.append(assign(old, read, cx.line))
    old_value = saving.keep(cx, load(old), where, fwd, pops)
    restore = assignment([store_item(load(name), index)], old_value)
    rev = [cx.header()] + pops + [restore]
    if cx.activity.active(name):
        rev += item_adjoint(cx, name, index, s.value, where, fwd, item_kind, target.slice)
    return fwd + [s], rev


def refuse_number_write(cx: Context, name: str, s: gast.Assign) -> None:
    """Refuse ``a[()] = v`` into a value held as a number: a 0-d array argument (which
    computes as a number, so the caller's array cannot be written) or global."""
    if cx.kinds.get(name) in NUMERIC:
        raise NonDifferentiableError(
            f"writing into '{name}', a 0-d array passed in (held as a number here), is "
            "not supported", cx.norm.parsed.location(s),
            f"return the new value instead, or write into a copy: "
            f"{name} = np.array({name}) before the write")


def _spelled_out(kind: Kind, index: gast.expr) -> gast.expr:
    """``x[...] = v`` as ``x[:, :] = v`` (``x[()]`` for a 0-d array): the same items,
    in a form whose reads (the overwritten value, the cotangent) Numba compiles."""
    if not (isinstance(index, gast.Constant) and index.value is Ellipsis
            and isinstance(kind, ArrayKind) and kind.ndim is not None):
        return index
    every = [slice_of(None, None, None) for _ in range(kind.ndim)]
    return every[0] if kind.ndim == 1 else tuple_of(every)


def read_by_items_only(cx: Context, name: str) -> bool:
    """Whether the function reads the array ``name`` only number by number
    (``name[i, j]``) or for its shape: never as a whole value, so its values matter to the pullback
    only through the items, which are saved when read."""
    for node in gast.walk(cx.norm.node):
        for child in gast.iter_child_nodes(node):
            if not (isinstance(child, gast.Name) and child.id == name
                    and isinstance(child.ctx, gast.Load)):
                continue
            if isinstance(node, gast.Subscript) and node.value is child and (
                    isinstance(node.ctx, gast.Store)
                    or indexed(cx.kinds[name], node.slice, cx.kind) in NUMERIC):
                continue  # a write, or the read of one number (never a view)
            if isinstance(node, gast.Call) and callee_of(node) is np.shape:
                continue
            return False
    return True


def write_scratch(cx: Context, s: gast.Assign, where: Where) -> tuple[list, list]:
    """``tmp[index] = v`` into an array allocated again on each pass (see
    ``Context.scratch``): its values were saved as copies where they were read, so
    nothing is restored; the pullback moves ``d_tmp[index]`` into ``d_v`` and
    zeroes it (nothing to do while ``d_tmp`` is still empty)."""
    target = s.targets[0]
    name = target.value.id
    check_scratch_writable(cx, name, s)
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    if not cx.activity.active(name):
        return [s], []
    index = index_reads(cx, target.slice, where, fwd, pops)
    d_x = cx.adj(name)
    body: list[gast.stmt] = []
    value = s.value
    if cx.active(value):
        part = _written_part(cx, d_x, index, target.slice)
        kind = cx.kind(value)
        if isinstance(kind, ArrayKind):
            shape = saving.keep_shape(cx, value, where, fwd, pops)
            part = call("rt.unbroadcast_to_shape", part, shape)  # a new array
        elif isinstance(kind_of_item(cx, name, target.slice), ArrayKind):
            part = call("np.sum", part)
        body += cx.accumulate(value.id, kind, part)
    body.append(assignment([store_item(load(d_x), index)], const(0.0)))
    size = attribute(load(d_x), "size")
    test = compare(size, [gast.NotEq()], [const(0)])
    return fwd + [s], [cx.header()] + pops + [if_stmt(test, body, [])]


def check_scratch_writable(cx: Context, name: str, s: gast.Assign) -> None:
    """Refuse a write into a scratch array that another variable sees when it runs.

    Its values are saved as copies where the array is read, and nothing is restored:
    a variable that may hold the array's memory at the write (made from it since the
    array was allocated afresh: ``prev = cur`` after the writes is not) may not be
    read after the write.  Its reads before it are saved as copies
    (``aliasing.scratch_views``)."""
    order = Order(cx.norm.node.body)
    since = order.allocation(name, s)
    where = cx.norm.parsed.location(s)
    for other in aliases_at(cx, order, name, s, since):
        refuse_foreign_memory(cx, name, other, where)
        if live_after(order, other, s):
            raise NonDifferentiableError(
                f"writing into '{name}' while '{other}' views or aliases it is not "
                f"supported: '{other}' is read after the write, which changes it",
                where, f"give '{other}' a copy: np.copy({name})")


def materialized(cx: Context, d_x: str, like: gast.expr, name: str, where: Where
                 ) -> list[gast.stmt]:
    """``d_x`` made a full array before item updates: allocated when the pullback
    starts for an array read by name in a loop (nothing to test, and the loop does
    not rebind it), else a cheap test here."""
    if where.loop is not None and name in cx.stable:
        cx.full_cotangents.add(name)
        return []
    empty = compare(attribute(load(d_x), "size"), [gast.Eq()], [const(0)])
    return [if_stmt(empty, [assign(d_x, call("rt.materialize", load(d_x), like), cx.line)], [])]


def check_writable(cx: Context, name: str, s: gast.Assign) -> None:
    """Refuse a write that could change memory another variable sees.

    The pullback restores the items a write overwrote, in the one array the name
    holds (so the name must be bound once), before it reads any earlier value: every
    value saved by reference, views included, is then the value the forward pass
    saw.  What it cannot restore is a derivative: another variable that holds the
    same memory when the write runs and is read after it would see the new items,
    and its cotangent would not reach the written value."""
    if cx.norm.parsed.generated:  # its pullback is never run (forward mode only)
        return
    where = cx.norm.parsed.location(s)
    bound = [d for d in definitions(cx.norm.node.body) if d[0] == name]
    if name not in cx.stable or len(bound) != 1:
        raise NonDifferentiableError(
            f"writing into '{name}', which is assigned more than once (in a loop or a "
            "branch), is not supported: the pullback restores the overwritten items "
            "into one array", where,
            f"allocate '{name}' once (e.g. {name} = np.zeros(n)) and write into it, or "
            f"allocate it afresh (np.zeros) on each pass")
    order = Order(cx.norm.node.body)
    for other in aliases_at(cx, order, name, s):
        refuse_foreign_memory(cx, name, other, where)
        if live_after(order, other, s):
            raise NonDifferentiableError(
                f"writing into '{name}' while '{other}' views or aliases it is not "
                f"supported: '{other}' is read after the write, which changes it",
                where, f"build '{other}' from a copy of '{name}' (np.copy({name}))")


def refuse_foreign_memory(cx: Context, name: str, other: str, where) -> None:
    """Refuse a write into the memory of an argument or a global array."""
    if other in cx.norm.params or other in cx.hidden or other in cx.externals:
        raise NonDifferentiableError(
            f"writing into '{name}', which may share memory with '{other}' (an argument "
            "or a global), would change the caller's array", where,
            f"write into a copy: {name} = np.copy(...)")


def check_in_place(cx: Context, name: str, s: gast.Assign) -> None:
    """``y += e`` on an array mutates it: fine unless someone else sees ``y``'s memory
    (the generated code rebinds ``y``, which is the same only without aliases)."""
    where = cx.norm.parsed.location(s)
    if name in cx.norm.params:
        raise NonDifferentiableError(
            f"an in-place operator on the argument array '{name}' would change the "
            "caller's array", where, f"rebind instead: {name} = {name} <op> ...")
    if is_view(next((op for other, op in definitions(cx.norm.node.body) if other == name),
                     None)) or sharing(cx, name):
        raise NonDifferentiableError(
            f"an in-place operator on '{name}', which shares memory with another "
            "array, is not supported", where, f"rebind instead: {name} = {name} <op> ...")
    refuse_write_into_held(cx, s)


def kind_of_item(cx: Context, name: str, index: gast.expr) -> Kind:
    """The kind of ``name[index]`` (the kinds stage's indexing rule)."""
    return indexed(cx.kinds[name], index, cx.kind)


def _written_part(cx: Context, d_x: str, index: gast.expr, written: gast.expr) -> gast.expr:
    """``d_x[index]``: the cotangent of what ``x[written] = v`` wrote (through an
    index array, ``rt.written_items``: of a repeated position, the last write)."""
    if array_index(written, cx.kind) is not None:
        return call("rt.written_items", load(d_x), index)
    return subscript_of(load(d_x), index)


def item_adjoint(cx: Context, name: str, index: gast.expr, value: gast.expr, where: Where,
                 fwd: list, item_kind: Kind, written: gast.expr) -> list[gast.stmt]:
    """``d_value += d_x[index]`` (summed back to the value's shape), then
    ``d_x[index] = 0``.  ``item_kind`` is the kind of ``x[index]``: ``index`` here
    may read tapes, whose kinds the kinds stage never saw; ``written`` is the
    index as the user wrote it."""
    d_x = cx.adj(name)
    f, p, x_value = saving.save(cx, load(name), where, reference=True)  # for its shape
    fwd += f
    out = p + materialized(cx, d_x, x_value, name, where)
    if cx.active(value):
        part = _written_part(cx, d_x, index, written)
        kind = cx.kind(value)
        if isinstance(kind, ArrayKind):
            shape = saving.keep_shape(cx, value, where, fwd, out)
            part = call("rt.unbroadcast_to_shape", part, shape)  # a new array
        elif isinstance(item_kind, ArrayKind):  # a number written into a slice
            part = call("np.sum", part)
        out += cx.accumulate(value.id, kind, part)
    zeroing = assignment([store_item(load(d_x), index)], const(0.0))
    return out + [zeroing]
