"""Reference checks for gradients of functions of NumPy arrays.

The array counterpart of gradcheck.py: arguments may be floats, NumPy float scalars
or float arrays of any shape (including 0-d and empty), and the function's result may
be a scalar or an array. A result that is an array is reduced with a cotangent u of
its shape, so everything checks the vector-Jacobian product J^T u.

Finite differences always run the original Python function on float64 copies of the
arguments, never anything the compiler produced, so they are an independent reference.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np
from gradcheck import as_tuple  # noqa: F401  (re-exported for the array tests)

EPS = float(np.finfo(np.float64).eps)
FD_RTOL = 1e-5
FD_ATOL = 1e-7
# Rounding in f itself: each evaluation is trusted to ROUNDOFF_ULPS * eps * sum |u_i f_i|,
# and the central difference divides that error by the step.
ROUNDOFF_ULPS = 16.0


def is_float_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def is_differentiable_argument(value) -> bool:
    """True for the arguments `wrt` picks by default: floats, NumPy float scalars and
    float arrays (int arrays, ints and bools are not differentiated)."""
    return isinstance(value, float | np.floating) or is_float_array(value)


def differentiable_indices(args: Sequence) -> list[int]:
    """Positions of the arguments that get a gradient entry."""
    return [i for i, a in enumerate(args) if is_differentiable_argument(a)]


def in_float64(args: Sequence) -> list:
    """Fresh float64 copies of the differentiable arguments; the others unchanged."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and is_float_array(a):
            out.append(np.array(a, dtype=np.float64))
        elif is_differentiable_argument(a):
            out.append(float(a))
        else:
            out.append(a)
    return out


def fresh_copies(args: Sequence) -> tuple:
    """Copies of the array arguments that keep dtype and memory layout (strides aside):
    a function that writes into its arguments then cannot spoil the case."""
    return tuple(a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args)


def random_cotangent(output, rng: np.random.Generator):
    """A random cotangent for `output`: a Python float for a scalar result, else an
    array of the output's shape and dtype with entries in [-1, 1)."""
    if np.ndim(output) == 0:
        return float(rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0]))
    dtype = np.asarray(output).dtype
    return rng.uniform(-1.0, 1.0, np.shape(output)).astype(dtype)


def random_direction(args: Sequence, indices: Sequence[int], rng: np.random.Generator) -> list:
    """One random tangent per differentiable argument, in float64, shaped like it."""
    return [
        rng.uniform(-1.0, 1.0, np.shape(args[i]))
        if isinstance(args[i], np.ndarray)
        else float(rng.uniform(-1.0, 1.0))
        for i in indices
    ]


def _paired(output, u) -> tuple[float, float]:
    """<u, output> in float64 and sum |u_i output_i| (the scale of its rounding)."""
    products = np.asarray(u, dtype=np.float64) * np.asarray(output, dtype=np.float64)
    return math.fsum(products.ravel()), math.fsum(np.abs(products).ravel())


def _difference(fn: Callable, plus: Sequence, minus: Sequence, u, h: float):
    # Fresh copies for each call, in case fn writes into its arguments.
    value_plus, scale_plus = _paired(fn(*fresh_copies(plus)), u)
    value_minus, scale_minus = _paired(fn(*fresh_copies(minus)), u)
    estimate = (value_plus - value_minus) / (2.0 * h)
    rounding = ROUNDOFF_ULPS * EPS * max(scale_plus, scale_minus) / (2.0 * h)
    return estimate, rounding


def _step(value: float) -> float:
    return 1e-6 * max(1.0, abs(value))


def finite_difference_vjp(fn: Callable, args: Sequence, u) -> list[tuple]:
    """For every differentiable argument, (J^T u estimate, rounding bound), each shaped
    like the argument: one central difference of <u, fn> per element."""
    base = in_float64(args)
    result = []
    for index in differentiable_indices(base):
        value = base[index]
        if not isinstance(value, np.ndarray):
            plus, minus = list(base), list(base)
            h = _step(value)
            plus[index], minus[index] = value + h, value - h
            result.append(_difference(fn, plus, minus, u, h))
            continue
        estimate = np.zeros(value.shape)
        rounding = np.zeros(value.shape)
        for position in np.ndindex(value.shape):
            plus_array, minus_array = value.copy(), value.copy()
            h = _step(value[position])
            plus_array[position] += h
            minus_array[position] -= h
            plus, minus = list(base), list(base)
            plus[index], minus[index] = plus_array, minus_array
            estimate[position], rounding[position] = _difference(fn, plus, minus, u, h)
        result.append((estimate, rounding))
    return result


def assert_vjp_matches_fd(
    fn: Callable, args: Sequence, u, cotangents, *, rtol=FD_RTOL, atol=FD_ATOL
) -> None:
    """Every entry of the cotangents (the pullback of u, or the gradient when u = 1.0)
    agrees with a central difference of <u, fn> along that entry."""
    indices = differentiable_indices(args)
    cotangents = as_tuple(cotangents, len(indices))
    failures = []
    references = finite_difference_vjp(fn, args, u)
    for index, got, (estimate, rounding) in zip(indices, cotangents, references, strict=True):
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
                f"finite difference {np.ravel(estimate)[first].tolist()}"
            )
    assert not failures, f"{fn.__name__}: " + "; ".join(failures)


def assert_dot_product_identity(
    fn: Callable,
    args: Sequence,
    pullback: Callable,
    output,
    seed: int,
    *,
    rtol=FD_RTOL,
    atol=FD_ATOL,
) -> None:
    """<u, J v> == <J^T u, v> for a random cotangent u shaped like the output and a random
    direction v shaped like the inputs.

    J v comes from one central difference of the original fn along v; J^T u from the
    pullback under test. The tolerance is relative to sum |(J^T u)_i v_i|, since the
    finite-difference error scales with the terms, not with their (cancelling) sum.
    """
    base = in_float64(args)
    indices = differentiable_indices(base)
    rng = np.random.default_rng(seed)
    u = random_cotangent(output, rng)
    v = random_direction(base, indices, rng)
    scale = max([1.0] + [float(np.max(np.abs(base[i]), initial=0.0)) for i in indices])
    h = 1e-6 * scale
    plus, minus = list(base), list(base)
    for i, vi in zip(indices, v, strict=True):
        plus[i] = base[i] + h * vi
        minus[i] = base[i] - h * vi
    lhs, rounding = _difference(fn, plus, minus, u, h)
    cotangents = as_tuple(pullback(u), len(indices))
    terms = np.concatenate(
        [
            (np.asarray(c, dtype=np.float64) * vi).ravel()
            for c, vi in zip(cotangents, v, strict=True)
        ]
        + [np.zeros(0)]
    )
    rhs = math.fsum(terms)
    allowed = atol + rtol * math.fsum(np.abs(terms)) + rounding
    assert abs(lhs - rhs) <= allowed, (
        f"{fn.__name__}: <u, J v> = {lhs!r} but <J^T u, v> = {rhs!r} "
        f"(difference {abs(lhs - rhs):.3e} > {allowed:.3e})"
    )


def assert_arrays_close(actual, expected, rtol: float = 1e-12, what: str = "value") -> None:
    """Entry by entry |a - e| <= rtol * (the largest |e| of that entry), with equal shapes;
    tuples are compared item by item. Scaling by the largest entry keeps entries that are
    near zero by cancellation from demanding more than the arithmetic can give."""
    actual_items = actual if isinstance(actual, tuple) else (actual,)
    expected_items = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual_items) == len(expected_items), f"{what}: {actual!r} vs {expected!r}"
    for k, (a, e) in enumerate(zip(actual_items, expected_items, strict=True)):
        a64 = np.asarray(a, dtype=np.float64)
        e64 = np.asarray(e, dtype=np.float64)
        assert a64.shape == e64.shape, f"{what}[{k}]: shape {a64.shape} != {e64.shape}"
        scale = max(np.max(np.abs(e64), initial=0.0), np.max(np.abs(a64), initial=0.0))
        difference = float(np.max(np.abs(a64 - e64), initial=0.0))
        assert difference <= rtol * scale, (
            f"{what}[{k}]: largest difference {difference:.3e} > {rtol:g} * {scale:.3e}\n"
            f"actual   {a64!r}\nexpected {e64!r}"
        )


def assert_gradient_like_arguments(args: Sequence, gradient) -> None:
    """Each gradient entry has its argument's type, shape and dtype."""
    indices = differentiable_indices(args)
    for index, g in zip(indices, as_tuple(gradient, len(indices)), strict=True):
        arg = args[index]
        if isinstance(arg, np.ndarray):
            assert isinstance(g, np.ndarray), (
                f"argument {index} is an array {arg.shape}, gradient is {type(g).__name__}"
            )
            assert g.shape == arg.shape, f"argument {index}: shape {g.shape} != {arg.shape}"
            assert g.dtype == arg.dtype, f"argument {index}: dtype {g.dtype} != {arg.dtype}"
        else:
            assert type(g) is type(arg), (
                f"argument {index} is {type(arg).__name__}, gradient is {type(g).__name__}"
            )


def five_point_derivative(fn: Callable, args: Sequence, index: int, position, h: float):
    """d fn / d args[index][position] by the fourth-order central stencil
    (-f(+2h) + 8 f(+h) - 8 f(-h) + f(-2h)) / 12h, with fn scalar-valued.

    Returns the estimate and the bound on its rounding error. For large objectives
    (sums over many data points) this allows a step big enough that rounding stays
    small while the truncation error, O(h^4), stays negligible.
    """
    base = in_float64(args)
    values = []
    for multiple in (2.0, 1.0, -1.0, -2.0):
        shifted = list(base)
        shifted[index] = base[index].copy()
        shifted[index][position] += multiple * h
        values.append(float(fn(*shifted)))
    estimate = (-values[0] + 8.0 * values[1] - 8.0 * values[2] + values[3]) / (12.0 * h)
    rounding = ROUNDOFF_ULPS * EPS * 18.0 * max(abs(v) for v in values) / (12.0 * h)
    return estimate, rounding
