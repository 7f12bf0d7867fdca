"""The reverse stages, part: assignments.

``y = <operation>`` becomes its forward statement (plus saves) and its adjoint
block: rule templates substituted with saved values, cotangents of copies,
tuples and tuple items, and dispatch to calls and array items.
"""

from __future__ import annotations

import gast

from s2s_ad.compiler.infer_kinds import static_slice
from s2s_ad.compiler.primitives import (
    Copy,
    CustomCall,
    FunctionCall,
    HookCall,
    Index,
    KernelCall,
    Primitive,
    RuleOp,
    TupleDisplay,
    UnknownCall,
    classify,
)
from s2s_ad.compiler.reverse import (  # gradient_code: the reverse steps it registers
    arrays,
    calls,
    gradient_code,  # noqa: F401
    kernel_calls,
    lists,
    saving,
)
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.annotations import is_in_place
from s2s_ad.compiler.syntax.builders import (
    add,
    assign,
    attribute,
    call,
    load,
    subscript_of,
    substitute,
    tuple_of,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, ListKind


def assign_stmt(cx: Context, s: gast.Assign, where: Where) -> tuple[list, list]:
    if isinstance(s.targets[0], gast.Subscript):
        return arrays.write_item(cx, s, where)
    target = s.targets[0].id
    if is_in_place(s) and isinstance(cx.kinds.get(target), ArrayKind):
        arrays.check_in_place(cx, target, s)
    prim = classify(s.value)
    if not cx.activity.active(target):
        return [calls.primal_stmt(cx, s)], []
    if isinstance(prim, FunctionCall):
        return calls.call_function(cx, s, target, prim, where)
    if isinstance(prim, CustomCall):
        return calls.call_custom(cx, s, target, prim, where)
    if isinstance(prim, HookCall):
        return calls.call_hook(cx, s, target, prim, where)
    if isinstance(prim, KernelCall):
        return kernel_calls.call_kernel(cx, s, target, prim, where)
    if isinstance(prim, UnknownCall):
        raise calls.unknown_call(cx, s, prim)
    return apply_rule(cx, s, target, prim, where)


def apply_rule(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    if isinstance(prim, Index) and isinstance(cx.kind(prim.operands[0]), ArrayKind):
        return arrays.read_item(cx, s, target, prim, where)
    if isinstance(prim, Index) and isinstance(cx.kind(prim.operands[0]), ListKind):
        return lists.read_item(cx, s, target, prim, where)
    if isinstance(prim, RuleOp) and prim.rule.reverse is not None:  # its own reverse step
        return prim.rule.reverse(cx, s, target, prim, where)
    if isinstance(prim, RuleOp):
        prim = RuleOp(prim.operands, calls.specialized(cx, prim, s.value), prim.callee)
    before: list[gast.stmt] = []
    after: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    head, g = cx.grad_source(target, prim)
    contributions: list[gast.stmt] = []
    saved: dict[tuple, gast.expr] = {}

    def value_of(tname: str) -> gast.expr:
        atom = load(target) if tname == "z" else prim.operands[
            prim.rule.params.index(tname)]
        # one save per value: x * x saves x once; a constant operand is its own value,
        # never keyed by a name a user variable could also have
        key = ("result",) if tname == "z" else (
            ("name", atom.id) if isinstance(atom, gast.Name) else ("operand", tname))
        if key not in saved:
            if tname == "z":  # the value after this statement, not a read before it
                saving.rebound(cx, [target])
            saved[key] = saving.keep(cx, atom, where, after if tname == "z" else before,
                                     pops)
        return saved[key]

    def shape_of(tname: str) -> gast.expr:
        """The operand's shape: read from its saved value if the adjoint keeps that,
        else saved alone."""
        atom = prim.operands[prim.rule.params.index(tname)]
        key = ("name", atom.id) if isinstance(atom, gast.Name) else ("operand", tname)
        if key in saved:
            return attribute(saved[key], "shape")
        if ("shape",) + key not in saved:
            saved[("shape",) + key] = saving.keep_shape(cx, atom, where, before, pops)
        return saved[("shape",) + key]

    if isinstance(prim, RuleOp):  # operands before the result: y = f(x, y) reads both y's
        needed = set().union(*(prim.rule.needs(prim.rule.params[pos])
                               for pos, atom in prim.differentiable_operands()
                               if cx.active(atom) and not _concatenation(cx, prim)))
        for tname in sorted(needed - {"z"}) + sorted(needed & {"z"}):
            value_of(tname)
    for pos, atom in prim.differentiable_operands():
        if not cx.active(atom):
            continue
        if _concatenation(cx, prim):
            start = 0 if pos == 0 else len(cx.kind(prim.operands[0]))
            items = [subscript_of(g, start + i) for i in range(len(cx.kind(atom)))]
            contributions += cx.accumulate(atom.id, cx.kind(atom), tuple_of(items))
        elif isinstance(prim, RuleOp):
            rule, param = prim.rule, prim.rule.params[pos]
            names = {n: value_of(n) for n in sorted(rule.needs(param))}
            names["g"] = g
            value = substitute(rule.template(param), names)
            value = arrays.broadcast_back(cx, rule, target, atom, param, value, shape_of)
            contributions += cx.accumulate(atom.id, cx.kind(atom), value)
        elif isinstance(prim, Copy):
            contributions += cx.accumulate(atom.id, cx.kind(atom), g)
        elif isinstance(prim, TupleDisplay):
            contributions += cx.accumulate(atom.id, cx.kind(atom), subscript_of(g, pos))
        elif isinstance(prim, Index) and cx.kind(atom) in NUMERIC:  # a[()] of a 0-d array
            contributions += cx.accumulate(atom.id, cx.kind(atom), g)
        elif isinstance(prim, Index):
            contributions += tuple_item_adjoint(cx, s, atom, g, where, before, pops)
    fwd = before + [calls.primal_stmt(cx, s)] + after
    contributions = arrays.guard(cx, target, g, contributions)
    rev = [cx.header()] + pops + head + contributions + cx.reset(target, prim)
    return fwd, rev


def _concatenation(cx: Context, prim: Primitive) -> bool:
    """``t + s`` of two tuples."""
    return isinstance(prim, RuleOp) and prim.rule.emit == "+" and all(
        isinstance(cx.kind(a), tuple) for a in prim.operands)


def tuple_item_adjoint(cx: Context, s: gast.Assign, atom: gast.Name, g: gast.expr,
                       where: Where, fwd: list, pops: list) -> list[gast.stmt]:
    """The cotangent of ``t[index]`` added into that of the tuple ``t``: at a constant
    position, at each position of a constant slice, or (``rt.add_at``) at a position
    known only at run time."""
    kind, index = cx.kind(atom), s.value.slice
    if isinstance(index, gast.Constant):
        return cx.accumulate_at(atom.id, kind, index.value, g)
    if isinstance(index, gast.Slice):
        bounds = static_slice(index)
        if bounds is None:
            raise NonDifferentiableError("a tuple slice needs constant bounds",
                                         cx.norm.parsed.location(s))
        picked = list(range(len(kind)))[bounds]
        d_t = load(cx.adj(atom.id))
        items = [subscript_of(d_t, i) for i in range(len(kind))]
        for j, i in enumerate(picked):
            items[i] = add(kind[i], items[i], subscript_of(g, j))
        return [assign(cx.adj(atom.id), tuple_of(items), cx.line)]
    position = arrays.index_reads(cx, index, where, fwd, pops)
    return [assign(cx.adj(atom.id), call("rt.add_at", load(cx.adj(atom.id)), position, g),
                   cx.line)]
