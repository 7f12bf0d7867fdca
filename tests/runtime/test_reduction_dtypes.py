"""Reductions of int, bool and float arrays have NumPy's result dtype and value on
both paths (issue 13.7): the sum of a bool array counts, the mean and the norm of
an int array are float64, max and min keep the dtype.

The table test enumerates ``runtime.reductions.REDUCTIONS`` and, for each row,
asks its rule (``s2s_ad.rules``) for the call generated code makes in every
``axis``/``keepdims`` form, so a new row is covered without editing this file.
Then whole functions mixing such reductions with float arguments are checked
against finite differences on the Python and the Numba path.
"""

from __future__ import annotations

import functools

import gast
import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import runtime
from s2s_ad.rules.registry import lookup
from s2s_ad.runtime.reductions import REDUCTIONS
from s2s_ad.testing import check_grads

DTYPES = (np.bool_, np.int32, np.int64, np.float32)  # float64: tests/runtime/test_array_runtime.py
# every dtype on 3-D arrays (a middle axis too); 1-D, where an axis reduction gives a
# scalar, on bool arrays (their sum, mean and max have three different dtypes). Each case
# compiles the kernels anew, about two seconds.
CASES = [(dtype, (2, 3, 4)) for dtype in DTYPES] + [(np.bool_, (5,))]
WHOLE = ((None, False), (None, True))  # axis=None, without and with keepdims
ALONG = ((0, False), (0, True))  # an axis (passed at run time: one compile for all axes)


def numpy_function(row):
    """The NumPy function a row computes: ``"np.linalg.norm"`` -> ``np.linalg.norm``."""
    return functools.reduce(getattr, row.numpy.split(".")[1:], np)


def generated_call(row, axis, keepdims):
    """The forward expression generated code emits for ``np.<row>(x, axis=, keepdims=)``
    (reading the axis from a variable ``axis``), or None where the rule refuses it."""
    rule = lookup(numpy_function(row), 1)
    given = {"axis": axis, "keepdims": keepdims}
    operands = [gast.Name("x", gast.Load(), None, None)] + [
        gast.Constant(given.get(p, rule.defaults.get(p)), None) for p in rule.params[1:]]
    try:
        return rule.specialize(operands, [None] * len(operands)).forward
    except ValueError:
        return None


def forms_of(row):
    """(axis is None, keepdims, call) for every form the rule accepts."""
    return [(axis is None, keepdims, call) for axis, keepdims in WHOLE + ALONG
            if (call := generated_call(row, axis, keepdims)) is not None]


@functools.cache
def all_forms(row):
    """``forms(x, axis)``: every form of ``row`` (as arrays, so a scalar keeps its dtype),
    as Python and compiled by Numba."""
    calls = ", ".join(f"np.asarray({call})" for _, _, call in forms_of(row))
    namespace = {"np": np, "rt": runtime}
    exec(f"def forms(x, axis):\n    return ({calls},)\n", namespace)
    return namespace["forms"], numba.njit(namespace["forms"])


def sample(dtype, shape):
    rng = np.random.default_rng(len(shape))
    if dtype is np.bool_:
        return rng.random(shape) > 0.4
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 5, shape).astype(dtype)
    return rng.uniform(-2.0, 2.0, shape).astype(dtype)


def test_every_row_has_whole_array_and_axis_forms():
    assert len(REDUCTIONS) >= 6
    for row in REDUCTIONS:  # norm refuses keepdims without an axis: 3 forms
        forms = forms_of(row)
        assert len(forms) >= 3 and {whole for whole, _, _ in forms} == {True, False}, row.name


@pytest.mark.parametrize("dtype, shape", CASES,
                         ids=[f"{d.__name__}-{len(s)}d" for d, s in CASES])
@pytest.mark.parametrize("row", REDUCTIONS, ids=lambda r: r.name)
def test_value_and_dtype_are_numpys_on_both_paths(row, dtype, shape):
    x = sample(dtype, shape)
    python, compiled = all_forms(row)
    reference = numpy_function(row)
    for axis in range(-len(shape), len(shape)):
        paths = {"python": python(x, axis), "numba": compiled(x, axis)}
        for i, (whole, keepdims, call) in enumerate(forms_of(row)):
            ax = None if whole else axis
            want = np.asarray(reference(x, axis=ax, keepdims=keepdims))
            for path, results in paths.items():
                got = results[i]
                what = f"{path}: {call} for x {dtype.__name__}{shape}, axis={ax}"
                assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
                assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
                if want.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=what)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=what)


def test_counts_of_a_bool_array_do_not_saturate():
    z = np.ones((4, 3))
    counts = numba.njit(lambda z: runtime.sum_axis(z > 0, 0))(z)
    assert counts.dtype == np.int64
    assert counts.tolist() == [4, 4, 4]


def test_mean_of_an_int_array_is_not_truncated():
    a = np.array([[10, 20], [31, 41]])
    mean = numba.njit(lambda a: runtime.mean_axis(a, 0))(a)
    assert mean.tolist() == [20.5, 30.5]


def test_norm_of_large_int32_values_is_computed_in_float64():
    a = np.array([[50000, 3], [0, 4]], dtype=np.int32)  # 50000 ** 2 overflows int32
    for norm in (runtime.norm_axis, numba.njit(lambda a, ax: runtime.norm_axis(a, ax))):
        assert norm(a, 0).tolist() == [50000.0, 5.0]


# ---- whole functions: int and bool arrays next to the differentiated floats -------------
def mean_and_count(x, k):
    return np.sum(np.mean(k, axis=0) * x) + np.sum(np.sum(x > 0, axis=0) * x)


def norm_and_product_of_signs(z, a):
    return (np.sum(np.linalg.norm(a, axis=1, keepdims=True) * z)
            + np.sum(np.prod(a > 0, axis=0) * z))


def extremes_counts_and_means(z, a):
    m = np.max(a, axis=0)
    c = np.sum(a > 2, axis=0, keepdims=True)
    return np.sum(z * m / 3) + np.sum(c * z) + np.mean(a, axis=-1) @ z[:, 0]


def loop_over_positive_count(g, b):
    s = 0.0
    for i in range(np.sum(g > 0)):
        s += g[i] * np.min(b, axis=0)[i] / np.mean(b, axis=1, keepdims=True)[0, 0]
    return s


Z = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
K = np.array([[10, 20, 31], [31, 41, 51]])


@pytest.mark.parametrize("f, args", [
    (mean_and_count, (Z, K)),
    (norm_and_product_of_signs, (Z, K)),
    (extremes_counts_and_means, (Z, K.astype(np.int32))),
    (loop_over_positive_count, (np.array([1.0, 2.0, -3.0]), K)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_with_int_and_bool_reductions(f, args):
    df = ad.differentiable(f, jit=True)
    value, _ = ad.value_and_gradient(df)(*args)
    assert ad.explain(df, *args).path == "numba"
    assert value == pytest.approx(f(*args), rel=1e-12)
    check_grads(f, *args, seed=3)


def test_gradient_of_the_reported_function_is_the_int_mean_plus_the_count():
    # d/dx sum(mean(k, 0) * x) + sum(count(x > 0, 0) * x) = mean(k, 0) + count(x > 0, 0)
    want = np.mean(K, axis=0) + np.sum(Z > 0, axis=0)
    for jit in (False, True):
        got = ad.gradient(ad.differentiable(mean_and_count, jit=jit))(Z, K)
        np.testing.assert_array_equal(got, np.broadcast_to(want, Z.shape))
