"""Markers in user code: stop-gradient, derivative hooks and custom derivatives.

``without_derivative(v)`` and ``with_derivative(v, hook)`` return ``v``; the
compiler reads them as a cut and as a hook.  ``@derivative(of=f)`` registers a
derivative in Swift's form, a function returning ``(value, pullback)``::

    @derivative(of=silly_exp)
    def silly_derivative(x):
        y = silly_exp(x)
        return y, lambda v: v * y

A derivative whose last statement returns a value and a lambda (or a nested
``def``) is *split*: the part before the return becomes forward code, the
pullback's body becomes pullback code, and its free variables become
residuals, so Numba can compile it.  Any other derivative is called as is.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import gast

from .ir import LocalFunction, ParsedFunction
from .parse import finish_parse, lambda_to_def, parse_function


def without_derivative(value: Any) -> Any:
    """Return ``value``; no derivative flows back through it, and no warning is given.

    >>> without_derivative(3.0)
    3.0
    """
    return value


def with_derivative(value: Any, hook: Callable[[Any], Any]) -> Any:
    """Return ``value``; in the pullback ``hook(cotangent)`` runs on its cotangent.

    The hook runs once the cotangent of ``value`` is complete (hooks run in
    reverse program order).  If it returns something other than ``None``, that
    replaces the cotangent; array cotangents may also be changed in place.

    >>> with_derivative(2.0, print)
    2.0
    """
    return value


@dataclass
class CustomDerivative:
    """A registered derivative: the function, its derivative, and the parameters."""

    of: Any
    derivative: Callable
    wrt: tuple[int, ...] | None  # positions differentiated; None: all
    split: tuple[LocalFunction, LocalFunction] | None = None
    split_reason: str = ""

    def positions(self, nargs: int) -> list[int]:
        return list(self.wrt) if self.wrt is not None else list(range(nargs))


_registry: dict[int, CustomDerivative] = {}


def derivative(of: Any, wrt: Iterable[str] | None = None) -> Callable:
    """Register the decorated function as the derivative of ``of``.

    The derivative takes the same arguments and returns ``(value, pullback)``;
    ``pullback(cotangent)`` returns the cotangent of the differentiated
    parameter (a tuple when there are several).  ``wrt`` names the parameters
    it differentiates (default: all).  A registration wins over differentiating
    ``of``'s source; registering again replaces the old one with a warning.

    >>> import math
    >>> def cube(x):
    ...     return x ** 3
    >>> @derivative(of=cube)
    ... def cube_vjp(x):
    ...     return cube(x), lambda v: 3.0 * x * x * v
    """

    def register(fn: Callable) -> Callable:
        positions = None
        if wrt is not None:
            names = list(getattr(getattr(of, "__code__", None), "co_varnames", ()))
            unknown = [w for w in wrt if w not in names]
            if unknown:
                raise ValueError(f"@derivative(of={getattr(of, '__name__', of)}): wrt names "
                                 f"{unknown} that are not parameters")
            positions = tuple(names.index(w) for w in wrt)
        if id(of) in _registry and _registry[id(of)].of is of:
            warnings.warn(f"a derivative of {getattr(of, '__name__', of)!r} was already "
                          f"registered; {fn.__name__!r} replaces it", UserWarning, stacklevel=2)
        entry = CustomDerivative(of=of, derivative=fn, wrt=positions)
        entry.split, entry.split_reason = _split(fn)
        _registry[id(of)] = entry
        return fn

    return register


def calling_wrapper(fn: Callable, parsed: ParsedFunction) -> LocalFunction:
    """``def f(a, b): return f(a, b)``: differentiating it uses ``f``'s registration.

    Used when the function differentiated at the top level has a registered
    derivative, which must win over its source.
    """
    args = [_name(p) for p in parsed.params]
    call = gast.Call(func=_name("registered_"), args=args, keywords=[])
    ret = gast.copy_location(gast.Return(value=gast.copy_location(call, parsed.node)),
                             parsed.node)
    fdef = _fdef(parsed.name, [_name(p, gast.Param()) for p in parsed.params], [ret],
                 parsed.node)
    wrapper = ParsedFunction(name=parsed.name, node=fdef, filename=parsed.filename,
                             namespace={"registered_": fn}, key=(parsed.key, "registered"))
    finish_parse(wrapper)
    return LocalFunction(parsed=wrapper, free=())


def custom_derivative(obj: Any) -> CustomDerivative | None:
    """The registered derivative of ``obj``, if any."""
    entry = _registry.get(id(obj))
    return entry if entry is not None and entry.of is obj else None


def _split(fn: Callable) -> tuple[tuple[LocalFunction, LocalFunction] | None, str]:
    """Split a Swift-form derivative into forward and pullback functions."""
    try:
        parsed = parse_function(fn)
    except Exception as exc:  # no source: it will be called as a black box
        return None, f"its source cannot be split ({type(exc).__name__})"
    body = parsed.node.body
    last = body[-1] if body else None
    if not (isinstance(last, gast.Return) and isinstance(last.value, gast.Tuple)
            and len(last.value.elts) == 2):
        return None, "it does not end with 'return value, pullback'"
    value, pb = last.value.elts
    pb_def = _pullback_def(pb, body[:-1])
    if pb_def is None:
        return None, "its pullback is neither a lambda nor a nested def"
    own = {a.id for a in pb_def.args.args} | _stored(pb_def.body)
    local = {a.id for a in parsed.node.args.args} | _stored(body[:-1])
    free = sorted((_loaded(pb_def) - own) & local)
    forward_body = [s for s in copy.deepcopy(body[:-1])
                    if not (isinstance(s, gast.FunctionDef) and s.name == pb_def.name)]
    residuals = gast.Tuple(elts=[_name(v) for v in free], ctx=gast.Load())
    ret = gast.Return(value=gast.Tuple(elts=[copy.deepcopy(value), residuals], ctx=gast.Load()))
    forward = _fdef(f"{parsed.name}_split_forward", copy.deepcopy(parsed.node.args.args),
                    forward_body + [gast.copy_location(ret, last)], parsed.node)
    res_name = "residuals_"
    unpack = gast.Assign(targets=[gast.Tuple(elts=[_name(v, gast.Store()) for v in free],
                                             ctx=gast.Store())],
                         value=_name(res_name), type_comment=None)
    gast.copy_location(unpack, pb_def)
    pb_args = [_name(res_name, gast.Param())] + copy.deepcopy(pb_def.args.args)
    pullback = _fdef(f"{parsed.name}_split_pullback", pb_args,
                     ([unpack] if free else []) + copy.deepcopy(pb_def.body), pb_def)
    return (_local(parsed, forward), _local(parsed, pullback)), ""


def _pullback_def(pb: gast.expr, before: list[gast.stmt]) -> gast.FunctionDef | None:
    if isinstance(pb, gast.Lambda):
        return lambda_to_def(pb, "pullback")
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


def _fdef(name: str, args: list, body: list, like: gast.AST) -> gast.FunctionDef:
    for a in args:
        a.ctx = gast.Param()
    node = gast.FunctionDef(
        name=name, args=gast.arguments(args=args, posonlyargs=[], vararg=None, kwonlyargs=[],
                                       kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None, type_params=[])
    return gast.copy_location(node, like)


def _name(name: str, ctx: Any = None) -> gast.Name:
    return gast.Name(id=name, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _stored(stmts: list[gast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _loaded(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
