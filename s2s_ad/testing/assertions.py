"""Assertions comparing gradients with the references of :mod:`.differences`.

Arguments may be floats, NumPy float scalars or float arrays of any shape
(0-d and empty included); ints, bools and int arrays are not differentiated,
as ``wrt`` leaves them out by default.  A function's result may be a scalar
or an array; an array result is reduced with a cotangent u of its shape, so
everything checks the vector-Jacobian product ``J^T u``.

>>> import math
>>> assert_vjp_matches_fd(lambda x, y: math.sin(x) * y, (0.3, 2.0), 1.0,
...                       (2.0 * math.cos(0.3), math.sin(0.3)))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .differences import directional_difference, partial_derivatives, relative_step

FD_RTOL = 1e-5
FD_ATOL = 1e-7


def is_differentiable_argument(value: Any) -> bool:
    """True for the arguments ``wrt`` picks by default: floats, NumPy float scalars
    and float arrays.

    >>> [is_differentiable_argument(v) for v in (1.0, 1, np.ones(2), np.arange(2))]
    [True, False, True, False]
    """
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    return isinstance(value, float | np.floating)


def differentiable_indices(args: Sequence) -> list[int]:
    """Positions of the arguments that get a gradient entry.

    >>> differentiable_indices((1.0, 3, np.zeros(2)))
    [0, 2]
    """
    return [i for i, a in enumerate(args) if is_differentiable_argument(a)]


def as_tuple(gradient: Any, count: int) -> tuple:
    """The gradient as a tuple: a bare value when there is one entry, else the tuple.

    >>> as_tuple(2.0, 1), as_tuple((1.0, 2.0), 2)
    ((2.0,), (1.0, 2.0))
    """
    if count == 1:
        return (gradient,)
    assert isinstance(gradient, tuple), f"expected a tuple of {count} gradients, got {gradient!r}"
    assert len(gradient) == count, f"expected {count} gradient entries, got {len(gradient)}"
    return gradient


def in_float64(args: Sequence) -> list:
    """Fresh float64 copies of the differentiable arguments; the others unchanged.

    >>> in_float64((np.float32(0.5), 2))
    [0.5, 2]
    """
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and is_differentiable_argument(a):
            out.append(np.array(a, dtype=np.float64))
        elif is_differentiable_argument(a):
            out.append(float(a))
        else:
            out.append(a)
    return out


def random_cotangent(output: Any, rng: np.random.Generator) -> Any:
    """A random cotangent for ``output``: a Python float of magnitude in [0.5, 2) for
    a scalar result, else an array of the output's shape and dtype in [-1, 1).

    >>> random_cotangent(np.zeros((2, 3), np.float32), np.random.default_rng(0)).dtype
    dtype('float32')
    """
    if np.ndim(output) == 0:
        return float(rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0]))
    dtype = np.asarray(output).dtype
    return rng.uniform(-1.0, 1.0, np.shape(output)).astype(dtype)


def assert_vjp_matches_fd(fn: Callable, args: Sequence, u: Any, cotangents: Any, *,
                          rtol: float = FD_RTOL, atol: float = FD_ATOL) -> None:
    """Every entry of ``cotangents`` (the pullback of ``u``, or the gradient when
    ``u = 1.0``) agrees with a central difference of ``<u, fn>`` along that entry
    (:func:`.partial_derivatives`), to ``atol + rtol * |estimate| + rounding``."""
    base = in_float64(args)
    indices = differentiable_indices(base)
    cotangents = as_tuple(cotangents, len(indices))
    failures = []
    for index, got in zip(indices, cotangents, strict=True):
        estimate, rounding = partial_derivatives(fn, base, index, cotangent=u)
        got64 = np.asarray(got, dtype=np.float64)
        if got64.shape != np.shape(estimate):
            failures.append(f"argument {index}: shape {got64.shape} != {np.shape(estimate)}")
            continue
        allowed = atol + rtol * np.abs(estimate) + rounding
        bad = ~(np.abs(got64 - estimate) <= allowed)
        if np.any(bad):
            flat_bad = np.flatnonzero(bad)
            first = flat_bad[:3]
            failures.append(
                f"argument {index}: {flat_bad.size} of {bad.size} entries off; at flat "
                f"positions {first.tolist()} gradient {got64.ravel()[first].tolist()} vs "
                f"finite difference {np.ravel(estimate)[first].tolist()}")
    assert not failures, f"{getattr(fn, '__name__', 'fn')}: " + "; ".join(failures)


def assert_dot_product_identity(fn: Callable, args: Sequence, pullback: Callable, output: Any,
                                seed: int, *, rtol: float = FD_RTOL,
                                atol: float = FD_ATOL) -> None:
    """``<u, J v> == <J^T u, v>`` for a random cotangent u shaped like ``output`` and
    a random direction v shaped like the arguments.

    ``J v`` comes from one central difference of the original ``fn`` along v
    (:func:`.directional_difference`); ``J^T u`` from the ``pullback`` under test.
    The tolerance is relative to ``sum |(J^T u)_i v_i|``, since the
    finite-difference error scales with the terms, not with their (cancelling) sum.

    >>> assert_dot_product_identity(lambda x, y: x * y, (2.0, 5.0),
    ...                             lambda u: (5.0 * u, 2.0 * u), 10.0, seed=0)
    """
    base = in_float64(args)
    indices = differentiable_indices(base)
    rng = np.random.default_rng(seed)
    u = random_cotangent(output, rng)
    v = [rng.uniform(-1.0, 1.0, np.shape(base[i])) if isinstance(base[i], np.ndarray)
         else float(rng.uniform(-1.0, 1.0)) for i in indices]
    h = max([relative_step(base[i]) for i in indices], default=1e-6)
    lhs, rounding = directional_difference(fn, base, dict(zip(indices, v, strict=True)), h, u)
    cotangents = as_tuple(pullback(u), len(indices))
    terms = np.concatenate([(np.asarray(c, dtype=np.float64) * vi).ravel()
                            for c, vi in zip(cotangents, v, strict=True)] + [np.zeros(0)])
    rhs = math.fsum(terms)
    allowed = atol + rtol * math.fsum(np.abs(terms)) + rounding
    assert abs(lhs - rhs) <= allowed, (
        f"{getattr(fn, '__name__', 'fn')}: <u, J v> = {lhs!r} but <J^T u, v> = {rhs!r} "
        f"(difference {abs(lhs - rhs):.3e} > {allowed:.3e})")


def relatively_close(actual: Any, expected: Any, rtol: float, *,
                     per_entry: bool = False) -> bool:
    """Equal shapes and ``|a - e| <= rtol * scale`` entry by entry.  The scale is the
    largest ``|a|`` or ``|e|`` of the whole array, so entries near zero by cancellation
    do not demand more than the arithmetic can give; with ``per_entry`` it is
    ``max(|a|, |e|)`` of each entry (stricter).

    >>> relatively_close(np.array([1e6, 1e-9]), np.array([1e6, 0.0]), 1e-12)
    True
    >>> relatively_close(np.array([1e6, 1e-9]), np.array([1e6, 0.0]), 1e-12, per_entry=True)
    False
    """
    a64 = np.asarray(actual, dtype=np.float64)
    e64 = np.asarray(expected, dtype=np.float64)
    if a64.shape != e64.shape:
        return False
    difference = np.abs(a64 - e64)
    if per_entry:
        return bool(np.all(difference <= rtol * np.maximum(np.abs(a64), np.abs(e64)) + 1e-300))
    size = max(np.max(np.abs(e64), initial=0.0), np.max(np.abs(a64), initial=0.0))
    return bool(float(np.max(difference, initial=0.0)) <= rtol * size)


def assert_close(actual: Any, expected: Any, rtol: float = 1e-12, what: str = "value") -> None:
    """:func:`relatively_close` (scaled by the largest entry), tuples item by item.

    >>> assert_close((1.0, np.array([1e6, 1e-9])), (1.0 + 1e-13, np.array([1e6, 0.0])))
    >>> assert_close(2.0, 2.001, rtol=1e-6, what="loss")
    Traceback (most recent call last):
    AssertionError: loss[0]: largest difference 1.000e-03 > 1e-06 * 2.001e+00 ...
    """
    actual_items = actual if isinstance(actual, tuple) else (actual,)
    expected_items = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual_items) == len(expected_items), f"{what}: {actual!r} vs {expected!r}"
    for k, (a, e) in enumerate(zip(actual_items, expected_items, strict=True)):
        a64 = np.asarray(a, dtype=np.float64)
        e64 = np.asarray(e, dtype=np.float64)
        assert a64.shape == e64.shape, f"{what}[{k}]: shape {a64.shape} != {e64.shape}"
        if not relatively_close(a64, e64, rtol):
            size = max(np.max(np.abs(e64), initial=0.0), np.max(np.abs(a64), initial=0.0))
            difference = float(np.max(np.abs(a64 - e64), initial=0.0))
            raise AssertionError(f"{what}[{k}]: largest difference {difference:.3e} > "
                                 f"{rtol:g} * {size:.3e}\nactual   {a64!r}\nexpected {e64!r}")


def assert_gradient_like_arguments(args: Sequence, gradient: Any) -> None:
    """Each gradient entry has its argument's type, shape and dtype.

    >>> assert_gradient_like_arguments((np.ones(2), 1.0), (np.zeros(2), 0.0))
    """
    indices = differentiable_indices(args)
    for index, g in zip(indices, as_tuple(gradient, len(indices)), strict=True):
        arg = args[index]
        if isinstance(arg, np.ndarray):
            assert isinstance(g, np.ndarray), (
                f"argument {index} is an array {arg.shape}, gradient is {type(g).__name__}")
            assert g.shape == arg.shape, f"argument {index}: shape {g.shape} != {arg.shape}"
            assert g.dtype == arg.dtype, f"argument {index}: dtype {g.dtype} != {arg.dtype}"
        else:
            assert type(g) is type(arg), (
                f"argument {index} is {type(arg).__name__}, gradient is {type(g).__name__}")
