"""Reference checks for gradients: central finite differences, the dot-product identity,
and agreement between two implementations.

Finite differences here always run the original Python function in float64, never
anything the compiler produced, so they are an independent reference.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np

EPS = float(np.finfo(np.float64).eps)
FD_RTOL = 1e-5
FD_ATOL = 1e-7
# Rounding in f itself: each evaluation is trusted to ROUNDOFF_ULPS * eps * |f|, and the
# central difference divides that error by the step, so it is added to the tolerance.
ROUNDOFF_ULPS = 16.0


def is_differentiable_argument(value) -> bool:
    """True for the arguments `wrt` picks by default: Python floats and NumPy float scalars."""
    return isinstance(value, float | np.floating)


def differentiable_indices(args: Sequence) -> list[int]:
    """Positions of the arguments that get a gradient entry."""
    return [i for i, a in enumerate(args) if is_differentiable_argument(a)]


def as_tuple(gradient, count: int) -> tuple:
    """The gradient as a tuple: a bare value when there is one entry, else the tuple itself."""
    if count == 1:
        return (gradient,)
    assert isinstance(gradient, tuple), f"expected a tuple of {count} gradients, got {gradient!r}"
    assert len(gradient) == count, f"expected {count} gradient entries, got {len(gradient)}"
    return gradient


def in_float64(args: Sequence) -> list:
    """A copy of args with every float argument as a Python float (float64)."""
    return [float(a) if is_differentiable_argument(a) else a for a in args]


def _evaluate(fn: Callable, args: Sequence) -> float:
    return float(fn(*args))


def _difference_along(fn: Callable, args: Sequence, direction: dict[int, float], h: float):
    """Central difference of fn along `direction` (index -> component) with step h.

    Returns the derivative estimate and the bound on its rounding error.
    """
    plus, minus = list(args), list(args)
    for i, v in direction.items():
        plus[i] = args[i] + h * v
        minus[i] = args[i] - h * v
    f_plus, f_minus = _evaluate(fn, plus), _evaluate(fn, minus)
    estimate = (f_plus - f_minus) / (2.0 * h)
    rounding = ROUNDOFF_ULPS * EPS * max(abs(f_plus), abs(f_minus)) / (2.0 * h)
    return estimate, rounding


def central_difference(fn: Callable, args: Sequence, index: int) -> tuple[float, float]:
    """d fn / d args[index] by central differences with h = 1e-6 * max(1, |x|)."""
    args = in_float64(args)
    h = 1e-6 * max(1.0, abs(args[index]))
    return _difference_along(fn, args, {index: 1.0}, h)


def assert_gradient_matches_fd(
    fn: Callable, args: Sequence, gradient, *, rtol=FD_RTOL, atol=FD_ATOL
) -> None:
    """Every gradient entry agrees with the central difference of the original fn."""
    indices = differentiable_indices(args)
    grads = as_tuple(gradient, len(indices))
    failures = []
    for index, g in zip(indices, grads, strict=True):
        estimate, rounding = central_difference(fn, args, index)
        allowed = atol + rtol * abs(estimate) + rounding
        if not abs(float(g) - estimate) <= allowed:
            failures.append(
                f"argument {index}: gradient {float(g)!r}, finite difference {estimate!r}, "
                f"difference {abs(float(g) - estimate):.3e} > allowed {allowed:.3e}"
            )
    assert not failures, f"{fn.__name__}{tuple(args)}: " + "; ".join(failures)


def assert_dot_product_identity(
    fn: Callable, args: Sequence, pullback: Callable, seed: int, *, rtol=FD_RTOL, atol=FD_ATOL
) -> None:
    """u * (J v) == <J^T u, v> for a random scalar cotangent u and a random direction v.

    J v comes from a central difference of the original fn along v; J^T u comes from the
    pullback under test. The tolerance is relative to sum_i |(J^T u)_i v_i| because the
    finite-difference error scales with the individual terms, not with their (possibly
    cancelling) sum.
    """
    args = in_float64(args)
    indices = differentiable_indices(args)
    rng = np.random.default_rng(seed)
    u = float(rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0]))
    v = rng.uniform(-1.0, 1.0, size=len(indices))
    scale = max(1.0, max(abs(args[i]) for i in indices))
    h = 1e-6 * scale
    jv, rounding = _difference_along(fn, args, dict(zip(indices, v, strict=True)), h)
    lhs = u * jv
    cotangents = [float(c) for c in as_tuple(pullback(u), len(indices))]
    terms = [c * float(vi) for c, vi in zip(cotangents, v, strict=True)]
    rhs = math.fsum(terms)
    allowed = atol + rtol * math.fsum(abs(t) for t in terms) + abs(u) * rounding
    assert abs(lhs - rhs) <= allowed, (
        f"{fn.__name__}{tuple(args)}: u * (J v) = {lhs!r} but <J^T u, v> = {rhs!r} "
        f"(u={u!r}, v={v.tolist()!r}, difference {abs(lhs - rhs):.3e} > {allowed:.3e})"
    )


def assert_relatively_close(actual, expected, rtol: float = 1e-12, what: str = "value") -> None:
    """|actual - expected| <= rtol * max(|actual|, |expected|), entry by entry for tuples."""
    actual_items = actual if isinstance(actual, tuple) else (actual,)
    expected_items = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual_items) == len(expected_items), f"{what}: {actual!r} vs {expected!r}"
    for a, e in zip(actual_items, expected_items, strict=True):
        a, e = float(a), float(e)
        assert abs(a - e) <= rtol * max(abs(a), abs(e)), (
            f"{what}: {a!r} vs {e!r} differ by {abs(a - e):.3e} "
            f"(relative {abs(a - e) / max(abs(a), abs(e)):.3e} > {rtol:g})"
        )
