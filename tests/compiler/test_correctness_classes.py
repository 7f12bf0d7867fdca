"""Wrong-gradient classes, one test per class, each checked on the Python and the
Numba path against central finite differences and the dot-product identity
(``s2s_ad.testing.check_grads``), with the siblings found beside each.

Every function here is written as a user would, with the names that used to be
captured: rule-template parameters (``a``, ``b``, ``x``, ``y``), generated names
(``result``, ``value``, ``d_x``, ``residuals``, ``_``), and the names generated
code reserves (``rt``, ``np``, ``math``, ``len``, ``range``, ``min``, ``List``).
"""

import inspect
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def check(f, *args):
    check_grads(f, *args, seed=7)


# ---- a constant operand keyed by its template name (issue 13.1, issue 8) ----------------
def cube(b):
    return b ** 3


def max_with_constant(b):
    return max(b, 5.0) * 3 + b


def min_constant_first(a):
    return min(-5.0, a) + a * a


def atan2_constant_second(x):
    return math.atan2(x, 2.0)


def atan2_constant_first(y):
    return math.atan2(2.0, y)


def log_base_constant(base):
    return math.log(base, 2.0)


def mod_constant_first(a):
    return 5.0 % a + a


def power_float_exponent(b):
    return b ** 2.0


def clip_bounds_named_like_parameters(lo):
    return np.sum(np.clip(lo, 0.0, 1.0) * lo)


def maximum_array_named_b(b):
    return np.sum(np.maximum(b, 0.0) * b)


def array_power_named_b(b):
    return np.sum(b ** 2.0)


@pytest.mark.parametrize("f, args", [
    (cube, (-2.0,)), (max_with_constant, (2.0,)), (min_constant_first, (1.5,)),
    (atan2_constant_second, (1.0,)), (atan2_constant_first, (1.3,)),
    (log_base_constant, (3.0,)), (mod_constant_first, (1.7,)), (power_float_exponent, (1.3,)),
    (clip_bounds_named_like_parameters, (np.array([-0.5, 0.3, 0.8, 1.7]),)),
    (maximum_array_named_b, (np.array([-0.5, 0.3, 1.7]),)),
    (array_power_named_b, (np.array([-0.5, 0.3, 1.7]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_constant_operand_is_not_keyed_by_a_template_name(f, args):
    check(f, *args)


def test_cube_of_a_parameter_named_b_is_twelve_at_minus_two():
    # d/db b^3 = 3 b^2 = 12 at b = -2 (it was 0.25: the template's b captured the user's)
    assert ad.gradient(ad.differentiable(cube, jit=False))(-2.0) == 12.0
    assert ad.gradient(ad.differentiable(cube, jit=True))(-2.0) == 12.0


# ---- user names that generated code reserves --------------------------------------------
def reserved_local_names(rt, np_):
    len = rt * 2.0  # noqa: A001  (the point: a user's name the generated code also uses)
    range = len + np_  # noqa: A001
    return range * rt


def names_like_generated_ones(x, d_x, result, value, residuals):
    d_value = x * d_x + result
    position = value * residuals
    return d_value * position + x


def underscore_parameter(_):
    s = 0.0
    for i in range(3):
        s += _ * i
    return s * _


def module_names_as_locals(x):
    math = x * 3.0  # noqa: F811
    List = math + 1.0  # noqa: N806
    return List * math


def make_shadowing_builtins(len, min, range):  # noqa: A002
    def closure(x):
        s = 0.0
        for w in (x, 2.0 * x):  # the compiler counts a tuple loop with len()
            s += w * len[0]
        for a, b in zip((x, x * x), (1.0, range), strict=True):  # and a zip with min()
            s += a * b * min
        return s
    return closure


@pytest.mark.parametrize("f, args", [
    (make_shadowing_builtins(np.array([2.0, 3.0]), 1.5, 0.5), (0.8,)),
    (reserved_local_names, (1.5, 2.0)),
    (names_like_generated_ones, (0.7, 1.1, 1.3, 0.4, 2.0)),
    (underscore_parameter, (2.0,)),
    (module_names_as_locals, (0.6,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_user_names_never_collide_with_generated_ones(f, args):
    check(f, *args)


# ---- a negative constant base keeps its parentheses (issue 13.2) ------------------------
NEGATIVE = -3.0


def negative_base(x):
    return (-2.0) ** 2 * x


def alternating_series(x, k):
    return (-1) ** (k + 1) * x ** k / k


def negative_global_base(x):
    return NEGATIVE ** 2 * x


@pytest.mark.parametrize("f, args, value", [
    (negative_base, (0.7,), 2.8), (alternating_series, (0.7, 2), -0.245),
    (negative_global_base, (0.7,), 6.3)], ids=lambda v: getattr(v, "__name__", ""))
def test_negative_constant_bases(f, args, value):
    for jit in (False, True):
        assert ad.differentiable(f, jit=jit)(*args) == pytest.approx(value, rel=1e-12)
    check(f, *args)


def test_emitted_source_parenthesises_the_negative_base():
    assert "(-2.0) ** 2" in ad.source(negative_base, 0.7, stage="forward")


# ---- nested tuples: cotangents add element by element (issue 13.6) ----------------------
def nested_tuple(x, y):
    t = ((x, y), 3.0)
    u = t[0]
    return u[0] * u[1]


def two_nested_pairs(x, y):
    t = ((x, y), (y, x))
    a = t[0]
    b = t[1]
    return a[0] * b[0] + a[1] * b[1]


@pytest.mark.parametrize("f", [nested_tuple, two_nested_pairs], ids=lambda f: f.__name__)
def test_nested_tuple_cotangents(f):
    check(f, 0.7, 1.3)


# ---- a gather's cotangent scatter-adds repeated indices (issue 8) -----------------------
def gather_repeated(v, idx):
    return float(np.sum(v[idx]))


def gather_two_dimensional_index(m, idx):
    return np.sum(np.sin(m[idx]) * 2.0)


def gather_boolean_mask(v):
    return np.sum(v[v > 0.5] ** 2)


def gather_in_a_loop(v, idx):
    s = 0.0
    for k in range(3):
        s += np.sum(v[idx] * k)
    return s


def test_repeated_index_counts_twice():
    v, idx = np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2])
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(gather_repeated, jit=jit))(v, idx)
        np.testing.assert_array_equal(grad, [2.0, 0.0, 1.0])


@pytest.mark.parametrize("f, args", [
    (gather_repeated, (np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2, -1]))),
    (gather_two_dimensional_index, (np.arange(6.0).reshape(3, 2) / 7,
                                    np.array([[0, 2], [2, 2]]))),
    (gather_boolean_mask, (np.array([0.2, 0.9, 1.5, -1.0]),)),
    (gather_in_a_loop, (np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gathers(f, args):
    check(f, *args)


def scatter_write(v, idx):
    y = np.zeros(3)
    y[idx] = v
    return np.sum(y * y)


def scatter_add_in_place(v, idx):
    y = np.ones(5)
    y[idx] += v * 2.0  # x[idx] += v is x[idx] = x[idx] + v: the last write wins
    return np.sum(y * y * np.arange(5.0))


def mask_write(v):
    y = v * 1.0
    y[v < 0.0] = 0.0
    return np.sum(y * v)


def scalar_through_an_index(v, idx, c):
    y = v * 2.0
    y[idx] = c * c
    return np.sum(y * v)


def rows_through_an_index(m, idx, r):
    out = m * 1.0
    out[idx] = r
    return np.sum(out ** 2 * m)


def index_write_in_a_loop(v, idx):
    y = np.zeros(4)
    for k in range(3):
        y[idx] = v * k + y[idx] * v
    return np.sum(y * y)


def test_a_repeated_index_written_keeps_the_last_write():
    # y = [v1, 0, 0]: d/dv sum(y^2) = [0, 2 v1] (v0 was overwritten by v1)
    v, idx = np.array([3.0, 2.0]), np.array([0, 0])
    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(scatter_write, jit=jit))(v, idx)
        np.testing.assert_array_equal(grad, [0.0, 4.0])


@pytest.mark.parametrize("f, args", [
    (scatter_write, (np.array([1.0, 2.0, -0.5]), np.array([0, 2, 0]))),
    (scatter_add_in_place, (np.array([0.5, -1.0, 2.0]), np.array([0, 3, 0]))),
    (scatter_add_in_place, (np.array([0.5, -1.0, 2.0]), np.array([-1, 3, 1]))),
    (mask_write, (np.array([0.5, -1.0, 2.0, -0.25]),)),
    (scalar_through_an_index, (np.array([0.5, -1.0, 2.0]), np.array([2, 0, 2]), 0.7)),
    (rows_through_an_index, (np.arange(6.0).reshape(3, 2) / 5, np.array([2, 0, 2]),
                             np.array([[1.0, -2.0], [0.5, 0.25], [3.0, 1.0]]))),
    (index_write_in_a_loop, (np.array([0.5, -1.0, 2.0]), np.array([3, 1, 3]))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_through_index_arrays(f, args):
    check(f, *args)


def scatter_write_2d_index(v, idx):
    y = np.zeros(3)
    y[idx] = v
    return np.sum(y)


def test_writing_through_a_2d_index_array_is_refused_at_its_line():
    with pytest.raises(ad.NonDifferentiableError, match=r"test_correctness_classes.py:\d+:\d+"
                       r": error: writing into 'y' through a 2-d index array"):
        ad.gradient(scatter_write_2d_index)(np.ones((2, 2)), np.array([[0, 1], [2, 0]]))


# ---- an empty tuple-element cotangent added into a full one (issue 13.8) ---------------
def tuple_of_one_array_twice(m, c):
    t = (m, m)
    s = np.sum(m)
    if c > 10:
        s += np.sum(t[1])
    return s


@pytest.mark.parametrize("c", [3, 11])
def test_an_empty_cotangent_adds_nothing(c):
    check(tuple_of_one_array_twice, np.array([1.0, 2.0]), c)


# ---- globals are read at each call (issue 13.3, 13.4) ------------------------------------
SCALE = 2.0
WEIGHTS = np.ones(3)


def scaled_square(x):
    return SCALE * x * x


def weighted(x):
    return np.sum(WEIGHTS * x * x)


def calls_a_helper_reading_a_global(x):
    return scaled_square(x) * x


def make_weighted(w):
    def closure(x):
        return np.sum(w * x * x)
    return closure


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_globals_rebound_and_mutated_between_calls(jit, monkeypatch):
    x = np.array([1.0, 2.0, 3.0])
    f, g, h = (ad.differentiable(fn, jit=jit) for fn in
               (scaled_square, weighted, calls_a_helper_reading_a_global))
    assert ad.gradient(f)(1.0) == 4.0 and ad.gradient(h)(1.0) == 6.0
    monkeypatch.setattr(__import__(__name__), "SCALE", 5.0)
    assert f(1.0) == 5.0 and ad.gradient(f)(1.0) == 10.0  # d/dx 5 x^2
    assert ad.gradient(h)(1.0) == 15.0  # d/dx 5 x^3
    monkeypatch.setattr(__import__(__name__), "SCALE", 3)  # an int now: another kind
    assert ad.gradient(f)(1.0) == 6.0
    np.testing.assert_array_equal(ad.gradient(g)(x), 2 * x)
    monkeypatch.setattr(__import__(__name__), "WEIGHTS", 2 * np.ones(3))
    np.testing.assert_array_equal(ad.gradient(g)(x), 4 * x)
    WEIGHTS_NOW = __import__(__name__).WEIGHTS
    WEIGHTS_NOW[0] = 10.0  # in place
    np.testing.assert_array_equal(ad.gradient(g)(x), [20.0, 8.0, 12.0])


def copies_a_global_by_method(x):
    w = WEIGHTS.copy()
    w[0] += x
    return np.sum(w * x) + WEIGHTS.shape[0] * x + WEIGHTS.T[1]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_methods_and_attributes_of_a_global_array_are_read_at_call_time(jit, monkeypatch):
    # value x^2 + x sum(W) + n x + W[1]; gradient 2x + sum(W) + n (n = len(W))
    f = ad.differentiable(copies_a_global_by_method, jit=jit)
    check(f, 0.5)
    assert ad.value_and_gradient(f)(0.5) == (0.25 + 1.5 + 1.5 + 1.0, 1.0 + 3.0 + 3.0)
    monkeypatch.setattr(__import__(__name__), "WEIGHTS", np.array([10.0, 20.0, 30.0, 40.0]))
    assert ad.value_and_gradient(f)(0.5) == (0.25 + 50.0 + 2.0 + 20.0, 1.0 + 100.0 + 4.0)


def make_copying(w):
    def closure(x):
        y = w.copy()
        y[1] = x * y[1]
        return np.sum(y * y)
    return closure


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_closures_copying_their_array_by_method(jit):
    x = 0.75
    for scale in (1.0, 5.0):  # d/dx (x w1)^2 = 2 x w1^2
        f = ad.differentiable(make_copying(scale * np.array([1.0, 2.0, 3.0])), jit=jit)
        check(f, x)
        assert ad.gradient(f)(x) == 2 * x * (2.0 * scale) ** 2


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_closures_over_different_arrays_do_not_share_values(jit):
    x = np.array([1.0, 2.0, 3.0])
    one = ad.gradient(ad.differentiable(make_weighted(np.ones(3)), jit=jit))(x)
    five = ad.gradient(ad.differentiable(make_weighted(5 * np.ones(3)), jit=jit))(x)
    np.testing.assert_array_equal(one, 2 * x)
    np.testing.assert_array_equal(five, 10 * x)


# ---- callees with no residuals, functions named like reserved names, x ** 0 ------------
def no_residuals(v, beta):
    return v


def residual_free_callee_in_a_branch(x, y):
    if x < 0.5:
        y = y * 2.0
    else:
        y = no_residuals(x + y, 1.0)
    return y


def residual_free_callee_in_a_loop(x):
    for _step in range(3):
        x = no_residuals(x, 1.0) * 1.5
    return x


@pytest.mark.parametrize("f, args", [
    (residual_free_callee_in_a_branch, (0.8, 0.3)),
    (residual_free_callee_in_a_branch, (0.2, 0.3)),
    (residual_free_callee_in_a_loop, (0.7,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_callees_without_residuals_save_nothing(f, args):
    # Numba divided by zero (SIGFPE) on a typed list of empty residual tuples
    check(f, *args)


def rt(x):
    return x * x * 3.0


def calls_rt(np):  # noqa: F811  (a parameter named like the NumPy module)
    return rt(np) + np


@pytest.mark.parametrize("f, args", [(rt, (1.3,)), (calls_rt, (0.4,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_functions_named_like_the_runtime_module(f, args):
    check(f, *args)


def zeroth_power_at_zero(x):
    x = x * 0.0
    return x ** 0 + x


def zeroth_power(x):
    return x ** 0.0 * 3.0 + x ** 0


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_constant_exponent_zero_is_flat_at_zero(jit):
    # x ** 0 == 1 everywhere: slope 0, never the 0.0 ** -1 of b * a ** (b - 1)
    assert ad.gradient(ad.differentiable(zeroth_power_at_zero, jit=jit))(0.0) == 0.0
    check(zeroth_power, 0.0)
    check(zeroth_power, -1.5)


# ---- a name rebound from a number to an array, and back (issue 13.14) -------------------
def scalar_rebound_to_array(x):
    a = x * 2.0
    b = a + 1.0
    a = np.ones(3) * x
    return np.sum(a) + b


def array_rebound_to_scalar(z):
    g = z * z
    s = np.sum(g)
    g = s * z[0]
    return g + s


def parameter_rebound(a, b):
    a = a * b  # a scalar parameter becomes an array (b is one)
    c = np.sum(a)
    a = c * c
    return a + c


def tuple_rebound_to_scalar(x, y):
    t = (x, y * x)
    u = t[0] * t[1]
    t = u * 2.0
    return t + u


def rebound_after_an_early_return(x, v):
    if x > 0.0:
        return math.cos(x)
    x = v
    return np.sum(x)


def rebound_after_two_early_returns(x, v):
    q = x
    if x > 1.0:
        return x
    if x > 0.0:
        x = v * 2.0
        return np.sum(x * x) * q
    q -= 1.0
    q = WEIGHTS * v
    return np.sum(q) * 3.0 + x


def rebound_in_a_branch_not_read_after(x, v):
    a = x * 2.0
    if x > 0.0:
        a = v
        s = np.sum(a)
    else:
        s = a
    return s * 2.0


@pytest.mark.parametrize("f, args", [
    (scalar_rebound_to_array, (0.5,)),
    (array_rebound_to_scalar, (np.array([0.3, -1.2, 2.0]),)),
    (parameter_rebound, (0.7, np.array([1.0, -0.5, 2.0, 0.25]))),
    (tuple_rebound_to_scalar, (0.6, 1.7)),
    (rebound_after_an_early_return, (0.5, np.ones(3))),
    (rebound_after_an_early_return, (-0.5, np.array([0.5, 2.0]))),
    (rebound_after_two_early_returns, (1.5, np.ones(3))),
    (rebound_after_two_early_returns, (0.5, np.array([0.5, -1.0, 2.0]))),
    (rebound_after_two_early_returns, (-0.5, np.array([0.5, -1.0, 2.0]))),
    (rebound_in_a_branch_not_read_after, (0.5, np.array([0.5, -1.0]))),
    (rebound_in_a_branch_not_read_after, (-0.5, np.array([0.5, -1.0]))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_name_rebound_to_another_shape(f, args):
    check(f, *args)


# ---- a variable exponent that is 0 at a zero base (issue 13.13) -------------------------
def variable_exponent_zero(x):
    n = 0
    return x ** n + x


def power_series(b, k):
    s = 0.0
    for n in range(k):
        s += b ** n / (n + 1.0) + pow(b, n) + math.pow(b, n)
    return s


def elementwise_exponents(a, e):
    return np.sum(a ** e + np.power(a, e * 2.0))


@pytest.mark.parametrize("f, args", [
    (variable_exponent_zero, (0.0,)), (variable_exponent_zero, (1.7,)),
    (power_series, (0.0, 4)), (power_series, (0.8, 4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_variable_exponent_zero_at_zero(f, args):
    # d/db b ** n = n * b ** (n - 1), which is 0 for n == 0 even at b == 0
    check(f, *args)


def test_elementwise_exponent_zero_at_zero():
    # only in the base: at a == 0 the power is not differentiable in its exponent
    a, e = np.array([0.0, 1.5, 2.0]), np.array([0.0, 2.0, 1.5])
    check_grads(elementwise_exponents, a, e, wrt=["a"], seed=7)
    check(elementwise_exponents, a + 0.5, e)


# ---- tuples indexed at run time, sliced, iterated, concatenated, summed (issue 13.12) ---
def tuple_items_at_run_time(x, y):
    t = (x, y, x * y)
    s = 0.0
    for i in range(3):
        s = s + t[i] * t[i - 1]  # t[-1] at i == 0
    for v in t:
        s = s + v * v
    return s


def tuple_slices_and_concatenation(a, b):
    t = (a, b, a * b, 2.0)
    head, tail = t[:2], t[1:]
    w = head + (b * b,) + tail[::2]
    return w[0] * w[2] + w[3] * w[4] + len(w) * b


def builtins_over_tuples(g, z):
    t = (g * z, g + 1.5, z - g)
    return sum(t) * max(t) + min(t[1:]) + sum((g, z))


def tuple_of_arrays_iterated(x):
    pair = (x * 2.0, np.sin(x))
    acc = 0.0
    for w in pair:
        acc = acc + np.sum(w * w)
    return acc + np.sum(sum(pair)) + sum(x)


@pytest.mark.parametrize("f, args", [
    (tuple_items_at_run_time, (0.7, 1.3)),
    (tuple_slices_and_concatenation, (0.7, -1.3)),
    (builtins_over_tuples, (0.4, 1.9)),
    (builtins_over_tuples, (-1.2, 0.3)),
    (tuple_of_arrays_iterated, (np.array([0.3, -1.0, 2.0]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_tuple_operations(f, args):
    check(f, *args)


# ---- writes into arrays that another variable may alias (issue 13.5) --------------------
def returns_its_argument(v):
    return v


def alias_by_unpacking(x):
    y = x * 2.0
    z, w = y, 2.0
    y[0] = 3.0
    return np.sum(z * x) * w


def alias_in_a_tuple(x):
    y = x * 2.0
    t = (y, 2.0)
    y[0] = 3.0
    return np.sum(t[0] * x)


def alias_through_a_helper(x):
    y = x * 2.0
    z = returns_its_argument(y)
    y[0] = 3.0
    return np.sum(z * x)


def alias_of_an_alias(x):
    y = x * 2.0
    pair = (y, x)
    first = pair[0]
    first[1] = 0.5
    return np.sum(y * x)


def in_place_on_an_alias(x):
    y = x * 2.0
    z, w = y, 1.0
    y += x
    return np.sum(z * x) * w


@pytest.mark.parametrize("f, line", [
    (alias_by_unpacking, 3), (alias_in_a_tuple, 3), (alias_through_a_helper, 3),
    (alias_of_an_alias, 4), (in_place_on_an_alias, 3),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_writes_through_aliases_are_refused_at_their_line(f, line, jit):
    first = inspect.getsourcelines(f)[1]
    with pytest.raises(ad.NonDifferentiableError, match=f":{first + line}:"):
        ad.gradient(ad.differentiable(f, jit=jit))(np.array([1.0, 2.0, 3.0]))


def written_copy_of_a_helper_result(x):
    y = x * 2.0
    z = np.copy(returns_its_argument(y))
    y[0] = 3.0
    return np.sum(z * x) + np.sum(y)


def test_a_copy_is_not_an_alias():
    check(written_copy_of_a_helper_result, np.array([1.0, 2.0, 3.0]))


# ---- a number written into a slice at a taped index, in a loop (issue 13.11) ------------
def number_into_a_column(x):
    m = np.zeros((2, 3))
    for k in range(3):
        s = x[k] * 2.0
        m[:, k] = s * x[k]
    return np.sum(m * m)


def row_broadcast_into_a_block(x):
    grid = np.zeros((3, 2, 4))
    for k in range(3):
        grid[k, :, 1:] = x[k] * x[1:]
    return np.sum(np.sin(grid))


def columns_read_in_a_loop(a):
    total = 0.0
    for k in range(a.shape[1]):
        col = a[:, k]
        total = total + np.sum(col * col) * k
    return total


@pytest.mark.parametrize("f, args", [
    (number_into_a_column, (np.array([1.0, -2.0, 0.5]),)),
    (row_broadcast_into_a_block, (np.array([0.3, -0.7, 1.1, 0.2]),)),
    (columns_read_in_a_loop, (np.arange(6.0).reshape(2, 3) / 7.0,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_slices_written_and_read_at_taped_indices(f, args):
    check(f, *args)


# ---- globals are read at each call, also by a second process sharing the cache ----------
_GLOBALS_PROGRAM = '''
import os, sys
import numpy as np
import s2s_ad as ad

K = float(os.environ["K"])
W = np.ones(3) * K


def make(v):
    def closure(x):
        return np.sum(v * x * x)
    return closure


def f(x):
    return K * np.sum(W * x * x)


x = np.array([1.0, 2.0, 3.0])
jit = sys.argv[1] == "numba"
print(ad.gradient(ad.differentiable(f, jit=jit))(x).tolist())
print(ad.gradient(ad.differentiable(make(W * 2.0), jit=jit))(x).tolist())
'''


@pytest.mark.parametrize("jit", ["python", "numba"])
def test_a_second_process_reads_its_own_globals(jit, tmp_path):
    # the same file and one compile cache: what the first process compiled must
    # not bring its K and W into the second (d/dx K * sum(W x^2) = 2 K^2 x)
    (tmp_path / "program.py").write_text(_GLOBALS_PROGRAM)
    cache = tmp_path / "cache"
    for k in (3.0, 7.0):
        env = dict(os.environ, K=str(k), S2S_AD_CACHE_DIR=str(cache))
        out = subprocess.run([sys.executable, str(tmp_path / "program.py"), jit], env=env,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        x = np.array([1.0, 2.0, 3.0])
        np.testing.assert_allclose(json.loads(out[0]), 2 * k * k * x, rtol=1e-14)
        np.testing.assert_allclose(json.loads(out[1]), 4 * k * x, rtol=1e-14)
