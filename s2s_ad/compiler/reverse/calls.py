"""The reverse stages, part: calls.

Python functions (through their transforms), registered ``@derivative``s
(split or black-box), ``with_derivative`` hooks, and the primal form of every
call in generated code (canonical rule names, injected objects).
"""

from __future__ import annotations

import builtins
import copy
import types
from typing import Any

import gast

from s2s_ad import runtime
from s2s_ad.compiler.custom import split_of
from s2s_ad.compiler.primitives import (
    CustomCall,
    CutCall,
    FunctionCall,
    KernelCall,
    Primitive,
    RuleOp,
    classify,
    is_library,
)
from s2s_ad.compiler.reverse import saving
from s2s_ad.compiler.reverse.arrays import masked_read
from s2s_ad.compiler.reverse.context import CalleeLink, Context, Where
from s2s_ad.compiler.reverse.kernel_calls import given_contributions, primal_kernel_call
from s2s_ad.compiler.syntax.annotations import callee_of, copy_annos, set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    attribute,
    call,
    call_node,
    expr_stmt,
    load,
    loaded_names,
    store,
    store_tuple,
    subscript_of,
    substitute,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, ListKind
from s2s_ad.rules.registry import Rule, arities, refusal


def specialized(cx: Context, prim: Primitive, where: gast.AST) -> Rule:
    unknown = [k.arg for k in getattr(where, "keywords", []) if k.arg not in prim.rule.params]
    if unknown:
        raise NonDifferentiableError(
            f"{prim.rule.emit}: the keyword '{unknown[0]}' is not supported",
            cx.norm.parsed.location(where), "leave it out, or compute it another way")
    try:
        return prim.rule.specialize(prim.operands, [cx.kind(a) for a in prim.operands])
    except ValueError as exc:
        raise NonDifferentiableError(str(exc), cx.norm.parsed.location(
            where if hasattr(where, "lineno") else cx.norm.node)) from None


def primal_stmt(cx: Context, s: gast.stmt) -> gast.stmt:
    """``s`` computing the original value with names the generated module has:
    rules by their canonical name, Python functions by their generated primal,
    anything else through an injected name."""
    value = s.value
    if isinstance(value, gast.Lambda):
        bind_globals(cx, value)
    if _int_power_of_float_kind(cx, s):
        new = copy.copy(s)
        new.value = call("rt.int_pow", value.left, value.right)
        return new
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            isinstance(cx.kinds.get(value.value.id), ArrayKind):
        new = copy.copy(s)
        new.value = masked_read(cx, value)
        return new
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        new = copy.copy(s)
        new.value = _matmul_value(cx, value)
        return new
    if _item_of_a_number(cx, value):  # x[()] of np.array(number), a number here
        new = copy.copy(s)
        new.value = call("rt.zero_d_item", value.value)
        return new
    if not isinstance(value, gast.Call):
        return s
    if callee_of(value) is runtime.appended:  # Numba types List() by its appends
        items, item = value.args
        item = _as_item(cx, cx.kinds.get(items.id), item)
        node = expr_stmt(call_node(attribute(load(items.id), "append"), [item]))
        return copy_annos(s, node)
    new = copy.copy(s)
    new.value = primal_value(cx, value, s)
    return new


def _matmul_value(cx: Context, value: gast.BinOp) -> gast.expr:
    """``a @ b`` as its rule computes it (batched operands: ``rt.matmul``, which Numba's
    ``@`` is not)."""
    prim = classify(value)
    template = specialized(cx, prim, value).forward_template()
    if template is None:
        return value
    return substitute(template, dict(zip(prim.rule.params, prim.operands, strict=False)))


def _item_of_a_number(cx: Context, value: gast.expr) -> bool:
    """``x[()]`` of an ``x`` whose kind is a number: a 0-d array argument, or the number
    ``np.array(number)`` is in generated code."""
    return isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Tuple) and \
        not value.slice.elts and cx.kind(value.value) in NUMERIC


def _as_item(cx: Context, items: Any, item: gast.expr) -> gast.expr:
    """``item`` converted to the kind of the list's items, the join of every appended
    kind (bool < int < float): Numba types a list by its first append, so a list of
    bools then floats would turn 2.4 into True."""
    element = items.element if isinstance(items, ListKind) else None
    kind = cx.kind(item)
    if element == "float" and kind in ("int", "bool"):
        return call("rt.number_as_float", item)
    if element == "int" and kind == "bool":
        return call("rt.number_as_int", item)
    if isinstance(element, ArrayKind) and element.floating and isinstance(kind, ArrayKind) \
            and not kind.floating:
        return call("rt.astype_float", item)
    return item


def _int_power_of_float_kind(cx: Context, s: gast.stmt) -> bool:
    """``t = a ** b`` of ints where ``t`` is a float (the exponent is not a constant >= 0):
    Python gives ``2 ** -1 == 0.5``, Numba's int64 power 0, so it goes through
    ``rt.int_pow``."""
    value = s.value
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Pow)
            and isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return False
    ints = all(cx.kind(side) in ("int", "bool") for side in (value.left, value.right))
    return ints and cx.kinds.get(s.targets[0].id) == "float"


def primal_value(cx: Context, value: gast.Call, s: gast.stmt) -> gast.expr:
    prim = classify(value)
    args = list(value.args)
    if isinstance(prim, CutCall):  # the marker kept: second derivatives read it again
        return call("rt.without_derivative", prim.operands[0])
    if prim.identity:
        return prim.operands[0]
    if isinstance(prim, KernelCall):
        return primal_kernel_call(cx, value)
    if isinstance(prim, RuleOp):
        template = specialized(cx, prim, value).forward_template()
        if template is not None:
            return substitute(template, dict(zip(prim.rule.params, prim.operands,
                                                  strict=False)))
        return call_node(gast.parse(prim.rule.emit, mode="eval").body, args, value.keywords)
    if isinstance(prim, FunctionCall) or (isinstance(prim, CustomCall) and isinstance(
            prim.callee, types.FunctionType)):
        link = link_callee(cx, prim, primal_only=True, call=s)
        return call_node(load(link.primal), args + passed_globals(cx, link))
    split = _linkable_split(cx, prim) if isinstance(prim, CustomCall) else None
    if split is not None:  # a differentiable_function: the value its derivative returns
        link = link_callee(cx, prim, split[0], primal_only=True)
        pair = call_node(load(link.primal), args + passed_globals(cx, link))
        return subscript_of(pair, 0)
    name = cx.external(prim.callee)
    return call_node(load(name), args, value.keywords)


def bind_globals(cx: Context, node: gast.AST) -> None:
    """Bind the module-level names that Python code kept as written reads."""
    namespace = cx.norm.parsed.namespace
    for name in loaded_names(node):
        if name not in cx.norm.locals and name in namespace and name not in dir(builtins):
            cx.externals.setdefault(name, namespace[name])


def link_callee(cx: Context, prim: Primitive, callee: Any = None, kinds: list | None = None,
                primal_only: bool = False, call: gast.AST | None = None) -> CalleeLink:
    kinds = kinds if kinds is not None else [cx.kind(a) for a in prim.operands]
    transform = cx.linker(callee if callee is not None else prim.callee, kinds,
                          primal_only, call)
    key = id(transform)
    if key not in cx.links:
        base = transform.name
        cx.links[key] = CalleeLink(
            transform=transform, primal=cx.namer.fresh(base),
            forward=cx.namer.fresh(f"{base}_forward"),
            pullback=cx.namer.fresh(f"{base}_pullback"),
            wrt_positions=transform.wrt_positions,
            globals_passed=[cx.global_name(read) for read in transform.hidden])
    return cx.links[key]


def passed_globals(cx: Context, link: CalleeLink, in_pullback: bool = False) -> list[gast.expr]:
    """The arguments passing a callee the global variables it reads (residuals when the
    call is in the pullback)."""
    if in_pullback:
        for name in link.globals_passed:
            cx.residual(name, cx.kinds.get(name, "unknown"))
    return [load(name) for name in link.globals_passed]


def inherit_refusal(cx: Context, link: CalleeLink) -> None:
    """A callee reverse mode cannot go through makes its caller refused as well."""
    context = link.transform.generated.context
    if cx.refusal is None and context is not None:
        cx.refusal = context.refusal


def call_function(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    if prim.recompute:
        return call_recomputed(cx, s, target, prim, where)
    link = link_callee(cx, prim, call=s)
    inherit_refusal(cx, link)
    res = cx.namer.fresh(f"{link.primal}_residuals")
    cx.kinds[res] = "unknown"
    args = list(prim.operands) + passed_globals(cx, link)
    call = call_node(load(link.forward), args)
    fwd_call = assignment([store_tuple([store(target), store(res)])], call)
    set_line(fwd_call, cx.line)
    f, p, res_expr = saving.save_residuals(cx, res, link, where, copy.deepcopy(args),
                                           target)
    head, g = cx.grad_source(target, prim)
    grads = cx.namer.fresh(f"{link.primal}_grads")
    rev = [cx.header()] + p + head + [
        assign(grads, call_node(load(link.pullback), [res_expr, g]), cx.line)]
    for out_index, pos in enumerate(link.wrt_positions):
        atom = prim.operands[pos]
        if cx.active(atom):
            part = subscript_of(load(grads), out_index)
            rev += cx.accumulate(atom.id, cx.kind(atom), part)
    return [fwd_call] + f, rev + cx.reset(target, prim)


def call_recomputed(cx: Context, s: gast.Assign, target: str, prim: Primitive,
                    where: Where):
    """A call of a ``recompute_in_pullback`` function: the forward sweep runs its primal
    and keeps only its arguments; the pullback runs its forward again, then its pullback."""
    link = link_callee(cx, prim, call=s)
    inherit_refusal(cx, link)
    primal = call_node(load(link.primal), list(prim.operands) + passed_globals(cx, link))
    fwd_call = assign(target, primal, cx.line)
    fwd, rev_restore, saved = [], [], []
    for atom in prim.operands:
        f, p, expr = saving.save(cx, atom, where)
        fwd += f
        rev_restore += p
        saved.append(expr)
    res = cx.namer.fresh(f"{link.primal}_residuals")
    again = cx.namer.fresh(f"{link.primal}_again")
    cx.kinds[res] = "unknown"
    rerun = assignment([store_tuple([store(again), store(res)])], call_node(
        load(link.forward), saved + passed_globals(cx, link, in_pullback=True)))
    set_line(rerun, cx.line)
    head, g = cx.grad_source(target, prim)
    grads = cx.namer.fresh(f"{link.primal}_grads")
    rev = [cx.header()] + rev_restore + head + [rerun, assign(
        grads, call_node(load(link.pullback), [load(res), g]), cx.line)]
    for out_index, pos in enumerate(link.wrt_positions):
        atom = prim.operands[pos]
        if cx.active(atom):
            rev += cx.accumulate(atom.id, cx.kind(atom), subscript_of(load(grads), out_index))
    return fwd + [fwd_call], rev + cx.reset(target, prim)


def call_hook(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """``v = with_derivative(x, hook)``: the pullback runs the hook on ``d_v``."""
    x, hook = prim.operands
    f, p, hook_expr = saving.save(cx, hook, where)
    head, g = cx.grad_source(target, prim)
    cotangent = g if head else load(cx.adj(target))
    rev = [cx.header()] + p + head + [
        assign(cotangent.id, call("rt.run_hook", hook_expr, cotangent), cx.line)]
    if cx.active(x):
        rev += cx.accumulate(x.id, cx.kind(x), cotangent)
    return f + [primal_stmt(cx, s)], rev + cx.reset(target, prim)


def call_custom(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """A call of a function with a registered derivative (Swift's form)."""
    custom = prim.custom
    if custom is None:  # a differential only: forward mode can still go through it
        cx.refusal = cx.refusal or no_pullback(cx, s, prim)
        return [primal_stmt(cx, s)], []
    split = _linkable_split(cx, prim, custom)
    res = cx.namer.fresh(f"{target}_pullback" if split is None
                           else f"{target}_residuals")
    cx.kinds[res] = "unknown"
    if split is not None:
        fwd_part, pb_part = split
        fwd_link = link_callee(cx, prim, fwd_part, primal_only=True)
        func = load(fwd_link.primal)
        extra = passed_globals(cx, fwd_link)
    else:
        func = load(cx.external(custom.derivative))
        extra = []
    call = call_node(func, list(prim.operands) + extra)
    fwd_call = assignment([store_tuple([store(target), store(res)])], call)
    set_line(fwd_call, cx.line)
    if split is not None:
        res_kind = fwd_link.transform.result_kind
        if isinstance(res_kind, tuple):
            cx.kinds[res] = res_kind[1]
        f, p, res_expr = saving.save(cx, load(res), where)
        pb_link = link_callee(cx, prim, pb_part, [cx.kinds[res], cx.kinds.get(target)],
                            primal_only=True)
        pullback_fn = load(pb_link.primal)
        args, after = [res_expr], passed_globals(cx, pb_link, in_pullback=True)
    else:
        f, p, res_expr = saving.save(cx, load(res), where)
        pullback_fn, args, after = res_expr, [], []
    head, g = cx.grad_source(target, prim)
    grads = cx.namer.fresh(f"{target}_cotangents")
    rev = [cx.header()] + p + head + [
        assign(grads, call_node(pullback_fn, args + [g] + after), cx.line)]
    inputs = [prim.operands[pos] for pos in custom.positions(len(prim.operands))]
    kept_fwd: list[gast.stmt] = []
    kept_pops: list[gast.stmt] = []

    def kept(atom: gast.expr, reference: bool = False) -> gast.expr:
        return saving.keep(cx, atom, where, kept_fwd, kept_pops, reference)

    label = repr(getattr(prim.callee, "__name__", "the function"))
    rev += given_contributions(cx, grads, inputs, label, kept)
    rev[1:1] = kept_pops  # after the header
    return [fwd_call] + f + kept_fwd, rev + cx.reset(target, prim)


def no_pullback(cx: Context, s: gast.stmt, prim: Primitive) -> NonDifferentiableError:
    """Reverse mode through a function that has only a differential registered."""
    name = getattr(prim.callee, "__name__", "the function")
    return NonDifferentiableError(
        f"reverse mode through '{name}' needs a pullback, but only a differential "
        "(@ad.derivative(mode=\"forward\")) is registered for it",
        cx.norm.parsed.location(s.value if hasattr(s.value, "lineno") else s),
        f"register one with @ad.derivative(of={name}) returning (value, pullback), or "
        "use forward mode (ad.jvp)")


def _linkable_split(cx: Context, prim: Primitive, entry: Any = None) -> Any:
    """The split (forward, pullback) of a registered derivative (``entry``, default the
    one whose value the call computes) when both parts can be transformed (then Numba
    can compile them); None to call the derivative as it is (a pullback that calls
    ``ad.pullback``, say: Python runs it)."""
    split = split_of(entry if entry is not None else prim.registered)
    if split is None:
        return None
    try:
        fwd_link = link_callee(cx, prim, split[0], primal_only=True)
        res_kind = fwd_link.transform.result_kind
        kinds = [res_kind[1] if isinstance(res_kind, tuple) else "unknown",
                 fwd_link.transform.result_kind[0] if isinstance(res_kind, tuple) else "unknown"]
        cx.linker(split[1], kinds, True, None)
    except NonDifferentiableError:
        return None
    return split


def unknown_call(cx: Context, s: gast.stmt, prim: Primitive) -> NonDifferentiableError:
    callee = prim.callee
    name = getattr(callee, "__name__", repr(callee))
    loc = cx.norm.parsed.location(s.value if hasattr(s.value, "lineno") else s)
    counts = arities(callee)
    refused = refusal(callee)
    if refused is not None:  # refused with a reason of its own (rules.registry.refuse)
        return NonDifferentiableError(refused[0], loc, refused[1])
    if counts:  # a rule for another number of arguments (np.atleast_1d(a, b))
        given, wanted = len(prim.operands), " or ".join(map(str, counts))
        return NonDifferentiableError(
            f"'{name}' has no derivative rule for {given} argument{'s' * (given != 1)} (only "
            f"for {wanted})", loc, f"pass {wanted} argument{'s' * (counts != [1])} (call it "
            "once per value if need be)")
    return NonDifferentiableError(
        f"'{name}' has no derivative rule" + ("" if is_library(callee) else
                                            " and no Python source to differentiate"), loc,
        f"register one with @ad.derivative(of={name}), or mark the value with "
        "ad.without_derivative(...)")
