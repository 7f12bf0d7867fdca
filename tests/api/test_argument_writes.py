"""Writes into argument arrays follow Python: the caller's array changes as the
plain function changes it, once per forward run (never again in the pullback),
and derivatives are with respect to the values the arguments had at the call.
Both paths, against finite differences and the dot-product identity."""

import inspect

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


def overwrite_from_neighbours(x):
    x[1] = x[0] * x[2]
    return np.sum(x * x)


def scaled_in_a_loop(a, g):
    total = 0.0
    for i in range(a.shape[0]):
        a[i] = a[i] * g
        total = total + a[i] * a[i]
    return total


def accumulated_rows(out, z):
    for k in range(1, out.shape[0]):
        out[k] += z * out[k - 1]
    return np.sum(np.sin(out))


def two_written_arguments(u, v):
    u[0] = v[1] * 2.0
    v[0] = u[1] + u[0]
    return np.sum(u * v)


CASES = [
    (overwrite_from_neighbours, (np.array([0.7, -0.4, 1.2]),)),
    (scaled_in_a_loop, (np.array([0.7, -0.4, 1.2, 2.0]), 0.6)),
    (accumulated_rows, (np.arange(6.0).reshape(3, 2) / 5.0, 0.3)),
    (two_written_arguments, (np.array([0.5, 1.5]), np.array([-1.0, 0.25]))),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_is_with_respect_to_the_values_at_the_call(f, args):
    check_grads(f, *args, seed=5)


@PATHS
@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_the_caller_sees_the_change_once_per_forward_run(f, args, jit):
    expected = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    expected_value = f(*expected)  # the plain function, changing its own copies
    mine = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    df = ad.differentiable(f, jit=jit)
    value, pullback = ad.value_with_pullback(df, *mine)
    assert value == pytest.approx(expected_value, rel=1e-12)
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    pullback(1.0)
    pullback(1.0)  # the pullback never writes into the arguments
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def fill_first(y, x):
    y[0] = x[0] * x[1]
    return 0.0


def calls_a_function_that_writes_its_argument(x):
    y = np.zeros(3)
    fill_first(y, x)
    return np.sum(y * y) + x[2]


@PATHS
def test_calling_a_function_that_writes_its_argument_is_refused_at_the_call(jit):
    line = inspect.getsourcelines(calls_a_function_that_writes_its_argument)[1] + 2
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*'fill_first' writes into"):
        ad.gradient(ad.differentiable(calls_a_function_that_writes_its_argument, jit=jit))(
            np.array([0.7, -0.4, 1.2]))
