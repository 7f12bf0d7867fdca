"""Checking gradients against references that do not use the compiler.

:func:`check_grads` compares what s2s_ad computes with central finite
differences of the original function, checks the dot-product identity
``<u, J v> = <J^T u, v>``, and checks that the compiled and the Python paths
agree.  The project's own tests use it; so can yours:

>>> import math
>>> import s2s_ad as ad
>>> from s2s_ad.testing import check_grads
>>> def f(x, y):
...     return math.sin(x) * y + x ** 2
>>> check_grads(f, 1.0, 2.0, paths=("python",))
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .api import DifferentiableFunction, differentiable, value_with_pullback

_PATHS = {"python": False, "numba": True}
_ROUNDOFF_ULPS = 16.0
_EPS = float(np.finfo(np.float64).eps)


def check_grads(f: Callable, *args: Any, wrt: Iterable[str] | None = None,
                paths: Sequence[str] = ("python", "numba"), seed: int = 0,
                rtol: float = 1e-5, atol: float = 1e-7, path_rtol: float = 1e-12,
                max_entries: int = 64) -> None:
    """Raise ``AssertionError`` unless ``f``'s derivative at ``args`` is right.

    For each path in ``paths`` ("python": the generated source; "numba": it
    compiled, which must succeed) the pullback of a random cotangent ``u`` is
    compared with central finite differences of the original ``f``, entry by
    entry (at most ``max_entries`` per argument, chosen at random), and along a
    random direction ``v`` of every differentiated argument (the dot-product
    identity).  Values and cotangents of the paths must agree to ``path_rtol``.
    Arguments are copied for every evaluation, so functions that write into
    their arguments are measured from the same point.
    """
    original = f.fn if isinstance(f, DifferentiableFunction) else f
    results = {}
    for path in paths:
        rng = np.random.default_rng(seed)  # the same u and v on every path
        df = differentiable(original, wrt=wrt, jit=_PATHS[path])
        value, pullback = value_with_pullback(df, *copy.deepcopy(args))
        u = _random_like(value, rng)
        grads = pullback(u)
        positions = df.wrt_positions(args)
        grads = (grads,) if len(positions) == 1 else tuple(grads)
        results[path] = (value, grads)
        for pos, g in zip(positions, grads, strict=True):
            _check_entries(original, args, pos, g, u, rng, rtol, atol, max_entries, path)
        _check_dot_product(original, args, positions, grads, u, rng, rtol, atol, path)
    _check_paths_agree(results, path_rtol)


def _random_like(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, np.ndarray):
        return rng.uniform(0.5, 1.5, value.shape) * rng.choice([-1.0, 1.0], value.shape)
    return float(rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0]))


def _inner(a: Any, b: Any) -> float:
    return math.fsum(np.ravel(np.asarray(a, dtype=np.float64) * np.asarray(b, np.float64)))


def _moved(args: Sequence, steps: dict[int, Any], h: float) -> list:
    out = copy.deepcopy(list(args))
    for pos, direction in steps.items():
        base = np.asarray(args[pos], dtype=np.float64)
        moved = base + h * np.asarray(direction, dtype=np.float64)
        out[pos] = moved if isinstance(args[pos], np.ndarray) else float(moved)
    return out


def _directional(f: Callable, args: Sequence, steps: dict[int, Any], u: Any,
                 h: float) -> tuple[float, float]:
    """<u, (f(x + h v) - f(x - h v)) / 2h> and a bound on its rounding error."""
    plus = np.asarray(f(*_moved(args, steps, h)), dtype=np.float64)
    minus = np.asarray(f(*_moved(args, steps, -h)), dtype=np.float64)
    estimate = _inner(u, (plus - minus) / (2.0 * h))
    scale = _inner(np.abs(u), np.maximum(np.abs(plus), np.abs(minus)))
    return estimate, _ROUNDOFF_ULPS * _EPS * scale / (2.0 * h)


def _step(args: Sequence, positions: Iterable[int]) -> float:
    size = max([1.0] + [float(np.max(np.abs(args[p]), initial=0.0)) for p in positions])
    return 1e-6 * size


def _check_entries(f, args, pos, grad, u, rng, rtol, atol, max_entries, path) -> None:
    shape = np.shape(args[pos])
    count = int(np.prod(shape))
    picks = range(count) if count <= max_entries else rng.choice(count, max_entries, False)
    flat = np.ravel(np.asarray(grad, dtype=np.float64))
    h = _step(args, [pos])
    for k in picks:
        direction = np.zeros(count)
        direction[k] = 1.0
        estimate, rounding = _directional(f, args, {pos: direction.reshape(shape)}, u, h)
        allowed = atol + rtol * abs(estimate) + rounding
        assert abs(flat[k] - estimate) <= allowed, (
            f"{path} path: d/d(argument {pos})[{k}] is {flat[k]!r} but central finite "
            f"differences give {estimate!r} (difference {abs(flat[k] - estimate):.3e} > "
            f"{allowed:.3e})")


def _check_dot_product(f, args, positions, grads, u, rng, rtol, atol, path) -> None:
    steps = {p: rng.uniform(-1.0, 1.0, np.shape(args[p])) for p in positions}
    estimate, rounding = _directional(f, args, steps, u, _step(args, positions))
    terms = [_inner(g, steps[p]) for p, g in zip(positions, grads, strict=True)]
    rhs = math.fsum(terms)
    allowed = atol + rtol * math.fsum(abs(t) for t in terms) + rounding
    assert abs(estimate - rhs) <= allowed, (
        f"{path} path: <u, J v> = {estimate!r} but <J^T u, v> = {rhs!r} "
        f"(difference {abs(estimate - rhs):.3e} > {allowed:.3e})")


def _check_paths_agree(results: dict, path_rtol: float) -> None:
    if len(results) < 2:
        return
    (first, (v1, g1)), *rest = results.items()
    for other, (v2, g2) in rest:
        for what, a, b in [("value", v1, v2)] + [
                (f"cotangent {i}", x, y) for i, (x, y) in enumerate(zip(g1, g2, strict=True))]:
            a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
            close = np.abs(a - b) <= path_rtol * np.maximum(np.abs(a), np.abs(b)) + 1e-300
            assert np.all(close), f"{what}: {first} path gives {a!r}, {other} path {b!r}"
