"""Second derivatives by forward over reverse: ``hvp``, ``hessian``, and the forward
mode and gradients of ``gradient(f)``.

The gradient of ``f`` is generated code (its ``<name>_value_and_grad`` function, see
:mod:`s2s_ad.compiler.reverse`); forward mode transforms that code again, as it
transforms the user's, so the tangent of the gradient along ``v`` is the
Hessian-vector product ``H v``.  The runtime helpers the gradient code calls
have tangent rules of their own (:mod:`s2s_ad.rules.runtime_rules`).

>>> def f(x, y):
...     return x * x * y + y ** 3
>>> hvp(f, (1.0, 2.0), (1.0, 0.0))   # H @ (1, 0) = (2y, 2x)
(4.0, 2.0)
>>> hessian(f)(1.0, 2.0)
((4.0, 2.0), (2.0, 12.0))
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .api import (
    DifferentiableFunction,
    as_differentiable,
    differentiable,
    running,
)
from .arguments import checked, fresh, prepared, tangents_for
from .boundary import cast_each, cast_like, lowered_args, passed_globals, type_key
from .compiler.gradient_origins import Origin, made_up_names, origin_of, scrubbed
from .compiler.pipeline import Transform
from .errors import ArgumentError, Location, NonDifferentiableError
from .fast_path import MISS
from .forward_mode import jvp, jvp_callable, tangents_in
from .gradient_object import GradientOf
from .hvp_plan import install, steady_plan

_gradient_code: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LISTS = (tuple, list)  # the primals and tangents a plan takes (the full path: any iterable)


def _value_and_grad_code(df: DifferentiableFunction, entry: str, args: tuple,
                         defaulted: frozenset[int]) -> tuple[Transform, DifferentiableFunction,
                                                             tuple]:
    """The transform of ``df`` at ``args`` (bound, checked for entry point ``entry``),
    its value-and-gradient code as a function forward mode can transform, and the
    values that code takes (the arguments, then the globals it reads)."""
    if df.parallel:  # forward mode runs prange loops serially: over the serial gradient
        df = as_differentiable(df, parallel=False)
    t = df.prepare(args, defaulted)
    checked(df, entry, t, args)
    if t.structured or t.structured_result or t.structured_globals:
        raise NonDifferentiableError("second derivatives of functions of structures "
                                     "(dataclasses, dicts, named tuples) are not supported "
                                     "yet", t.parsed.location(t.parsed.node),
                                     "pass the arrays one by one")
    code = t.module.python(t.generated.fused.name)
    by_jit = _gradient_code.setdefault(code, {})  # the code is shared by jit and not
    inner = by_jit.get(df.jit)
    if inner is None:  # forward mode differentiates every float argument of the code
        inner = by_jit[df.jit] = differentiable(code, jit=df.jit)
    passed = (*lowered_args(t, args), *passed_globals(t, t.global_values()))
    return t, inner, passed


def _gradient_code_transform(t: Transform, inner: DifferentiableFunction,
                             passed: tuple) -> Transform:
    """The transform of the gradient code ``inner`` with its tangent module built.  What
    the tangent stage refuses in that code, or fails to read, is reported at the user's
    line the refused gradient statement came from (no number is computed then)."""
    try:
        bound, defaulted = inner.bind(passed, {})
        inner_t = inner.prepare(bound, defaulted)
        _ = inner_t.tangent_module
        return inner_t
    except NonDifferentiableError as exc:
        if exc.location is None or exc.location.filename == t.parsed.filename:
            raise
        raise _relocated(t, exc.problem, exc.location) from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # reading it failed
        raise _relocated(t, f"{type(exc).__name__}: {exc}", None) from None


def _forward_over(t: Transform, inner: DifferentiableFunction, passed: tuple,
                  tangents: tuple) -> tuple[Any, Any]:
    """``jvp`` of the gradient code ``inner`` (see :func:`_gradient_code_transform`)."""
    _gradient_code_transform(t, inner, passed)
    return jvp(inner, passed, tangents)


def _relocated(t: Transform, problem: str, where: Location | None) -> NonDifferentiableError:
    """A refusal in the gradient code of ``t``, at the user's line and column it came
    from, naming the user's function and source there, never a generated name."""
    user, fused = t.parsed.node, t.generated.fused

    def origin(place: Location) -> Origin | None:
        return origin_of(fused, t.parsed.filename, user, place)

    found = origin(where) if where is not None else None
    if found is None:
        found = Origin(Location(t.parsed.filename, user.lineno, user.col_offset + 1),
                       t.parsed.name, None)
    at = f", at '{found.text}'" if found.text else ""

    def user_line(line: int) -> int | None:
        mapped = origin(Location(where.filename, line, 1)) if where is not None else None
        return mapped.location.lineno if mapped is not None else None

    return NonDifferentiableError(
        f"second derivatives of {found.function}{at}: "
        f"{scrubbed(problem, made_up_names(fused, user), user_line)}", found.location,
        "its gradient (first derivative) works; second derivatives through this are not "
        "supported yet")


@dataclass
class _Plan:
    """One compiled Hessian-vector product: for arguments of the types it was built for,
    while what it was built from holds (no helper redefined, the globals' types kept)."""

    t: Transform  # of the user's function
    inner: DifferentiableFunction  # its gradient code, as forward mode reads it
    inner_t: Transform
    fn: Callable  # the jvp of the gradient code (a Numba dispatcher, or Python)
    global_types: tuple

    def usable(self, values: tuple) -> bool:
        return self.t.current() and self.inner_t.current() and \
            tuple(map(type_key, values)) == self.global_types


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plan_for(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int],
              tangents: tuple) -> _Plan:
    """The plan of ``df`` for these arguments (bound; ``tangents`` one per argument):
    the last one built, or a new one."""
    plans = _plans.setdefault(df, {})
    key = (defaulted, *map(type_key, args))
    plan = plans.get(key)
    if plan is not None and plan.usable(plan.t.global_values()):
        return plan
    t, inner, passed = _value_and_grad_code(df, "hvp", args, defaulted)
    inner_t = _gradient_code_transform(t, inner, passed)
    full = tangents + (None,) * (len(passed) - len(tangents))
    carried = tangents_in(df, inner_t, passed, full)
    fn = jvp_callable(inner, inner_t, (*passed, *carried))
    plans[key] = plan = _Plan(t, inner, inner_t, fn, tuple(map(type_key, passed[len(args):])))
    return plan


def value_gradient_and_hvp(f: Callable, primals: Sequence, tangents: Sequence, *,
                           wrt: Sequence[str] | str | None = None) -> tuple[Any, Any, Any]:
    """``(f(*primals), gradient, H @ tangents)`` in one forward-over-reverse run;
    ``tangents`` as in :func:`jvp` (one per argument, None for those not differentiated).
    The gradient and the product are bare for one differentiated parameter, else
    tuples.  After one call with given argument types, later calls like it run a plan
    (:mod:`s2s_ad.hvp_plan`) that checks the types, reads the globals and runs the
    compiled code; a redefined helper, a rebound global function or other argument
    types miss it, and the call takes the full path.
    """
    df = as_differentiable(f, wrt)
    plan = steady_plan(df)
    if plan is not None and type(primals) in _LISTS and type(tangents) in _LISTS:
        result = plan(primals, tangents)
        if result is not MISS:
            return result
    return _full_hvp(df, tuple(primals), tuple(tangents))


def _full_hvp(df: DifferentiableFunction, primals: tuple, tangents: tuple
              ) -> tuple[Any, Any, Any]:
    """The full path of :func:`value_gradient_and_hvp`: bind (a parameter left to its
    default is a constant), find the plan, check, run; then install the steady-state
    plan of this call."""
    args, defaulted = df.bind(primals, {})
    return _bound_hvp(df, args, defaulted, tangents_for(df, "hvp", primals, tangents, args))


def _bound_hvp(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int],
               tangents: tuple) -> tuple[Any, Any, Any]:
    """:func:`_full_hvp` of bound ``args``, one tangent per argument."""
    plan = _plan_for(df, args, defaulted, tangents)
    t = plan.t
    checked(df, "hvp", t, args)  # (at every call: the arrays' memory)
    for position, (name, tangent) in enumerate(zip(t.parsed.params, tangents, strict=True)):
        if tangent is not None and position not in t.wrt_positions and \
                np.any(np.asarray(tangent) != 0):
            raise ArgumentError(f"argument '{name}' of {df.__name__} is not differentiated, "
                                "so its tangent must be None or zero")
    passed = (*args, *passed_globals(t, t.global_values()))
    full = tangents + (None,) * (len(passed) - len(tangents))
    carried = tangents_in(df, plan.inner_t, passed, full)
    (value, grads), (_, products) = running(plan.inner_t, plan.fn, *passed, *carried)
    if not defaulted:
        install(df, t, plan.inner_t, plan.fn, passed, carried)
    positions = t.wrt_positions
    return value, cast_each(positions, grads, args), cast_each(positions, products, args)


def hvp(f: Callable, primals: Sequence, tangents: Sequence, *,
        wrt: Sequence[str] | str | None = None) -> Any:
    """The Hessian of ``f`` (a function returning a number) at ``primals`` times
    ``tangents``, by forward mode over the generated gradient code: bare for one
    differentiated parameter, else a tuple (one per parameter, of its shape).

    >>> import numpy as np
    >>> def energy(q):
    ...     return 0.5 * np.sum(q ** 4)
    >>> hvp(energy, (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))   # 6 q^2 v
    array([ 6., 24.])
    """
    return value_gradient_and_hvp(f, primals, tangents, wrt=wrt)[2]


def hessian(f: Callable, wrt: Sequence[str] | str | None = None) -> Callable:
    """A function of ``f``'s arguments returning the Hessian of ``f`` with respect to
    ``wrt`` (default: every float argument), one Hessian-vector product per entry of
    the differentiated arguments: for one parameter an array of shape
    ``x.shape + x.shape`` (a number for a number), for several a tuple of rows
    ``H[i][j]`` of shape ``xi.shape + xj.shape``.

    >>> import numpy as np
    >>> def quadratic(v):
    ...     return v[0] * v[0] + 3.0 * v[0] * v[1]
    >>> hessian(quadratic)(np.array([1.0, 2.0]))
    array([[2., 3.],
           [3., 0.]])
    """
    if isinstance(f, GradientOf):
        raise ArgumentError(f"hessian of the gradient of {f.df.__name__}: third derivatives "
                            f"are not supported; ad.hessian({f.df.__name__}) is its second")
    df = as_differentiable(f, wrt)

    def hessian_of(*args: Any) -> Any:
        t, bound, defaulted = prepared(df, "hessian", args)
        positions = t.wrt_positions
        rows: list[list[np.ndarray]] = [[] for _ in positions]
        for i, p in enumerate(positions):
            shape = np.shape(bound[p])
            for j in range(int(np.prod(shape, dtype=int))):
                tangents = [None] * len(bound)
                tangents[p] = _unit(bound[p], j)
                at = fresh(t, bound)  # each product at the caller's values, left as they are
                products = value_gradient_and_hvp(df, at, tangents)[2] if not defaulted \
                    else _bound_hvp(df, at, defaulted, tuple(tangents))[2]
                products = products if len(positions) > 1 else (products,)
                rows[i].append(products)
        blocks = [[_block(rows[i], bound[p], bound[q], k) for k, q in enumerate(positions)]
                  for i, p in enumerate(positions)]
        if len(positions) == 1:
            return blocks[0][0]
        return tuple(tuple(row) for row in blocks)

    hessian_of.__s2s_ad_derivative__ = _third_order(f"the Hessian of {df.__name__}")
    return hessian_of


def jacobian_of_gradient(g: GradientOf, wrt: Sequence[str] | str | None = None) -> Callable:
    """``jacobian(gradient(f))``: the Hessian of ``f`` (``wrt``, if given, naming the
    parameters the gradient differentiates, as ``jax.jacobian(jax.grad(f))``)."""
    if wrt is not None and as_differentiable(g.df, wrt).wrt != \
            as_differentiable(g.df, g.df.wrt or wrt).wrt:
        raise ArgumentError(f"jacobian of the gradient of {g.df.__name__} with respect to "
                            "other parameters than the gradient's: use "
                            f"ad.hessian({g.df.__name__}, wrt=...) for the rows you need")
    return hessian(g.df, wrt)


def _unit(like: Any, flat: int) -> Any:
    """The ``flat``-th unit vector shaped like ``like`` (1.0 for a number)."""
    if np.ndim(like) == 0:
        return 1.0
    unit = np.zeros(np.shape(like))
    unit.flat[flat] = 1.0
    return unit


def _block(products: list, first: Any, second: Any, k: int) -> Any:
    """``H[i][k]`` from the products ``H @ e_j`` along the entries ``j`` of ``first``,
    in the arguments' precision (float32 arguments give a float32 block)."""
    if np.ndim(first) == 0 and np.ndim(second) == 0:
        return cast_like(products[0][k], first)
    dtype = np.result_type(_float_dtype(first), _float_dtype(second))
    columns = [np.asarray(p[k], dtype=dtype) for p in products]
    block = np.stack(columns) if columns else np.zeros((0,) + np.shape(second), dtype)
    return block.reshape(np.shape(first) + np.shape(second))


def _float_dtype(value: Any) -> np.dtype:
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else np.dtype(np.float64)


def jvp_of_gradient(g: GradientOf, primals: Sequence, tangents: Sequence) -> tuple[Any, Any]:
    """``jvp(gradient(f), primals, tangents)``: the gradient and its derivative along
    ``tangents`` (every float argument may move, not only those differentiated)."""
    return _gradient_and_derivative(g.df, tuple(primals), tuple(tangents))


def _gradient_and_derivative(df: DifferentiableFunction, primals: tuple,
                             tangents: tuple) -> tuple[Any, Any]:
    args, defaulted = df.bind(primals, {})
    tangents = tangents_for(df, "jvp of the gradient", primals, tangents, args)
    t, inner, passed = _value_and_grad_code(df, "gradient", args, defaulted)
    full = tangents + (None,) * (len(passed) - len(tangents))
    (_, grads), (_, products) = _forward_over(t, inner, passed, full)
    positions = t.wrt_positions
    return cast_each(positions, grads, args), cast_each(positions, products, args)


def gradient_of_gradient(g: GradientOf, wrt: Sequence[str] | str | None = None) -> Callable:
    """``gradient(gradient(f, wrt=p), wrt=q)`` for a number ``p``: ``d/dq df/dp``, the
    row ``p`` of the Hessian (``wrt`` as in :func:`s2s_ad.gradient`), from one forward
    run over the gradient code of ``f`` along ``p``.

    >>> import s2s_ad as ad
    >>> ad.gradient(ad.gradient(lambda x: x ** 4))(0.5)   # 12 x^2
    3.0
    """
    outer = as_differentiable(g.df, wrt) if wrt is not None else \
        differentiable(g.df.fn, jit=g.df.jit)  # every float argument, not the inner wrt

    def second(*args: Any) -> Any:
        bound, defaulted = g.df.bind(args, {})
        inner = g.df.prepare(bound, defaulted).wrt_positions
        if len(inner) != 1 or np.ndim(bound[inner[0]]) != 0:
            raise ArgumentError(f"the gradient of the gradient of {g.df.__name__}: the inner "
                                "gradient must be a number (one differentiated number "
                                "argument); use ad.hessian or ad.jacobian for arrays")
        tangents = [None] * len(bound)
        tangents[inner[0]] = 1.0
        return _gradient_and_derivative(outer, tuple(bound), tuple(tangents))[1]

    second.__s2s_ad_derivative__ = _third_order(f"the gradient of the gradient of "
                                                f"{g.df.__name__}")
    return second


def _third_order(what: str) -> tuple[str, str]:
    """What a refusal to differentiate a second derivative says (the parse stage reads
    it from the function's ``__s2s_ad_derivative__``)."""
    return (f"{what} is a second derivative: third derivatives are not supported",
            "ad.hessian and ad.hvp give second derivatives")


GradientOf.differentiated = staticmethod(gradient_of_gradient)
GradientOf.jvp_of = staticmethod(jvp_of_gradient)
GradientOf.jacobian_of = staticmethod(jacobian_of_gradient)
