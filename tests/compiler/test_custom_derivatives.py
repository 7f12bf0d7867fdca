"""@ad.derivative, without_derivative and with_derivative (SPEC §2, §3)."""

import math
import warnings

import custom_functions as cf
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import partial_derivatives


def test_ctypes_derivative_runs_compiled_with_numba():
    df = ad.differentiable(cf.uses_cexp, jit=True)
    x, y = 0.3, 1.7
    assert ad.explain(df, x, y).path == "numba"
    dx, dy = ad.gradient(df)(x, y)
    # d/dx [exp(xy) + sin x] = y exp(xy) + cos x; d/dy = x exp(xy)
    assert dx == pytest.approx(y * math.exp(x * y) + math.cos(x), rel=1e-12)
    assert dy == pytest.approx(x * math.exp(x * y), rel=1e-12)
    assert dx == pytest.approx(partial_derivatives(cf.uses_cexp, (x, y), 0)[0], rel=1e-7)


def test_ctypes_function_itself_is_differentiated_by_its_registration():
    df = ad.differentiable(cf.cexp, jit=True)
    assert ad.explain(df, 1.2).path == "numba"
    assert ad.gradient(df)(1.2) == pytest.approx(math.exp(1.2), rel=1e-12)


def test_two_argument_derivative_with_nested_def_pullback():
    for jit in (False, True):
        da, db = ad.gradient(ad.differentiable(cf.uses_catan2, jit=jit))(0.7, 1.3)
        assert da == pytest.approx(partial_derivatives(cf.uses_catan2, (0.7, 1.3), 0)[0], rel=1e-7)
        assert db == pytest.approx(partial_derivatives(cf.uses_catan2, (0.7, 1.3), 1)[0], rel=1e-7)


def test_derivative_registered_for_some_parameters_only():
    dx, dk = ad.gradient(ad.differentiable(cf.uses_scaled, jit=False))(2.0, 3.0)
    # scaled's registration covers x only: d/dx = k * k = 9; through k only the
    # outer factor counts: d/dk [scaled(x, k) * k] with scaled held fixed = x * k = 6
    assert (dx, dk) == (9.0, 6.0)


def test_black_box_derivative_runs_in_python_and_says_why():
    df = ad.differentiable(cf.uses_black_box)
    assert ad.gradient(df)(1.5) == pytest.approx(2.0 * 1.5 + 1.0)
    explanation = ad.explain(df, 1.5)
    assert explanation.path == "python" and explanation.reason


def test_registered_derivative_in_a_loop_matches_finite_differences():
    df = ad.differentiable(cf.in_loop, jit=True)
    g = ad.gradient(df)(0.4, 7)
    assert g == pytest.approx(partial_derivatives(cf.in_loop, (0.4, 7), 0)[0], rel=1e-7)


def test_registering_again_replaces_with_a_warning():
    def f(x):
        return x * 2.0

    @ad.derivative(of=f)
    def first(x):
        return x * 2.0, lambda v: 2.0 * v

    with pytest.warns(UserWarning, match="already registered"):
        @ad.derivative(of=f)
        def second(x):
            return x * 2.0, lambda v: 5.0 * v

    assert ad.gradient(lambda x: f(x) + 0.0)(1.0) == 5.0


def test_hooks_run_in_reverse_program_order_on_complete_cotangents():
    cf.TRACE.clear()
    # value = b + a with b = 3a, a = 2x: d/db = 1 first, then d/da = 1 + 3 = 4
    # (complete: both uses of a counted), and d/dx = 2 * 4 = 8
    assert ad.gradient(cf.hooks_in_order)(1.0) == 8.0
    assert cf.TRACE == [("b", 1.0), ("a", 4.0)]


def test_hook_result_replaces_the_cotangent_and_none_keeps_it():
    x = 0.4
    assert ad.gradient(cf.doubled_by_hook)(x) == pytest.approx(6.0 * math.cos(x))
    assert ad.gradient(cf.kept_by_hook)(x) == pytest.approx(3.0 * math.cos(x))


def test_without_derivative_inside_a_loop_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ZeroDerivativeWarning)
        g = ad.gradient(ad.differentiable(cf.stopped_in_loop, jit=True))(0.5, 4)
    # s_{k+1} = s_k + x * c_k with c_k = s_k + 1 held constant: ds_{k+1} = ds_k + c_k
    s, expected = 0.0, 0.0
    for _ in range(4):
        expected += s + 1.0
        s = s + 0.5 * (s + 1.0)
    assert g == pytest.approx(expected, rel=1e-12)


def test_hook_may_change_an_array_cotangent_in_place():
    x = np.array([0.1, 0.7, -1.3])
    # d/dx sum(3 sin x) = 3 cos x, halved by the hook before it reaches x
    np.testing.assert_allclose(ad.gradient(cf.halved_in_place)(x), 1.5 * np.cos(x), rtol=1e-15)
