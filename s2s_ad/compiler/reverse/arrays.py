"""Stage 5 (reverse), part: arrays.

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
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.annotations import get_anno, set_anno
from s2s_ad.compiler.syntax.builders import assign, aug_item, call, const, load, substitute
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind, array_index, indexed
from s2s_ad.rules.registry import Rule

_VIEWS = (np.reshape, np.transpose, np.ravel)


def _definitions(stmts: list[gast.stmt]):
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s.targets[0].id, s.value
        for field in ("body", "orelse"):
            yield from _definitions(getattr(s, field, []) or [])


def _is_view(op: gast.expr, of: str | None = None) -> bool:
    """Whether ``op`` may return memory of an existing array (of ``of``, if given)."""
    if isinstance(op, gast.Name):
        base = op
    elif isinstance(op, gast.Subscript):
        base = op.value
    elif isinstance(op, gast.Call) and get_anno(op, "callee") in _VIEWS and op.args:
        base = op.args[0]
    elif isinstance(op, gast.Call) and get_anno(op, "callee") is np.einsum and len(op.args) == 2:
        base = op.args[1]  # NumPy returns a view for "ij->ji", "ii->i"...
    else:
        return False
    return isinstance(base, gast.Name) and (of is None or base.id == of)


def broadcast_back(cx: Context, rule: Rule, target: str, atom: gast.expr, param: str,
                   value: gast.expr, value_of) -> gast.expr:
    """An element-wise contribution summed back to its operand's shape."""
    if not (rule.elementwise and isinstance(cx.kinds.get(target), ArrayKind)):
        return value
    if isinstance(cx.kind(atom), ArrayKind):
        return call("rt.unbroadcast", value, value_of(param))
    return call("rt.unbroadcast_scalar", value)


def guard(cx: Context, target: str, g: gast.expr, body: list[gast.stmt]) -> list[gast.stmt]:
    """Array cotangents: skip the contributions while ``g`` is still empty (zero)."""
    if not body or not isinstance(cx.kinds.get(target), ArrayKind):
        return body
    test = gast.Compare(left=gast.Attribute(value=g, attr="size", ctx=gast.Load()),
                        ops=[gast.NotEq()], comparators=[const(0)])
    return [gast.If(test=test, body=body, orelse=[])]


def index_reads(cx: Context, index: gast.expr, where: Where, fwd: list, pops: list) -> gast.expr:
    """The index expression with its variable parts saved for the pullback."""
    index = copy.deepcopy(index)
    names = sorted({n.id for n in gast.walk(index) if isinstance(n, gast.Name)})
    reads = {}
    for name in names:
        f, p, e = saving.save(cx, load(name), where)
        fwd.extend(f)
        pops[:0] = p
        reads[name] = e
    return substitute(index, reads)


def read_item(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``y = x[index]``: the pullback adds ``d_y`` into ``d_x[index]``."""
    base = prim.operands[0]
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    rev_body: list[gast.stmt] = []
    head, g = cx.grad_source(target, prim)
    if cx.active(base):
        f, p, base_value = saving.save(cx, base, where)
        fwd += f
        pops[:0] = p
        index = index_reads(cx, s.value.slice, where, fwd, pops)
        d_x = cx.adj(base.id)
        rev_body = [materialized(cx, d_x, base_value), _add_into(cx, s, d_x, index, g)]
    rev = [cx.header()] + pops + head + guard(cx, target, g, rev_body)
    return fwd + [s], rev + cx.reset(target, prim)


def _add_into(cx: Context, s: gast.Assign, d_x: str, index: gast.expr,
              g: gast.expr) -> gast.stmt:
    """``d_x[index] += g``; through an integer-array index repeated entries add up
    (``rt.scatter_add``), as the gather read each of them."""
    if array_index(s.value.slice, cx.kind) is not None:
        node = gast.Expr(value=call("rt.scatter_add", load(d_x), index, g))
        set_anno(node, "line", cx.line)
        return node
    if cx.kinds.get(s.targets[0].id) == "unknown":
        raise NonDifferentiableError(
            "indexing that mixes an index array with other index parts is not "
            "differentiable yet", cx.norm.parsed.location(s),
            "index with one integer or boolean array, or with integers and slices")
    return aug_item(d_x, index, g, cx.line)


def write_item(cx: Context, s: gast.Assign, where: Where) -> tuple[list, list]:
    """``x[index] = v``: save the overwritten value; the pullback restores it,
    moves ``d_x[index]`` into ``d_v`` and zeroes it."""
    target = s.targets[0]
    name = target.value.id
    check_writable(cx, name, s)
    if array_index(target.slice, cx.kind) is not None:
        raise NonDifferentiableError(
            f"writing into '{name}' through an index array is not differentiable yet",
            cx.norm.parsed.location(s), "write in a loop over the indices instead")
    cx.written.append(name) if name not in cx.written else None
    cx.residual(name, cx.kinds.get(name))
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    index = index_reads(cx, target.slice, where, fwd, pops)
    old = cx.namer.fresh(f"{name}_overwritten")
    item_kind = kind_of_item(cx, name, target.slice)
    cx.kinds[old] = item_kind
    read = gast.Subscript(value=load(name), slice=copy.deepcopy(target.slice),
                          ctx=gast.Load())
    if isinstance(item_kind, ArrayKind):
        read = call("np.copy", read)
    fwd.append(assign(old, read, cx.line))
    f, p, old_value = saving.save(cx, load(old), where)
    fwd += f
    pops[:0] = p
    restore = gast.Assign(targets=[gast.Subscript(value=load(name), slice=index,
                                                  ctx=gast.Store())],
                          value=old_value, type_comment=None)
    rev = [cx.header()] + pops + [restore]
    if cx.activity.active(name):
        rev += item_adjoint(cx, name, index, s.value, where, fwd)
    return fwd + [s], rev


def materialized(cx: Context, d_x: str, like: gast.expr) -> gast.stmt:
    """``d_x`` made a full array before item updates (a cheap test in loops)."""
    empty = gast.Compare(left=gast.Attribute(value=load(d_x), attr="size", ctx=gast.Load()),
                         ops=[gast.Eq()], comparators=[const(0)])
    return gast.If(test=empty, body=[assign(d_x, call("rt.materialize", load(d_x), like),
                                            cx.line)], orelse=[])


def check_writable(cx: Context, name: str, s: gast.Assign) -> None:
    """Refuse a write that could change memory another variable sees."""
    where = cx.norm.parsed.location(s)
    definitions = [d for d in _definitions(cx.norm.node.body) if d[0] == name]
    if name not in cx.stable or len(definitions) != 1:
        raise NonDifferentiableError(
            f"writing into '{name}', which is assigned more than once, is not supported",
            where, f"allocate '{name}' once (e.g. {name} = np.zeros(n)) and write into it")
    if _is_view(definitions[0][1]):
        raise NonDifferentiableError(
            f"writing into '{name}', which may share memory with another array, is not "
            "supported", where, f"write into a copy: {name} = np.copy(...)")
    for other, op in _definitions(cx.norm.node.body):
        if other != name and other not in cx.norm.temps and _is_view(op, of=name) \
                and isinstance(cx.kinds.get(other), ArrayKind):
            raise NonDifferentiableError(
                f"writing into '{name}' while '{other}' views or aliases it is not "
                "supported", where, f"make '{other}' a copy: {other} = np.copy(...)")


def check_in_place(cx: Context, name: str, s: gast.Assign) -> None:
    """``y += e`` on an array mutates it: fine unless someone else sees ``y``'s memory
    (the generated code rebinds ``y``, which is the same only without aliases)."""
    where = cx.norm.parsed.location(s)
    if name in cx.norm.params:
        raise NonDifferentiableError(
            f"an in-place operator on the argument array '{name}' would change the "
            "caller's array", where, f"rebind instead: {name} = {name} <op> ...")
    for other, op in _definitions(cx.norm.node.body):
        shares = (other != name and other not in cx.norm.temps
                  and _is_view(op, of=name)) or (other == name and _is_view(op))
        if shares and isinstance(cx.kinds.get(other), ArrayKind):
            raise NonDifferentiableError(
                f"an in-place operator on '{name}', which shares memory with another "
                "array, is not supported", where,
                f"rebind instead: {name} = {name} <op> ...")


def kind_of_item(cx: Context, name: str, index: gast.expr) -> Kind:
    """The kind of ``name[index]`` (the kinds stage's indexing rule)."""
    return indexed(cx.kinds[name], index, cx.kind)


def item_adjoint(cx: Context, name: str, index: gast.expr, value: gast.expr, where: Where,
                 fwd: list) -> list[gast.stmt]:
    d_x = cx.adj(name)
    f, p, x_value = saving.save(cx, load(name), where)
    fwd += f
    out = p + [materialized(cx, d_x, x_value)]
    if cx.active(value):
        part = gast.Subscript(value=load(d_x), slice=index, ctx=gast.Load())
        kind = cx.kind(value)
        if isinstance(kind, ArrayKind):
            v_f, v_p, v_value = saving.save(cx, value, where)
            fwd += v_f
            out[:0] = v_p
            part = call("rt.unbroadcast", call("np.copy", part), v_value)
        elif isinstance(kind_of_item(cx, name, index), ArrayKind):
            part = call("np.sum", part)
        out += cx.accumulate(value.id, kind, part)
    zeroing = gast.Assign(targets=[gast.Subscript(value=load(d_x), slice=index,
                                                  ctx=gast.Store())],
                          value=const(0.0), type_comment=None)
    return out + [zeroing]
