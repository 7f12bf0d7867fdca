"""The tangent stage, part: calls of functions with a registered derivative, and hooks.

A function registered with ``@ad.derivative(of=f, mode="forward")`` (Swift's
``differential:`` form, ``(value, differential)``) goes through forward mode by
its differential.  As in reverse mode, a derivative whose last statement returns
a value and a lambda is split (:mod:`s2s_ad.compiler.custom`) so that Numba
compiles both parts::

    y = scaled_exp(x)        ->   y, y_residuals = scaled_exp_jvp_split_forward(x)
                                  t_y = scaled_exp_jvp_split_differential(y_residuals, t_x)

(the tangent checked against the value, ``rt.given_tangent``, as a pullback's
cotangents are); any other is called as it is (the module then runs in Python).
A function with only a pullback, and a ``with_derivative`` hook (it acts on cotangents, which
forward mode has none of), are refused with a located message.
"""

from __future__ import annotations

from typing import Any

import gast

from s2s_ad.compiler.custom import split_of
from s2s_ad.compiler.primitives import CustomCall, KernelCall, Primitive, classify
from s2s_ad.compiler.reverse import calls
from s2s_ad.compiler.reverse.context import CalleeLink
from s2s_ad.compiler.syntax.annotations import set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    call,
    call_node,
    const,
    load,
    store,
    store_tuple,
)
from s2s_ad.compiler.tangent_kernels import kernel_note
from s2s_ad.errors import Location, NonDifferentiableError
from s2s_ad.kinds import ArrayKind
from s2s_ad.markers import CustomDerivative

TangentPass = Any  # s2s_ad.compiler.tangent.TangentPass (which imports this module)


def custom_call(tp: TangentPass, s: gast.Assign, name: str,
                prim: CustomCall) -> list[gast.stmt]:
    """``y = f(a, b)`` with a registered differential: ``y, r = f_forward(a, b)`` and
    ``t_y = f_differential(r, t_a, t_b)`` (zero tangents for operands without one)."""
    cx = tp.cx
    entry = prim.differential
    if entry is None:
        raise no_differential(tp, s, prim)
    operands = [prim.operands[p] for p in entry.positions(len(prim.operands))]
    if not any(tp.carries(a) for a in operands):
        return [calls.primal_stmt(cx, s)] + tp.header() + [
            assign(tp.tangent(name), tp.zero_like(load(name), cx.kinds.get(name)), tp.line)]
    tangents = [load(tp.tangent(a.id)) if tp.carries(a) else tp.zero_like(a, cx.kind(a))
                for a in operands]
    kinds = [_tangent_kind(cx.kind(a)) for a in operands]
    links = _linkable(tp, prim, entry, kinds)
    if links is not None:
        fwd_link, diff_link = links
        res = cx.namer.fresh(f"{name}_residuals")
        cx.kinds[res] = fwd_link.transform.result_kind[1]
        value = call_node(load(fwd_link.primal),
                          list(prim.operands) + calls.passed_globals(cx, fwd_link))
        tangent = call_node(load(diff_link.primal),
                            [load(res)] + tangents + calls.passed_globals(cx, diff_link))
    else:  # called as it is: Python runs the module
        res = cx.namer.fresh(f"{name}_differential")
        cx.kinds[res] = "unknown"
        value = call_node(load(cx.external(entry.derivative)), list(prim.operands))
        tangent = call_node(load(res), tangents)
    node = assignment([store_tuple([store(name), store(res)])], value)
    set_line(node, tp.line)
    if cx.kinds.get(name) in ("float", "int", "bool") or isinstance(cx.kinds.get(name),
                                                                    ArrayKind):
        label = repr(getattr(prim.callee, "__name__", "the function"))
        tangent = call("rt.given_tangent", tangent, load(name), const(label))
    return [node] + tp.header() + [assign(tp.tangent(name), tangent, tp.line)]


def _tangent_kind(kind: object) -> object:
    """The kind of the tangent passed for an operand of ``kind`` (numbers: a float)."""
    return "float" if kind in ("int", "bool") else kind


def _linkable(tp: TangentPass, prim: Primitive, entry: CustomDerivative,
              tangent_kinds: list) -> tuple[CalleeLink, CalleeLink] | None:
    """The links of the split (forward, differential) parts when both can be transformed
    and read no global variable the function does not pass already; None otherwise."""
    cx = tp.cx
    split = split_of(entry)
    if split is None:
        return None
    hidden, links = dict(cx.hidden), dict(cx.links)
    try:
        fwd_link = calls.link_callee(cx, prim, split[0], primal_only=True)
        res_kind = fwd_link.transform.result_kind
        diff_link = None
        if isinstance(res_kind, tuple) and len(res_kind) == 2:
            diff_link = calls.link_callee(cx, prim, split[1], [res_kind[1]] + tangent_kinds,
                                          primal_only=True)
    except NonDifferentiableError:
        diff_link = None
    # a global variable the function does not pass yet cannot be added to its parameters
    # now (its reverse-mode functions are made): such a differential is called as it is
    if diff_link is None or cx.hidden.keys() != hidden.keys():
        cx.hidden.clear()
        cx.hidden.update(hidden)
        cx.links.clear()
        cx.links.update(links)
        return None
    return fwd_link, diff_link


def no_differential(tp: TangentPass, s: gast.stmt, prim: Primitive) -> NonDifferentiableError:
    """Forward mode through a function whose custom derivative has only a pullback."""
    name = getattr(prim.callee, "__name__", "the function")
    return NonDifferentiableError(
        f"forward mode through the custom derivative of '{name}' needs a differential, but "
        "only a pullback is registered for it (forward mode cannot use a pullback)",
        tp.location(s),
        f"register one with @ad.derivative(of={name}, mode=\"forward\") returning "
        "(value, differential), or use reverse mode (ad.gradient)")


def refused_hook(tp: TangentPass, s: gast.stmt) -> NonDifferentiableError:
    """``with_derivative(v, hook)`` in forward mode: the hook acts on cotangents, so
    skipping it could give another derivative than reverse mode (a clipping hook)."""
    return NonDifferentiableError(
        "forward mode cannot run a with_derivative hook: hooks act on cotangents in the "
        "pullback, and skipping one that rewrites them would give a different derivative "
        "than reverse mode", tp.location(s.value),
        "use reverse mode (ad.gradient, ad.pullback) for this function, or leave the hook "
        "out of the code forward mode differentiates")


def one_mode_calls(transform: Any) -> list[tuple[Location, str]]:
    """Calls, in the function ``transform`` made and the functions it calls, of a function
    whose custom derivative serves one mode only: only a pullback (forward mode refuses
    the call) or only a differential (reverse mode does), and of a kernel without a
    registered tangent (forward mode refuses it); each located, with a message."""
    found: list[tuple[Location, str]] = []
    todo, seen = [transform], set()
    while todo:
        t = todo.pop()
        if id(t) in seen or t.generated is None:
            continue
        seen.add(id(t))
        todo += [link.transform for link in t.generated.links]
        for node in gast.walk(t.normal.node):
            if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)
                    and isinstance(node.value, gast.Call)):
                continue
            prim = classify(node.value)
            message = ""
            if isinstance(prim, CustomCall):
                message = _one_mode_message(t.activity, node.targets[0].id, prim)
            elif isinstance(prim, KernelCall) and node.targets[0].id in t.activity.varied:
                message = kernel_note(node.value)
            if message:
                found.append((t.parsed.location(node.value), message))
    return found


def _one_mode_message(activity: Any, target: str, prim: CustomCall) -> str:
    name = getattr(prim.callee, "__name__", "the function")
    if prim.differential is None and target in activity.varied:
        return (f"the custom derivative of '{name}' has only a pullback: forward mode "
                f"(ad.jvp / ad.jacobian / ad.hessian) through this call needs "
                f"@ad.derivative(of={name}, mode=\"forward\") returning (value, differential)")
    if prim.custom is None and activity.active(target):
        return (f"the custom derivative of '{name}' has only a differential: reverse mode "
                f"(ad.gradient / ad.pullback) through this call needs "
                f"@ad.derivative(of={name}) returning (value, pullback)")
    return ""
