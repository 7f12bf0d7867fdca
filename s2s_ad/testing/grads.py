"""``check_grads``: a function's derivative against the references of
:mod:`.differences`, argument by argument and leaf by leaf, on every path."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..api import DifferentiableFunction, differentiable, value_with_pullback
from ..kinds import StructKind, kind_of_value
from ..structures import leaves, rebuild
from .assertions import relatively_close
from .differences import central_difference, relative_step

_PATHS = {"python": False, "numba": True}


def check_grads(f: Callable, *args: Any, wrt: Iterable[str] | None = None,
                paths: Sequence[str] = ("python", "numba"), seed: int = 0,
                rtol: float = 1e-5, atol: float = 1e-7, path_rtol: float = 1e-12,
                max_entries: int = 64, parallel: bool = False) -> None:
    """Raise ``AssertionError`` unless ``f``'s derivative at ``args`` is right.

    For each path in ``paths`` ("python": the generated source; "numba": it
    compiled, which must succeed) the pullback of a random cotangent ``u`` is
    compared with central finite differences of the original ``f``, entry by
    entry (at most ``max_entries`` per float leaf, chosen at random), and along a
    random direction ``v`` of every differentiated argument (the dot-product
    identity).  Values and cotangents of the paths must agree to ``path_rtol``.
    Arguments are copied for every evaluation, so functions that write into
    their arguments are measured from the same point.  Structures (dataclasses,
    dicts, named tuples) and tuples are checked leaf by leaf; fields marked
    ``no_derivative`` and ints are not differentiated.  With ``parallel``, ``prange``
    loops run in parallel.
    """
    original = f.fn if isinstance(f, DifferentiableFunction) else f
    results = {}
    for path in paths:
        rng = np.random.default_rng(seed)  # the same u and v on every path
        df = differentiable(original, wrt=wrt, jit=_PATHS[path], parallel=parallel)
        value, pullback = value_with_pullback(df, *copy.deepcopy(args))
        u = random_like(value, rng)
        grads = pullback(u)
        positions = df.wrt_positions(args)
        grads = (grads,) if len(positions) == 1 else tuple(grads)
        results[path] = (value, grads)
        slots = {(pos, k): g for pos, grad in zip(positions, grads, strict=True)
                 for k, (g, live) in enumerate(_leaves_of(grad, args[pos])) if live}
        for slot, g in slots.items():
            _check_entries(original, args, slot, g, u, rng, rtol, atol, max_entries, path)
        _check_dot_product(original, args, slots, u, rng, rtol, atol, path)
    _check_paths_agree(results, path_rtol)


def _leaves_of(value: Any, like: Any = None) -> list[tuple[Any, bool]]:
    """The leaves of ``value`` in order, each with whether it is differentiated
    (a float leaf outside ``no_derivative`` fields of ``like``'s kind)."""
    like = value if like is None else like
    out: list[tuple[Any, bool]] = []
    _walk(kind_of_value(like), leaves(value), True, out)
    return out


def _walk(kind: Any, flat: Any, live: bool, out: list) -> None:
    if isinstance(kind, tuple):
        cut = kind.cut if isinstance(kind, StructKind) else frozenset()
        names = kind.fields if isinstance(kind, StructKind) else [None] * len(kind)
        for k, v, name in zip(kind, flat, names, strict=True):
            _walk(k, v, live and name not in cut, out)
        return
    floating = np.asarray(flat).dtype.kind == "f"
    out.append((flat, live and floating))


def _with_leaves(like: Any, values: list) -> Any:
    """``like`` with its leaves replaced by ``values`` (in the order of :func:`_leaves_of`)."""
    it = iter(values)

    def build(kind: Any, flat: Any) -> Any:
        if isinstance(kind, tuple):
            return tuple(build(k, v) for k, v in zip(kind, flat, strict=True))
        return next(it)

    kind = kind_of_value(like)
    return rebuild(kind, build(kind, leaves(like)))


def random_like(value: Any, rng: np.random.Generator) -> Any:
    """A random cotangent shaped like ``value`` (structures leaf by leaf, fields
    not differentiated kept), each entry of magnitude in [0.5, 1.5): the ``u`` of
    :func:`check_grads`.

    >>> random_like((1.0, np.zeros(2)), np.random.default_rng(0))[1].shape
    (2,)
    """
    if isinstance(value, np.ndarray):
        return rng.uniform(0.5, 1.5, value.shape) * rng.choice([-1.0, 1.0], value.shape)
    if isinstance(value, tuple | dict) or kind_of_value(value) != "unknown" and \
            isinstance(kind_of_value(value), tuple):
        return _with_leaves(value, [random_like(v, rng) if live else v
                                    for v, live in _leaves_of(value)])
    return float(rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0]))


def _inner(a: Any, b: Any) -> float:
    """<a, b> of two leaves (floats or arrays of one shape)."""
    return math.fsum(np.ravel(np.asarray(a, dtype=np.float64) * np.asarray(b, np.float64)))


def _moved(args: Sequence, steps: dict[tuple[int, int], Any], h: float) -> list:
    out = copy.deepcopy(list(args))
    for pos in {p for p, _ in steps}:
        new = []
        for k, (leaf, _) in enumerate(_leaves_of(args[pos])):
            if (pos, k) in steps:
                moved = np.asarray(leaf, np.float64) + h * np.asarray(steps[pos, k], np.float64)
                leaf = moved.astype(leaf.dtype) if isinstance(leaf, np.ndarray) else float(moved)
            new.append(leaf)
        out[pos] = _with_leaves(args[pos], new)
    return out


def _directional(f: Callable, args: Sequence, steps: dict, u: Any,
                 h: float) -> tuple[float, float]:
    """<u, (f(x + h v) - f(x - h v)) / 2h> and a bound on its rounding error."""
    return central_difference(lambda t: _flat(f(*_moved(args, steps, t)), u), h, _flat(u, u))


def _flat(value: Any, like: Any) -> np.ndarray:
    """The leaves of ``value`` differentiated in ``like`` (of the same kind) as one
    float64 vector."""
    if isinstance(like, np.ndarray) or not isinstance(kind_of_value(like), tuple):
        return np.ravel(np.asarray(value, np.float64))
    parts = [np.ravel(np.asarray(v, np.float64)) for (v, _), (_, live) in
             zip(_leaves_of(value), _leaves_of(like), strict=True) if live]
    return np.concatenate(parts + [np.zeros(0)])


def _leaf(args: Sequence, slot: tuple[int, int]) -> Any:
    return _leaves_of(args[slot[0]])[slot[1]][0]


def _step(args: Sequence, slots: Iterable[tuple[int, int]]) -> float:
    return max([relative_step(_leaf(args, s)) for s in slots], default=1e-6)


def _check_entries(f, args, slot, grad, u, rng, rtol, atol, max_entries, path) -> None:
    shape = np.shape(_leaf(args, slot))
    count = int(np.prod(shape))
    picks = range(count) if count <= max_entries else rng.choice(count, max_entries, False)
    flat = np.ravel(np.asarray(grad, dtype=np.float64))
    h = _step(args, [slot])
    where = f"argument {slot[0]}" + (f", leaf {slot[1]}" if slot[1] else "")
    for k in picks:
        direction = np.zeros(count)
        direction[k] = 1.0
        estimate, rounding = _directional(f, args, {slot: direction.reshape(shape)}, u, h)
        allowed = atol + rtol * abs(estimate) + rounding
        assert abs(flat[k] - estimate) <= allowed, (
            f"{path} path: d/d({where})[{k}] is {flat[k]!r} but central finite "
            f"differences give {estimate!r} (difference {abs(flat[k] - estimate):.3e} > "
            f"{allowed:.3e})")


def _check_dot_product(f, args, slots, u, rng, rtol, atol, path) -> None:
    steps = {s: rng.uniform(-1.0, 1.0, np.shape(_leaf(args, s))) for s in slots}
    estimate, rounding = _directional(f, args, steps, u, _step(args, slots))
    terms = [_inner(g, steps[s]) for s, g in slots.items()]
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
        pairs = [("value", v1, v2)] + [(f"cotangent {i}", x, y)
                                       for i, (x, y) in enumerate(zip(g1, g2, strict=True))]
        for what, a, b in pairs:
            for (x, _), (y, _) in zip(_leaves_of(a), _leaves_of(b), strict=True):
                assert relatively_close(x, y, path_rtol, per_entry=True), (
                    f"{what}: {first} path gives {a!r}, {other} path {b!r}")
