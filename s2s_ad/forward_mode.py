"""Forward mode: ``jvp``, the value of a function and its directional derivative, and
``jacobian`` (built by forward or reverse mode).

The tangent code is generated from the same normalized function as the pullback
(:mod:`s2s_ad.compiler.tangent`), runs the control flow as written, keeps no tape,
and compiles with Numba like the rest (``jit`` as the function's).

>>> import numpy as np
>>> def f(x, y):
...     return np.sin(x) * y
>>> value, tangent = jvp(f, (0.5, 2.0), (1.0, 0.0))   # d/dx at (0.5, 2.0)
>>> bool(np.isclose(tangent, 2.0 * np.cos(0.5)))
True
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import (
    DifferentiableFunction,
    as_differentiable,
    running,
    value_with_pullback,
)
from .boundary import lowered_args, passed_globals, raised, type_key
from .compiler.jit import signature_text
from .compiler.pipeline import Transform
from .errors import ArgumentError, JitError, NonDifferentiableError
from .gradient_object import GradientOf

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def jvp(f: Callable, primals: Sequence, tangents: Sequence, *,
        wrt: Sequence[str] | str | None = None) -> tuple[Any, Any]:
    """``(f(*primals), J @ tangents)``: the value and the derivative of ``f`` at
    ``primals`` along ``tangents`` (JAX's convention: one tangent per argument, of its
    shape; ``None`` or zero for an argument not differentiated).

    ``wrt`` names the parameters that carry tangents (default: every float argument).

    >>> value, tangent = jvp(lambda a, b: a * b + a, (3.0, 4.0), (1.0, 0.5))
    >>> value, tangent   # 1 * (4 + 1) + 0.5 * 3
    (15.0, 6.5)
    """
    if isinstance(f, GradientOf):  # forward over reverse: see s2s_ad.higher_order
        return GradientOf.jvp_of(f, primals, tangents)
    df = as_differentiable(f, wrt)
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise ArgumentError(f"jvp of {df.__name__}: {len(primals)} primals but "
                            f"{len(tangents)} tangents (give one per argument)")
    args, defaulted = df.bind(primals, {})
    t = df.prepare(args, defaulted)
    if t.structured or t.structured_result or t.structured_globals:
        raise NonDifferentiableError("forward mode with structures (dataclasses, dicts, "
                                     "named tuples) is not supported yet",
                                     t.parsed.location(t.parsed.node),
                                     "use reverse mode (ad.gradient) for now")
    carried = tangents_in(df, t, args, tangents)
    passed = (*lowered_args(t, args), *passed_globals(t, t.global_values()), *carried)
    fn = jvp_callable(df, t, passed)
    value, tangent = running(t, fn, *passed)
    return raised(t, value), tangent


def tangents_in(df: DifferentiableFunction, t: Transform, args: tuple,
                 tangents: tuple) -> list:
    """The tangents of the differentiated arguments, checked against their primals."""
    params = t.parsed.params
    carried = []
    for pos, (name, primal, tangent) in enumerate(zip(params, args, tangents, strict=True)):
        if pos in t.wrt_positions:
            carried.append(_tangent_of(df, name, primal, tangent))
        elif tangent is not None and np.any(np.asarray(tangent) != 0):
            raise ArgumentError(f"argument '{name}' of {df.__name__} is not differentiated, "
                                "so its tangent must be None or zero")
    return carried


def _tangent_of(df: DifferentiableFunction, name: str, primal: Any, tangent: Any) -> Any:
    if tangent is None:
        return np.zeros_like(primal) if isinstance(primal, np.ndarray) else 0.0
    if isinstance(primal, np.ndarray):  # of the primal's float dtype, as JAX asks
        value = np.asarray(tangent, dtype=primal.dtype)
        if value.shape != primal.shape:
            raise ArgumentError(f"the tangent of argument '{name}' of {df.__name__} has shape "
                                f"{value.shape}, its value {primal.shape}")
        return value
    if np.ndim(tangent) != 0:
        raise ArgumentError(f"the tangent of argument '{name}' of {df.__name__} must be a "
                            f"number, like its value (got shape {np.shape(tangent)})")
    return float(tangent)


def jvp_callable(df: DifferentiableFunction, t: Transform, passed: tuple) -> Callable:
    """The jvp function for these arguments: compiled unless it cannot be (as ``jit``)."""
    module = t.tangent_module
    name = module.functions[0]
    cache = _compiled.setdefault(t, {})
    key = (df.jit, *map(type_key, passed))  # one transform serves every jit setting
    if key in cache:
        return cache[key]
    if df.jit is False:
        df.status[name] = ("python", "jit=False")
        fn = module.python(name)
    else:
        fn, reason = module.compiled(name, passed)
        if fn is None:
            if df.jit is True:
                raise JitError(f"Numba cannot compile {name} (generated from "
                               f"{t.parsed.filename}:{t.parsed.node.lineno}): {reason}")
            df.status[name] = ("python", reason)
            fn = module.python(name)
        else:
            df.status[name] = ("numba", f"Numba compiled it for ({signature_text(passed)})")
    cache[key] = fn
    return fn


def jacobian(f: Callable, wrt: Sequence[str] | str | None = None,
             mode: str = "auto") -> Callable:
    """A function of ``f``'s arguments returning the Jacobian of ``f``'s result with
    respect to ``wrt`` (default: every float argument): an array of shape
    ``result.shape + argument.shape`` per argument (a tuple of them for several).

    ``mode="forward"`` builds it a column at a time with :func:`jvp` (one run per
    input entry), ``"reverse"`` a row at a time with the pullback (one forward run,
    one pullback per output entry), ``"auto"`` picks the one with fewer runs.

    >>> import numpy as np
    >>> def polar(r, phi):
    ...     return np.array([r * np.cos(phi), r * np.sin(phi)])
    >>> jacobian(polar, mode="forward")(2.0, 0.0)
    (array([1., 0.]), array([0., 2.]))
    >>> jacobian(polar, wrt="phi", mode="reverse")(2.0, 0.0)
    array([0., 2.])
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', not {mode!r}")
    df = as_differentiable(f, wrt)

    def jacobian_of(*args: Any) -> Any:
        bound, defaulted = df.bind(args, {})
        positions = df.prepare(bound, defaulted).wrt_positions
        value = df(*bound)
        sizes = [int(np.size(bound[p])) for p in positions]
        forward = mode == "forward" or (mode == "auto" and sum(sizes) <= np.size(value))
        blocks = (_columns(df, bound, positions, value) if forward
                  else _rows(df, bound, positions, value))
        return blocks[0] if len(blocks) == 1 else tuple(blocks)

    return jacobian_of


def _basis(like: Any, flat: int) -> Any:
    """The ``flat``-th unit vector shaped like ``like`` (1.0 for a number)."""
    if np.ndim(like) == 0:
        return 1.0
    unit = np.zeros(np.shape(like))
    unit.flat[flat] = 1.0
    return unit


def _columns(df: DifferentiableFunction, args: tuple, positions: list[int],
             value: Any) -> list[np.ndarray]:
    blocks = []
    for p in positions:
        shape = np.shape(args[p])
        columns = []
        for j in range(int(np.prod(shape, dtype=int))):
            tangents = [None] * len(args)
            tangents[p] = _basis(args[p], j)
            columns.append(np.asarray(jvp(df, args, tangents)[1], dtype=np.float64))
        block = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(value) + (0,))
        blocks.append(block.reshape(np.shape(value) + shape))
    return blocks


def _rows(df: DifferentiableFunction, args: tuple, positions: list[int],
          value: Any) -> list[np.ndarray]:
    _, pullback = value_with_pullback(df, *args)
    rows: list[list[np.ndarray]] = [[] for _ in positions]
    for i in range(int(np.size(value))):
        cotangents = pullback(_basis(value, i))
        cotangents = cotangents if len(positions) > 1 else (cotangents,)
        for k, c in enumerate(cotangents):
            rows[k].append(np.asarray(c, dtype=np.float64))
    return [np.stack(r).reshape(np.shape(value) + np.shape(args[p]))
            for r, p in zip(rows, positions, strict=True)]
