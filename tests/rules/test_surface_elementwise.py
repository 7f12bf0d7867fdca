"""Issue 23 (surf_elem): the element-wise functions, reductions and scans, and
``scipy.special`` functions people reach for, checked systematically.

Every combination runs on the Python path (``jit=False``) against finite differences
(``check_grads``); the Numba path runs a few representative functions, each compiled
once and reused across inputs of the same types, and must agree with Python.
Conventions at kinks (stated in the rule files' docstrings) are checked by value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special as sps
from scipy.special import logsumexp, xlogy

import s2s_ad as ad
from s2s_ad.testing import check_grads

PY = ("python",)
BOTH = ("python", "numba")
SHAPES = ((), (5,), (3, 4), (2, 3, 4))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _value(shape, lo, hi, rng):
    v = rng.uniform(lo, hi, shape)
    return float(v) if shape == () else v


def _quiet(fn, *args, **kwargs):
    """Run ``fn`` with ZeroDerivativeWarning (a constant's zero gradient) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.ZeroDerivativeWarning)
        return fn(*args, **kwargs)


def _warned_once(jit, fn, *args):
    """``fn(*args)``: the first (Python) path must warn of a zero derivative; the
    transform is shared, so the Numba path after it does not warn again."""
    if jit:
        return _quiet(fn, *args)
    with pytest.warns(ad.ZeroDerivativeWarning):
        return fn(*args)


# ---- element-wise: unary --------------------------------------------------------------------
def heading_east(h):
    return np.sum(np.sin(np.deg2rad(h)) * h)


def radians_east(h):
    return np.sum(np.cos(np.radians(h)) * h)


def bearing_degrees(angle):
    return np.sum(np.rad2deg(angle) ** 2)


def bearing_degrees_alias(angle):
    return np.sum(np.degrees(angle) * angle)


def sinc_profile(offsets):
    return np.sum(np.sinc(offsets) * offsets)


def real_parts(signal):
    return np.sum(np.real(signal) * np.conj(signal) + np.conjugate(signal) ** 3
                  + np.real_if_close(signal) * 2.0)


UNARY = {heading_east: (-120.0, 120.0), radians_east: (-120.0, 120.0),
         bearing_degrees: (-2.0, 2.0), bearing_degrees_alias: (-2.0, 2.0),
         sinc_profile: (-2.5, 2.5), real_parts: (-1.0, 1.0)}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn", list(UNARY), ids=lambda f: f.__name__)
def test_unary_every_shape_python(fn, shape):
    check_grads(fn, _value(shape, *UNARY[fn], _rng()), paths=PY)


def test_unary_numba_one_compile_for_many_inputs():
    def everything(values):
        return np.sum(np.sin(np.deg2rad(values)) + np.rad2deg(values) * np.radians(values)
                      + np.degrees(values) + np.sinc(values) * np.real(values)
                      + np.conj(values) * np.real_if_close(values))
    for seed in range(3):
        check_grads(everything, _rng(seed).uniform(-2, 2, (3, 4)), paths=BOTH)


def test_unary_float32_input_keeps_gradient_dtype_and_value():
    angles = _rng().uniform(-90, 90, (4,)).astype(np.float32)
    got = ad.gradient(heading_east)(angles)
    h = angles.astype(np.float64)
    expected = np.cos(np.deg2rad(h)) * np.pi / 180.0 * h + np.sin(np.deg2rad(h))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_sinc_slope_is_zero_at_zero_and_accurate_near_it():
    offsets = np.array([0.0, 1e-9, -1e-6, 1e-3, 3e-3, 0.0032, 0.5, -1.5])
    grad = ad.gradient(lambda_free_sinc)(offsets)
    u = np.pi * offsets
    with np.errstate(invalid="ignore", divide="ignore"):
        closed = np.where(u == 0, 0.0, (np.cos(u) - np.sin(u) / u) / np.where(u == 0, 1, offsets))
    assert grad[0] == 0.0
    np.testing.assert_allclose(grad[3:], closed[3:], rtol=1e-9)
    # near 0 the slope is -pi^2 x / 3 (the closed form cancels there)
    np.testing.assert_allclose(grad[1:3], -np.pi ** 2 * offsets[1:3] / 3.0, rtol=1e-9)


def lambda_free_sinc(offsets):
    return np.sum(np.sinc(offsets))


def imaginary_and_angle(signal):
    return np.sum(np.imag(signal) + np.angle(signal) + signal)


def only_imaginary_and_angle(signal):
    return np.sum(np.imag(signal) * 2.0 + np.angle(signal))


def test_imag_and_angle_of_a_real_input_are_constants_with_zero_derivative():
    """np.imag of a real input is 0 and np.angle is 0 or pi: both constant, so only the
    ``+ signal`` term has a derivative; alone they give a zero gradient with a warning."""
    signal = np.array([-1.5, 0.5, 2.0])
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(imaginary_and_angle, jit=jit))(signal)
        np.testing.assert_array_equal(grad, np.ones(3))
        grad = _warned_once(jit, ad.gradient(ad.differentiable(only_imaginary_and_angle,
                                                                jit=jit)), signal)
        np.testing.assert_array_equal(grad, np.zeros(3))


def test_real_and_real_if_close_of_a_real_array_return_the_array_itself_as_numpy():
    signal = np.array([1.0, 2.0])
    assert np.real(signal) is signal and np.real_if_close(signal) is signal

    def doubled_through_real(signal):
        view = np.real(signal)
        return np.sum(view * view)
    for jit in (False, True):
        check_grads(doubled_through_real, signal, paths=("numba" if jit else "python",))


# ---- nan_to_num -----------------------------------------------------------------------------
def cleaned(readings, fill, top, bottom):
    return np.sum(np.nan_to_num(readings, nan=fill, posinf=top, neginf=bottom) ** 2)


def cleaned_default(readings):
    return np.sum(np.nan_to_num(readings) * readings[0])


def test_nan_to_num_slopes_go_to_the_replacement_values():
    readings = np.array([0.5, np.nan, np.inf, -np.inf, np.nan, 2.0])
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(cleaned, jit=jit), wrt=None)
        d_readings, d_fill, d_top, d_bottom = grad(readings, 0.25, 3.0, -4.0)
        np.testing.assert_array_equal(d_readings, [1.0, 0, 0, 0, 0, 4.0])
        assert (d_fill, d_top, d_bottom) == (2 * 2 * 0.25, 2 * 3.0, 2 * -4.0)
    check_grads(cleaned, np.array([0.5, np.nan, np.inf, -np.inf]), 0.25, 3.0, -4.0, paths=BOTH)


def test_nan_to_num_of_finite_values_every_shape():
    for shape in SHAPES[1:]:
        check_grads(cleaned_default, _value(shape, 0.5, 1.5, _rng()), paths=PY)


# ---- element-wise: binary, with broadcasting -------------------------------------------------
def _mod_operands(shape_a, shape_b, rng, sign=1.0, fmod=False):
    """a / b = k + f with f in [0.2, 0.8]: away from the jumps (as rule_table_cases)."""
    shape = np.broadcast_shapes(shape_a, shape_b)
    b = sign * rng.uniform(0.7, 1.3, shape_b)
    q = rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)
    a = np.broadcast_to(q * b, shape)
    if shape_a != shape:  # a broadcast: one value per row of q
        a = rng.uniform(2.2, 2.8, shape_a)
    return (float(a) if shape_a == () else np.array(a)), (float(b) if shape_b == () else b)


def wrapped_phase(phase, period):
    return np.sum(np.mod(phase, period) ** 2 + phase)


def remainder_phase(phase, period):
    return np.sum(np.remainder(phase, period) * period)


def truncated_phase(phase, period):
    return np.sum(np.fmod(phase, period) ** 2)


def soft_union(log_a, log_b):
    return np.sum(np.logaddexp(log_a, log_b) * log_a)


def soft_union2(log_a, log_b):
    return np.sum(np.logaddexp2(log_a, log_b) ** 2)


def upper_envelope(signal, floor):
    return np.sum(np.fmax(signal, floor) ** 2)


def lower_envelope(signal, ceiling):
    return np.sum(np.fmin(signal, ceiling) ** 2)


def signed_magnitude(magnitude, direction):
    return np.sum(np.copysign(magnitude, direction) ** 3)


def float_powered(base, exponent):
    return np.sum(np.float_power(base, exponent))


BROADCASTS = (((5,), (5,)), ((3, 4), (3, 4)), ((3, 4), ()), ((), (3, 4)), ((3, 4), (4,)),
              ((3, 1), (3, 4)), ((2, 3, 4), (3, 1)), ((), ()))


def _binary_operands(fn, sa, sb, rng):
    if fn in (wrapped_phase, remainder_phase, truncated_phase):
        return _mod_operands(sa, sb, rng)
    if fn in (upper_envelope, lower_envelope, signed_magnitude):
        a = rng.uniform(0.3, 1.5, sa) * rng.choice([-1.0, 1.0], sa)
        b = rng.uniform(-0.1, 0.1, sb)
        if fn is signed_magnitude:
            b = b + np.sign(b) * 0.2
        return (float(a) if sa == () else a), (float(b) if sb == () else b)
    if fn is float_powered:
        return _value(sa, 0.5, 2.0, rng), _value(sb, -1.5, 2.5, rng)
    return _value(sa, -2.0, 2.0, rng), _value(sb, -2.0, 2.0, rng)


BINARY = (wrapped_phase, remainder_phase, truncated_phase, soft_union, soft_union2,
          upper_envelope, lower_envelope, signed_magnitude, float_powered)


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_every_broadcast_python(fn, shapes):
    a, b = _binary_operands(fn, *shapes, _rng())
    if fn is signed_magnitude:
        _quiet(check_grads, fn, a, b, paths=PY)
    else:
        check_grads(fn, a, b, paths=PY)


def test_binary_numba_broadcasting_one_compile():
    def combined(phase, period):
        return np.sum(np.mod(phase, period) + np.fmod(phase, period) * 0.5
                      + np.logaddexp(phase, period) + np.logaddexp2(period, phase)
                      + np.fmax(phase, period) * np.fmin(period, phase)
                      + np.float_power(period, 1.5) + np.copysign(phase, period))
    for seed in range(2):
        phase, period = _mod_operands((3, 4), (4,), _rng(seed))
        check_grads(combined, phase, period, paths=BOTH)


def test_mod_at_the_jump_takes_the_slope_of_the_piece_the_result_lies_on():
    """At a / b integer the result is 0 (the start of a piece): slope 1 in a and
    -a / b in b, as ``%``."""
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(wrapped_phase, jit=jit), wrt=None)
        d_phase, d_period = grad(np.array([2.0, -3.0]), np.array([1.0, 1.5]))
        np.testing.assert_allclose(d_phase, [1.0, 1.0])  # 2 * 0 * 1 + 1
        np.testing.assert_allclose(d_period, [0.0, 0.0])  # 2 * z * ... with z == 0
        d_phase, d_period = grad(np.array([2.5]), np.array([1.0]))
        np.testing.assert_allclose(d_period, [2 * 0.5 * -2.0])


def test_fmax_fmin_follow_numpy_nan_semantics():
    """fmax/fmin return the non-NaN operand: the cotangent goes to it; ties go to a."""
    signal = np.array([np.nan, 1.0, 2.0, 0.5, np.nan])
    other = np.array([3.0, np.nan, 2.0, 1.0, np.nan])

    def envelope(signal, other):
        return np.sum(np.nan_to_num(np.fmax(signal, other)) * 2.0
                      + np.nan_to_num(np.fmin(signal, other)) * 3.0)
    assert np.array_equal(np.fmax(signal, other), [3.0, 1.0, 2.0, 1.0, np.nan], equal_nan=True)
    for jit in (False, True):
        d_signal, d_other = ad.gradient(ad.differentiable(envelope, jit=jit),
                                        wrt=None)(signal, other)
        np.testing.assert_array_equal(d_signal, [0.0, 5.0, 5.0, 3.0, 0.0])
        np.testing.assert_array_equal(d_other, [5.0, 0.0, 0.0, 2.0, 0.0])


def signed_cube(magnitude, direction):
    return np.sum(np.copysign(magnitude, direction) ** 3)


def test_copysign_direction_is_a_constant_and_zero_magnitude_has_slope_zero():
    for jit in (False, True):
        d_mag, d_dir = _warned_once(jit, ad.gradient(ad.differentiable(signed_cube,
                                                                       jit=jit), wrt=None),
                                    np.array([0.0, 2.0, -1.0]), np.array([-1.0, -1.0, 3.0]))
        np.testing.assert_array_equal(d_mag, [0.0, -12.0, -3.0])
        np.testing.assert_array_equal(d_dir, [0.0, 0.0, 0.0])


def stepped(levels, weights):
    return np.sum(np.heaviside(levels, 0.5) * weights + levels * weights)


def test_heaviside_is_piecewise_constant_in_both_paths():
    levels = np.array([-1.0, 0.0, 2.0, np.nan])
    assert np.array_equal(ad.differentiable(stepped, jit=True)(levels, np.ones(4)),
                          stepped(levels, np.ones(4)), equal_nan=True)
    for jit in (False, True):
        d_levels, d_weights = ad.gradient(ad.differentiable(stepped, jit=jit), wrt=None)(
            np.array([-1.0, 0.0, 2.0]), np.array([2.0, 3.0, 4.0]))
        np.testing.assert_array_equal(d_levels, [2.0, 3.0, 4.0])
        np.testing.assert_array_equal(d_weights, [-1.0, 0.5, 3.0])


# ---- reductions: every axis form (int, negative, tuple, None) x keepdims, on 1-D to 3-D -------
def _axis_forms(ndim: int) -> list:
    """Every int axis (and its negative), the tuples of two and of all axes, and None."""
    forms = [None, *range(ndim), *range(-ndim, 0)]
    if ndim >= 2:
        forms += [(0, ndim - 1), (-1, 0), tuple(range(ndim))]
    if ndim == 3:
        forms += [(1, 2), (2, 0)]
    return forms


REDUCTIONS = {"sum": (-1.0, 1.0), "mean": (-1.0, 1.0), "prod": (0.5, 1.5), "max": None,
              "min": None, "var": (-1.0, 1.0), "std": (-1.0, 1.0)}


def _distinct(shape, rng):
    values = np.linspace(-2.0, 2.0, int(np.prod(shape)))
    rng.shuffle(values)
    return values.reshape(shape)


def _reduction_input(name, shape, rng):
    dom = REDUCTIONS[name]
    return _distinct(shape, rng) if dom is None else rng.uniform(*dom, shape)


_REDUCERS: dict = {}


def _from_source(source: str, tag: str):
    """The one function ``source`` defines, with its source where the compiler reads it
    (an axis written as a literal, as a user would: a closure's is a run-time value)."""
    import linecache
    path = f"<{tag}>"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    namespace = {"np": np, "sps": sps, "logsumexp": logsumexp}
    exec(compile(source, path, "exec"), namespace)  # noqa: S102
    return next(v for k, v in namespace.items() if k not in ("np", "sps", "logsumexp",
                                                             "__builtins__"))


def _reducer(name: str, axis, keepdims: bool, ddof: int = 0):
    """A user-like function reducing ``readings`` by ``name`` along ``axis`` (written as
    a literal in its source, as a user would), one per combination (cached)."""
    key = (name, axis, keepdims, ddof)
    if key not in _REDUCERS:
        extra = f", ddof={ddof}" if ddof else ""
        source = (f"def reduce_readings(readings, weights):\n"
                  f"    summary = np.{name}(readings, axis={axis!r}, keepdims={keepdims}{extra})\n"
                  f"    return np.sum(summary * weights) + np.sum(summary ** 2)\n")
        _REDUCERS[key] = _from_source(source, f"reducer {name} {axis} {keepdims} {ddof}")
    return _REDUCERS[key]


def _reduction_cases():
    out = []
    for name in REDUCTIONS:
        for shape in ((5,), (3, 4), (2, 3, 4)):
            for axis in _axis_forms(len(shape)):
                for keepdims in (False, True):
                    out.append((name, shape, axis, keepdims))
    return out


@pytest.mark.parametrize("name,shape,axis,keepdims", _reduction_cases(), ids=str)
def test_reduction_every_axis_form_python(name, shape, axis, keepdims):
    rng = _rng(len(shape))
    readings = _reduction_input(name, shape, rng)
    out = getattr(np, name)(readings, axis=axis, keepdims=keepdims)
    weights = rng.uniform(-1, 1, np.shape(out))
    weights = float(weights) if np.ndim(out) == 0 else weights
    check_grads(_reducer(name, axis, keepdims), readings, weights, wrt=("readings",), paths=PY)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "var", "std"])
def test_reduction_tuple_axes_numba_one_compile_two_inputs(name):
    fn = _reducer(name, (0, -1), True)
    for seed in range(2):
        rng = _rng(seed)
        readings = _reduction_input(name, (2, 3, 4), rng)
        check_grads(fn, readings, rng.uniform(-1, 1, (1, 3, 1)), wrt=("readings",), paths=BOTH)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_ddof(name, ddof):
    rng = _rng(ddof)
    for axis, keepdims in ((None, False), (1, False), ((0, 2), True)):
        readings = rng.uniform(-1, 1, (2, 3, 4))
        out = getattr(np, name)(readings, axis=axis, keepdims=keepdims, ddof=ddof)
        weights = rng.uniform(-1, 1, np.shape(out))
        weights = float(weights) if np.ndim(out) == 0 else weights
        check_grads(_reducer(name, axis, keepdims, ddof), readings, weights,
                    wrt=("readings",), paths=PY)


def spread_of(samples, ddof):
    return samples.var(ddof=ddof) + np.sum(samples.std(axis=0, ddof=ddof))


def test_var_std_methods_with_a_run_time_ddof_both_paths():
    samples = _rng().uniform(-1, 1, (4, 3))
    for ddof in (0, 1):
        check_grads(spread_of, samples, ddof, paths=BOTH)


def test_var_std_edge_cases_match_numpy():
    """A constant row: std 0 and its subgradient 0 (not NaN); ddof >= n: NumPy's inf or
    NaN value on both paths; float32 input: a float32 value, as NumPy."""
    def spread(samples):
        return np.sum(np.std(samples, axis=1))
    flat = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(spread, jit=jit))(flat)
        np.testing.assert_array_equal(grad[0], [0.0, 0.0, 0.0])
        assert np.all(np.isfinite(grad[1]))

    def too_few(samples):
        return np.var(samples, ddof=3)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.var(np.array([1.0, 2.0, 4.0]), ddof=3)
        for jit in (False, True):
            got = ad.differentiable(too_few, jit=jit)(np.array([1.0, 2.0, 4.0]))
            assert got == expected == np.inf
    samples32 = _rng().uniform(-1, 1, (3, 4)).astype(np.float32)

    def var32(samples):
        return np.var(samples, axis=0)
    assert ad.differentiable(var32, jit=True)(samples32).dtype == np.float32


def test_a_repeated_tuple_axis_is_numpys_error():
    def summed(readings):
        return np.sum(np.sum(readings, axis=(0, -2)))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        ad.gradient(ad.differentiable(summed, jit=False))(np.ones((2, 3)))


def norms_over_pairs(stack):
    return np.sum(np.linalg.norm(stack, axis=(0, 1)) ** 2
                  + np.linalg.norm(stack, "fro", (2, 0), True) * stack)


def test_norm_over_a_tuple_of_axes_both_paths():
    check_grads(norms_over_pairs, _rng().uniform(-1, 1, (2, 3, 4)), paths=BOTH)


def test_norm_refuses_matrix_ords_and_three_axes_with_a_located_message():
    def nuclear(stack):
        return np.linalg.norm(stack, 1, (0, 1))

    def three(stack):
        return np.linalg.norm(stack, axis=(0, 1, 2))
    with pytest.raises(ad.NonDifferentiableError, match=r"ord=1 with axis=\(0, 1\)"):
        ad.gradient(nuclear)(np.ones((2, 3, 4)))
    with pytest.raises(ad.NonDifferentiableError, match="one or two axes"):
        ad.gradient(three)(np.ones((2, 3, 4)))


def test_axis_known_only_at_run_time_is_refused_with_a_located_message():
    def summed(readings, axes):
        return np.sum(np.sum(readings, axis=axes))
    with pytest.raises(ad.NonDifferentiableError, match=r"np.sum: axis and keepdims must be "
                                                          r"constants") as info:
        ad.gradient(summed, wrt=("readings",))(np.ones((2, 3)), (0, 1))
    assert "test_surface_elementwise.py:" in str(info.value)


# ---- trace, cumprod, diff ----------------------------------------------------------------
def diagonal_weight(grid, offset):
    return np.trace(grid, offset) ** 2 + grid.trace()


def stacked_traces(stack):
    return np.sum(np.trace(stack, 1, 2, 0) ** 2) + np.sum(np.trace(stack, axis1=-1, axis2=1))


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 5])
def test_trace_offsets_python(offset):
    check_grads(diagonal_weight, _rng().uniform(-1, 1, (3, 4)), offset, paths=PY)


def test_trace_of_stacks_and_offsets_numba():
    rng = _rng()
    check_grads(stacked_traces, rng.uniform(-1, 1, (3, 2, 4)), paths=BOTH)
    for offset in (-1, 2):
        check_grads(diagonal_weight, rng.uniform(-1, 1, (4, 4)), offset, paths=BOTH)


def running_product(factors):
    return np.sum(np.cumprod(factors) * np.arange(1.0, factors.size + 1.0).reshape(-1))


def running_product_axis(factors):
    return np.sum(np.cumprod(factors, axis=-1) ** 2 + factors.cumprod(0))


def test_cumprod_with_zeros_is_exact_no_division():
    """cumprod is a polynomial, differentiable everywhere: the VJP is the exact one at
    zeros (one zero, two zeros, a zero first or last), never NaN (no division by x)."""
    for factors in (np.array([2.0, 0.0, 3.0, 0.5]), np.array([0.0, 2.0, 0.0, 1.5]),
                    np.array([1.5, 2.0, 3.0, 0.0]), np.array([0.0, 0.0, 0.0, 0.0])):
        for jit in (False, True):
            grad = ad.gradient(ad.differentiable(running_product, jit=jit))(factors)
            weights = np.arange(1.0, 5.0)
            exact = [sum(weights[k] * np.prod(np.delete(factors[:k + 1], i))
                         for k in range(i, 4)) for i in range(4)]
            np.testing.assert_allclose(grad, exact, rtol=1e-14, atol=0)
        check_grads(running_product, factors, paths=PY)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)], ids=str)
def test_cumprod_axes_python_and_numba(shape):
    factors = _rng().uniform(-1.5, 1.5, shape)
    factors.flat[1] = 0.0
    check_grads(running_product_axis, factors, paths=BOTH if len(shape) == 3 else PY)


def _differences(n, axis):
    def differences(series):
        return np.sum(np.diff(series, n, axis) ** 2)
    return differences


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_diff_orders_and_axes_python(n, axis):
    series = _rng(n).uniform(-1, 1, (4, 5))
    check_grads(_differences(n, axis), series, paths=PY)


def test_diff_numba_and_numpy_errors():
    def curvature(series):
        return np.sum(np.diff(series, n=2, axis=0) ** 2) + np.sum(np.diff(series))
    check_grads(curvature, _rng().uniform(-1, 1, (5, 3)), paths=BOTH)

    def scalar_diff(level):
        return np.diff(level)
    with pytest.raises(ad.NonDifferentiableError, match="np.diff: x must have at least 1"):
        ad.gradient(scalar_diff)(1.0)


# ---- scipy.special --------------------------------------------------------------------------
def test_numba_kernels_match_scipy_over_a_range():
    """The compiled kernels (own digamma/trigamma series, libm's lgamma/erf/erfc) agree
    with SciPy to 1e-13 relative (+1e-15 absolute near zeros of the function) over
    [-20.5, 40] and a geometric sweep near 0, away from the negative poles, where SciPy
    itself loses digits (see the next test)."""
    import numba

    from s2s_ad import runtime as rt

    @numba.njit
    def kernels(xs, probabilities):
        return (rt.gammaln(xs), rt.digamma(xs), rt.trigamma(xs), rt.erf(xs), rt.erfc(xs),
                rt.expit(xs), rt.logit(probabilities))
    xs = np.concatenate([np.linspace(-20.5, 40.0, 20001), np.geomspace(1e-8, 1e3, 2001),
                         -np.geomspace(1e-8, 0.4, 501)])
    xs = xs[np.abs(xs - np.round(xs)) > 1e-3 * (xs < 0)]  # off the poles at 0, -1, -2...
    probabilities = np.linspace(1e-6, 1 - 1e-6, 1001)
    got = kernels(xs, probabilities)
    refs = (sps.gammaln(xs), sps.digamma(xs), sps.polygamma(1, xs), sps.erf(xs), sps.erfc(xs),
            sps.expit(xs), sps.logit(probabilities))
    for name, g, r in zip(("gammaln", "digamma", "trigamma", "erf", "erfc", "expit", "logit"),
                          got, refs, strict=True):
        tail = name == "erfc"  # erfc(x > 20) < 1e-170: libm and SciPy differ in the last bits
        np.testing.assert_allclose(g, r, rtol=1e-11 if tail else 1e-13, atol=1e-15,
                                   err_msg=name)


def test_digamma_trigamma_kernels_against_mpmath_where_scipy_loses_digits():
    """Reference values: mpmath 1.3 at 30 digits (mpmath.digamma, mpmath.psi(1, x))."""
    from s2s_ad.runtime.special import _digamma_one, _trigamma_one
    reference = {-19.9999675: (-30766.210140226839517, 946745565.39121160758),
                 -2.5: (1.1031566406452431872, 9.5392466449891237539),
                 0.5: (-1.9635100260214234794, 4.9348022005446793094),
                 1e-8: (-100000000.57721564636, 10000000000000001.226),
                 50.0: (3.901989673427892197, 0.020201333226697125806)}
    for x, (psi, psi1) in reference.items():
        assert abs(_digamma_one(x) - psi) <= 5e-16 * abs(psi)  # 2 ulp
        assert abs(_trigamma_one(x) - psi1) <= 5e-16 * abs(psi1)
    assert _digamma_one(0.0) == -np.inf and np.isnan(_digamma_one(-3.0))
    assert _trigamma_one(-3.0) == np.inf


def log_evidence(shape, rate):
    return np.sum(sps.gammaln(shape) - sps.digamma(shape) * rate + sps.erf(rate)
                  - sps.erfc(shape) + sps.expit(rate) * sps.logit(sps.expit(shape)))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_special_unary_every_shape_python(shape):
    rng = _rng()
    check_grads(log_evidence, _value(shape, 0.3, 3.0, rng), _value(shape, -1.0, 1.0, rng),
                paths=PY)


def test_special_unary_numba_one_compile_two_inputs():
    for seed in range(2):
        rng = _rng(seed)
        check_grads(log_evidence, rng.uniform(0.3, 3.0, (3, 4)), rng.uniform(-1, 1, (3, 4)),
                    paths=BOTH)


def entropy_terms(counts, rates):
    return np.sum(xlogy(counts, rates) * 2.0)


def test_xlogy_broadcasting_and_its_convention_at_zero():
    """Slope log(y) in x and x / y in y; where x == 0 the slope in y is 0 (the value is 0
    for every y), and at x == y == 0 the slope in x is 0."""
    rng = _rng()
    for sa, sb in BROADCASTS:
        counts = _value(sa, -1.0, 1.0, rng)
        check_grads(entropy_terms, counts, _value(sb, 0.2, 2.0, rng), paths=PY)
    check_grads(entropy_terms, rng.uniform(-1, 1, (3, 4)), rng.uniform(0.2, 2, (4,)), paths=BOTH)
    for jit in (False, True):
        d_counts, d_rates = ad.gradient(ad.differentiable(entropy_terms, jit=jit), wrt=None)(
            np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5]))
        np.testing.assert_array_equal(d_counts, [0.0, 2.0 * np.log(3.0), 2.0 * np.log(0.5)])
        np.testing.assert_array_equal(d_rates, [0.0, 0.0, 8.0])


def _lse(axis, keepdims):
    return _from_source("def pooled(scores, weights):\n"
                        f"    summary = logsumexp(scores, axis={axis!r}, keepdims={keepdims})\n"
                        "    return np.sum(summary * weights)\n", f"logsumexp {axis} {keepdims}")


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (2, 1, 0)], ids=str)
def test_logsumexp_axes_python(axis, keepdims):
    rng = _rng()
    scores = rng.uniform(-3, 3, (2, 3, 4))
    out = sps.logsumexp(scores, axis=axis, keepdims=keepdims)
    weights = rng.uniform(-1, 1, np.shape(out))
    weights = float(weights) if np.ndim(out) == 0 else weights
    fn = _lse(axis, keepdims)
    check_grads(fn, scores, weights, wrt=("scores",),
                paths=BOTH if (axis, keepdims) == ((0, 2), True) else PY)


def test_logsumexp_of_large_and_infinite_scores_as_scipy():
    def total(scores):
        return sps.logsumexp(scores)
    scores = np.array([1000.0, 1000.0, -np.inf])
    for jit in (False, True):
        fn = ad.differentiable(total, jit=jit)
        assert fn(scores) == sps.logsumexp(scores)
        np.testing.assert_allclose(ad.gradient(fn)(scores), [0.5, 0.5, 0.0])
        assert fn(np.array([-np.inf, -np.inf])) == -np.inf


def test_logsumexp_weights_and_sign_are_refused_with_what_to_do():
    def weighted(scores, weights):
        return sps.logsumexp(scores, b=weights)
    with pytest.raises(ad.NonDifferentiableError, match=r"b= is not supported: .*np.log\(b\)"):
        ad.gradient(weighted)(np.ones(3), np.ones(3))


def attention(scores, values):
    return np.sum(sps.softmax(scores, axis=-1) * values) + np.sum(sps.softmax(scores) ** 2)


def test_softmax_axes_both_paths():
    rng = _rng()
    check_grads(attention, rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 1, (3, 4)), paths=BOTH)
    for axis in (0, 1, (0, 1), None):
        soft_over = _from_source("def soft_over(scores, ramp):\n"
                                 f"    return np.sum(sps.softmax(scores, axis={axis!r}) * ramp)\n",
                                 f"softmax {axis}")
        check_grads(soft_over, rng.uniform(-2, 2, (3, 4)), np.arange(12.0).reshape(3, 4),
                    wrt=("scores",), paths=PY)


def test_scipy_rules_load_once_the_users_code_imports_scipy_special():
    """``import s2s_ad`` does not import scipy.special (about 0.3 s); its rules are
    registered at the first lookup after the user's code has imported it, under the
    name messages give them."""
    import subprocess
    import sys
    code = ("import sys, s2s_ad\n"
            "from s2s_ad.rules import lookup\n"
            "assert 'scipy.special' not in sys.modules\n"
            "import scipy.special as sps\n"
            "rule = lookup(sps.gammaln, 1)\n"
            "print(rule.emit, rule.forward)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["scipy.special.gammaln", "rt.gammaln(x)"]


def test_a_scipy_rule_without_a_runtime_forward_is_refused_when_registered():
    from s2s_ad.rules import primitive
    with pytest.raises(ValueError, match="forward= calling a runtime helper"):
        primitive(sps.ndtr, ("x",), {"x": "g"})
