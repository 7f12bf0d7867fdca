"""The forward, pullback and fused stages (reverse): ANF -> primal, forward, pullback
and fused value-and-gradient.

Guarantees about the four ``FunctionDef`` trees it returns:

* ``forward(params) -> (value, residuals)`` runs the original statements once,
  plus saves: a value the pullback needs is read by name when it is assigned
  once at the top level, copied to a residual variable when saved at the top
  level, and pushed onto a tape when saved inside a loop or branch;
* numeric tapes are NumPy arrays indexed by the loop's position counter,
  preallocated to the trip count for a top-level ``for ... in range`` loop and
  grown on demand otherwise; other values go on typed lists used as stacks;
* branch decisions and per-entry loop trip counts are saved the same way, so
  ``pullback(residuals, d_value) -> d_params`` replays the control flow in
  reverse without re-running any original statement (no side effect repeats);
* only active variables (see :mod:`s2s_ad.activity`) get adjoint code;
* every generated statement keeps the ``line`` annotation of its source line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast

from s2s_ad.compiler.activity import Activity
from s2s_ad.compiler.ir import GlobalRead
from s2s_ad.compiler.normalize import NormalFunction
from s2s_ad.compiler.reverse import calls, control, parallel, recompute
from s2s_ad.compiler.reverse.context import CalleeLink, Context, Linker, Where
from s2s_ad.compiler.syntax.annotations import line_of
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    call,
    comment,
    const,
    function_def,
    load,
    return_stmt,
    store,
    store_item,
    store_tuple,
    tuple_of,
    zero,
)
from s2s_ad.compiler.syntax.names import module_function_name
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind, carries_derivative


@dataclass
class Generated:
    """The output of :func:`reverse`: four functions and what they need injected."""

    primal: gast.FunctionDef
    forward: gast.FunctionDef
    pullback: gast.FunctionDef
    fused: gast.FunctionDef
    links: list[CalleeLink]
    externals: dict[str, Any]
    residuals: list[str]
    residual_kinds: list[Kind]
    tapes: dict[str, str]  # tape name -> "preallocated" | "growable" | "list"
    hidden: list[GlobalRead]  # globals passed after the parameters, in order
    context: Context | None = None  # what the tangent stage (forward mode) builds on


def reverse(norm: NormalFunction, kinds: dict[str, Kind], activity: Activity,
            wrt: list[str], float_dtype: str, linker: Linker,
            parallel: bool = False) -> Generated:
    """Build the primal, forward, pullback and fused functions of ``norm``.

    ``linker(callee, argument_kinds, primal_only)`` returns the transform of a
    called Python function (with ``name`` and ``wrt_positions``; differentiating
    nothing when ``primal_only``); the pipeline provides it.  With ``parallel``,
    ``prange`` loops run in parallel (see ``parallel``).
    """
    for p in wrt:
        if not carries_derivative(kinds.get(p)):
            raise NonDifferentiableError(f"parameter '{p}' cannot be differentiated: its "
                                         f"value is of kind {kinds.get(p)!r}")
    return run(Context(norm, dict(kinds), activity, wrt, float_dtype, linker, parallel))


def run(cx: Context) -> Generated:
    norm = cx.norm
    fdef = norm.node
    *body, ret = fdef.body
    result = ret.value
    cx.top = recompute.plan_top(cx)
    fwd_body, rev_body = control.block(cx, body, Where())
    recomputed = recompute.top_head(cx, calls.primal_stmt)
    cx.line = line_of(ret, cx.line)
    primal_body = [x for s in body for x in _listed(parallel.primal(cx, s))] + [ret]
    seed_name = cx.namer.fresh("d_value")
    result_kind = cx.kind(result)
    seed: list[gast.stmt] = []
    if cx.active(result):
        seed = cx.accumulate(result.id, result_kind, load(seed_name))
    inits = [comment("cotangents start at zero")] + [
        assign(cx.adj(v), call("rt.materialize", zero(cx.kinds.get(v)), load(v))
               if v in cx.full_cotangents else zero(cx.kinds.get(v)))
        for v in list(cx.adjoints)]
    if seed:
        seed = [comment("the cotangent of the result seeds the pullback")] + seed
    grads = tuple_of([gradient_of(cx, p) for p in cx.wrt])
    residual_tuple = tuple_of([load(r) for r in cx.residuals])
    name = module_function_name(fdef.name)
    value_name = cx.namer.fresh("value")
    params = norm.params + list(cx.hidden)  # the globals read, after the parameters
    forward = function_def(f"{name}_forward", params, cx.fwd_init + fwd_body + [
        return_stmt(tuple_of([result, residual_tuple]))])
    residuals_arg = cx.namer.fresh("residuals")
    unpack = [assignment([store_tuple([store(r) for r in cx.residuals])], load(residuals_arg))] \
        if cx.residuals else []
    reverse_part = recomputed + cx.cursors + inits + seed + rev_body
    snapshot, put_back = keep_written(cx)
    pullback = function_def(f"{name}_pullback", [residuals_arg, seed_name],
                            unpack + snapshot + reverse_part + put_back +
                            [return_stmt(grads)])
    fused = function_def(f"{name}_value_and_grad", params, cx.fwd_init + fwd_body + [
        assign(value_name, result), assign(seed_name, const(1.0))] + reverse_part + [
        return_stmt(tuple_of([load(value_name), grads]))])
    primal = function_def(name, params, primal_body)
    return Generated(primal=primal, forward=forward, pullback=pullback, fused=fused,
                     links=list(cx.links.values()), externals=cx.externals,
                     residuals=cx.residuals,
                     residual_kinds=cx.residual_kinds, tapes=cx.tapes,
                     hidden=list(cx.hidden.values()), context=cx)


def keep_written(cx: Context) -> tuple[list[gast.stmt], list[gast.stmt]]:
    """The pullback restores overwritten items in place; it snapshots each written
    array first and puts it back at the end, so it can run again."""
    snapshot, put_back = [], []
    for name in cx.written:
        final = cx.namer.fresh(f"{name}_final")
        snapshot.append(assign(final, call("np.copy", load(name))))
        everything = const(Ellipsis)  # a[...]: every item, for a 0-d array too
        put_back.append(assignment([store_item(load(name), everything)], load(final)))
    return snapshot, put_back


def gradient_of(cx: Context, param: str) -> gast.expr:
    """The pullback's output for a parameter (array cotangents as full arrays)."""
    kind = cx.kinds.get(param, "float")
    if not isinstance(kind, ArrayKind):
        return load(cx.adjoints[param]) if param in cx.adjoints else zero(kind)
    if param in cx.stable:
        cx.residual(param, kind)
        initial = param
    else:
        initial = cx.namer.fresh(f"{param}_initial")
        cx.fwd_init.insert(0, assign(initial, load(param)))
        cx.residual(initial, kind)
    return call("rt.materialize", load(cx.adj(param)) if param in cx.adjoints
                 else zero(kind), load(initial))


def _listed(stmt: gast.stmt | list[gast.stmt]) -> list[gast.stmt]:
    return stmt if isinstance(stmt, list) else [stmt]
