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
