"""Values that were refused or crashed (issue 23): ``np.dot`` of two numbers, reductions
of a plain float (under Numba too), ``np.array(x)`` of a number, ``astype`` with a dtype
string, ``dtype=`` of the constructors (a NumPy type, a Python type or a string), and
complex values, refused with a message that names the argument or the place.

Gradients are checked by ``check_grads`` (finite differences, the dot-product identity,
Numba = Python); values and dtypes against NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import ArgumentError, NonDifferentiableError
from s2s_ad.testing import check_grads

PATHS = [False, True]


def scalar_products(rate, scale):
    return np.dot(rate, scale) + np.dot(rate, 2.0) * np.dot(3, 4)


def reductions_of_a_float(rate):
    return (np.sum(rate) + np.mean(rate) * np.max(rate) + np.min(rate) * np.prod(rate)
            + np.amax(rate) + np.amin(rate))


def array_of_a_float(rate):
    held = np.array(rate)
    return held * held + np.array(3) * rate


def string_dtypes(weights):
    doubled = weights.astype("float64") * 2.0
    counts = weights.astype("int64")
    return np.sum(doubled * weights) + np.sum(counts)


def typed_buffers(rate):
    single = np.zeros(3, dtype=np.float64)
    single[0] = rate
    ones = np.ones(3, dtype=float)
    blank = np.empty((2, 2), dtype="float64")
    blank[:, :] = rate
    filled = np.full(3, rate, dtype=np.float64)
    counts = np.zeros(2, dtype=np.int64)
    return np.sum(single) * rate + np.sum(ones * rate) + np.sum(blank) + np.sum(filled ** 2) \
        + np.sum(counts)


def test_scalar_products_and_reductions_and_arrays_of_numbers():
    check_grads(scalar_products, 1.5, -0.7)
    check_grads(reductions_of_a_float, 1.3)
    check_grads(array_of_a_float, 0.8)


def test_dtype_strings_and_dtype_arguments():
    check_grads(string_dtypes, np.array([0.5, 1.5, 2.5]))
    check_grads(typed_buffers, 0.6)


@pytest.mark.parametrize("jit", PATHS)
def test_np_dot_of_ints_is_an_int(jit):
    def int_product(rate, count):
        return np.dot(count, count) * rate

    assert ad.gradient(ad.differentiable(int_product, jit=jit, wrt=("rate",)))(2.0, 3) == 9.0


def float32_buffer(rate):
    buffer = np.zeros(4, dtype=np.float32)
    buffer[1] = rate
    return buffer


def float32_filled(rate):
    return np.full((2, 3), rate, dtype="float32")


def counted_flags(rate):
    flags = np.ones(3, dtype=bool)
    counts = np.zeros(2, dtype="int64") + 2
    return np.sum(flags) * rate + np.sum(counts) * rate


@pytest.mark.parametrize("jit", PATHS)
def test_constructor_dtypes_are_numpys(jit):
    for fn in (float32_buffer, float32_filled):
        value, _ = ad.value_with_pullback(ad.differentiable(fn, jit=jit), 0.25)
        expected = fn(0.25)
        assert value.dtype == expected.dtype == np.float32
        np.testing.assert_array_equal(value, expected)
    assert ad.gradient(ad.differentiable(counted_flags, jit=jit))(0.25) == 7.0


# ---- complex values: refused --------------------------------------------------------------
def energy(field):
    return np.sum(field * field)


@pytest.mark.parametrize("value, message", [
    (np.array([1.0 + 2.0j, 0.5]), r"argument 'field' of energy is an array of dtype complex128"),
    (np.array([1.0, 2.0], dtype=np.complex64), r"argument 'field'.*complex64"),
    (1.0 + 2.0j, r"argument 'field' of energy is a complex number"),
])
@pytest.mark.parametrize("jit", PATHS)
def test_complex_arguments_are_named(value, message, jit):
    with pytest.raises(ArgumentError, match=message):
        ad.gradient(ad.differentiable(energy, jit=jit))(value)


def rotated(angle):
    phase = angle * 1j
    return abs(phase)


def shifted(angle):
    return np.sum(angle) + (2 + 3j)


def complex_buffer(angle):
    buffer = np.zeros(3, dtype=np.complex128)
    return np.sum(buffer) + angle


def complex_string_dtype(angle):
    buffer = np.zeros(3, dtype="complex64")
    return np.sum(buffer) + angle


@pytest.mark.parametrize("fn, line_text, message", [
    (rotated, "phase = angle * 1j", r"the complex number 1j is not supported"),
    (shifted, "return np.sum(angle) + (2 + 3j)", r"the complex number 3j is not supported"),
    (complex_buffer, "buffer = np.zeros(3, dtype=np.complex128)",
     r"the dtype complex128 is not supported"),
    (complex_string_dtype, 'buffer = np.zeros(3, dtype="complex64")',
     r"the dtype complex64 is not supported"),
])
@pytest.mark.parametrize("jit", PATHS)
def test_complex_literals_and_dtypes_are_refused_where_they_are(fn, line_text, message, jit):
    with pytest.raises(NonDifferentiableError, match=message) as info:
        ad.gradient(ad.differentiable(fn, jit=jit))(np.array([0.5]) if fn is shifted else 0.5)
    assert line_text in str(info.value)
    assert "test_surface_values.py:" in str(info.value)
