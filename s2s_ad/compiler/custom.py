"""Registered derivatives in Swift's form, split into forward and pullback code
(a differential, ``mode="forward"``, is split the same way).

A derivative whose last statement returns a value and a lambda (or a nested
``def``) is *split*: the part before the return becomes a forward function
returning ``(value, residuals)``, the pullback's body becomes a function of
``(residuals, cotangent)``, and the pullback's free variables become the
residuals, so Numba compiles both.  Any other derivative is called as is::

    def silly_derivative(x):              def silly_derivative_split_forward(x):
        y = silly_exp(x)          ->          y = silly_exp(x)
        return y, lambda v: v * y             return y, (y,)
                                          def silly_derivative_split_pullback(residuals, v):
                                              y, = residuals
                                              return v * y
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import gast

from s2s_ad.compiler.ir import LocalFunction, ParsedFunction
from s2s_ad.compiler.parse import finish_parse, lambda_to_def, parse_function
from s2s_ad.compiler.syntax.builders import (
    assignment,
    call_node,
    def_like,
    load,
    loaded_names,
    return_stmt,
    store,
    store_tuple,
    stored_names,
    tuple_of,
)
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.markers import CustomDerivative

Split = tuple[LocalFunction, LocalFunction]

_splits: dict[int, tuple[Callable, Split | None]] = {}


def split_of(custom: CustomDerivative) -> Split | None:
    """The (forward, pullback) functions of a registered derivative, or None (cached)."""
    fn = custom.derivative
    hit = _splits.get(id(fn))
    if hit is None or hit[0] is not fn:
        hit = (fn, _split(fn, "pullback" if custom.mode == "reverse" else "differential"))
        _splits[id(fn)] = hit
    return hit[1]


def calling_wrapper(fn: Callable, parsed: ParsedFunction) -> LocalFunction:
    """``def f(a, b): return f(a, b)``: differentiating it uses ``f``'s registration.

    Used when the function differentiated at the top level has a registered
    derivative, which must win over its source.
    """
    args = [load(p) for p in parsed.params]
    registered = Namer(set(parsed.params)).fresh("registered")
    call = call_node(load(registered), args)
    ret = gast.copy_location(return_stmt(gast.copy_location(call, parsed.node)),
                             parsed.node)
    fdef = def_like(parsed.name, [store(p) for p in parsed.params], [ret], parsed.node)
    wrapper = ParsedFunction(name=parsed.name, node=fdef, filename=parsed.filename,
                             namespace={registered: fn}, key=(parsed.key, "registered"))
    finish_parse(wrapper)
    return LocalFunction(parsed=wrapper, free=())



def _split(fn: Callable, role: str) -> Split | None:
    """Split a Swift-form derivative into forward and pullback (or differential, as
    ``role`` says) functions."""
    try:
        parsed = parse_function(fn)
    except Exception:  # no source: it will be called as a black box
        return None
    body = parsed.node.body
    last = body[-1] if body else None
    if not (isinstance(last, gast.Return) and isinstance(last.value, gast.Tuple)
            and len(last.value.elts) == 2):
        return None
    value, pb = last.value.elts
    pb_def = _pullback_def(pb, body[:-1], role)
    if pb_def is None:
        return None
    own = {a.id for a in pb_def.args.args} | set(stored_names(pb_def.body))
    local = {a.id for a in parsed.node.args.args} | set(stored_names(body[:-1]))
    free = sorted((set(loaded_names(pb_def)) - own) & local)
    forward_body = [s for s in copy.deepcopy(body[:-1])
                    if not (isinstance(s, gast.FunctionDef) and s.name == pb_def.name)]
    residuals = tuple_of([load(v) for v in free])
    ret = return_stmt(tuple_of([copy.deepcopy(value), residuals]))
    forward = def_like(f"{parsed.name}_split_forward", copy.deepcopy(parsed.node.args.args),
                    forward_body + [gast.copy_location(ret, last)], parsed.node)
    res_name = Namer({n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}).fresh(
        "residuals")
    unpack = assignment([store_tuple([store(v) for v in free])], load(res_name))
    gast.copy_location(unpack, pb_def)
    pb_args = [store(res_name)] + copy.deepcopy(pb_def.args.args)
    pullback = def_like(f"{parsed.name}_split_{role}", pb_args,
                     ([unpack] if free else []) + copy.deepcopy(pb_def.body), pb_def)
    return _local(parsed, forward), _local(parsed, pullback)


def _pullback_def(pb: gast.expr, before: list[gast.stmt],
                  role: str) -> gast.FunctionDef | None:
    if isinstance(pb, gast.Lambda):
        return lambda_to_def(pb, role)
    if isinstance(pb, gast.Name):
        for s in before:
            if isinstance(s, gast.FunctionDef) and s.name == pb.id:
                return s
    return None


def _local(parsed: ParsedFunction, fdef: gast.FunctionDef) -> LocalFunction:
    part = ParsedFunction(name=fdef.name, node=fdef, filename=parsed.filename,
                          namespace=parsed.namespace, key=(parsed.key, fdef.name))
    finish_parse(part)
    return LocalFunction(parsed=part, free=())
