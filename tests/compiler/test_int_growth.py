"""Ints that can grow without bound stay in Python (issue 13.9): Numba's int64 would
wrap around (10 ** 25 becomes 7766279631452241920) where Python's int does not.

With ``jit="auto"`` such a function runs its generated code in Python and
``ad.explain`` names the file, line and column of the growing value; with
``jit=True`` the same reason is a JitError.  Ordinary int arithmetic in loops
(counters, index arithmetic, sums, values taken modulo something) still compiles.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def where(fn, text):
    """``file:line:col`` of the first occurrence of ``text`` in ``fn``'s source."""
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(fn)}:{first + offset}:{line.index(text) + 1}"
    raise AssertionError(f"{text!r} is not in {fn.__name__}")


# ---- growing ints: kept in Python ----------------------------------------------------
def powers_of_ten(x):
    k = 1
    for _i in range(25):
        k = k * 10
    return x * k / 1e20


def doubled_by_multiplying(z):
    g = 1
    for _i in range(70):
        g *= 2
    return z * g / 2.0 ** 70


def doubled_by_adding(z):
    b = 1
    for _i in range(70):
        b += b
    return z * b / 2.0 ** 70


def fibonacci(a, n):
    lo = 0
    hi = 1
    for _i in range(n):
        lo, hi = hi, lo + hi
    return a * lo / 1e20


def shifted(z):
    m = 1
    for _i in range(70):
        m = m << 1
    return z * m / 2.0 ** 70


def factorial(a, n):
    f = 1
    for i in range(1, n + 1):
        f = f * i
    return a * f / 1e25


def power_of_ints(a, n):
    return a * n ** n / 1e26


def grows_only_in_the_inner_loop(z):
    s = 0.0
    for _i in range(2):
        g = 1
        for _j in range(70):
            g = g * 2
        s += z + g / 2.0 ** 70  # the pullback needs no g: a Python int is never taped
    return s


def calls_a_growing_helper(z):
    return powers_of_ten(z) * 2.0


GROWING = [
    (powers_of_ten, (1.5,), 1e5, "k * 10"),
    (doubled_by_multiplying, (1.5,), 1.0, "g *= 2"),
    (doubled_by_adding, (1.5,), 1.0, "b += b"),
    (fibonacci, (1.5, 100), 3.54224848179261915075, "lo + hi"),
    (shifted, (1.5,), 1.0, "m << 1"),
    (factorial, (1.5, 25), 15511210043330985984000000 / 1e25, "f * i"),
    (power_of_ints, (1.5, 20), 20 ** 20 / 1e26, "n ** n"),
    (grows_only_in_the_inner_loop, (1.5,), 2.0, "g * 2"),
]


@pytest.mark.parametrize("f, args, slope, text", GROWING,
                         ids=[case[0].__name__ for case in GROWING])
def test_growing_ints_stay_in_python_and_give_python_results(f, args, slope, text):
    df = ad.differentiable(f)
    explanation = ad.explain(df, *args)
    assert explanation.path == "python"
    assert f"grow without bound at {where(f, text)} " in explanation.reason
    assert "int64 would overflow" in explanation.reason
    value, gradient = ad.value_and_gradient(df)(*args)
    assert value == pytest.approx(f(*args), rel=1e-15)
    assert gradient == pytest.approx(slope, rel=1e-15)
    assert gradient == ad.gradient(ad.differentiable(f, jit=False))(*args)


def test_the_reported_function_has_gradient_1e5():
    # x * 10**25 / 1e20: the slope is 1e5 (Numba's wrapped int64 gave 0.0159)
    assert ad.gradient(powers_of_ten)(2.0) == 1e5
    value, gradient = ad.value_and_gradient(powers_of_ten)(2.0)
    assert (value, gradient) == (pytest.approx(2e5, rel=1e-15), 1e5)


def test_jit_true_refuses_with_the_location():
    df = ad.differentiable(powers_of_ten, jit=True)
    with pytest.raises(ad.JitError, match="grow without bound") as raised:
        ad.gradient(df)(1.5)
    assert where(powers_of_ten, "k * 10") in str(raised.value)
    assert "'k', carried around a loop, is multiplied in every iteration" in str(raised.value)


def test_a_caller_of_a_growing_function_stays_in_python_too():
    explanation = ad.explain(ad.differentiable(calls_a_growing_helper), 1.5)
    assert explanation.path == "python"
    assert where(powers_of_ten, "k * 10") in explanation.reason
    assert ad.gradient(calls_a_growing_helper)(1.5) == 2e5


# ---- ordinary int arithmetic in loops: still compiled ----------------------------------
def index_arithmetic(z):
    n = len(z)
    m = z.shape[0] * 2 + z.size
    s = 0.0
    count = 0
    for i in range(n):
        for j in range(n):
            count += 1
            s += z[(i * n + j) % n] * (i * j + m)
    return s / count


def running_sums_and_hashes(a, n):
    t = 0
    s = 0
    h = 7
    for i in range(n):
        t = t + 1
        s = s + t
        h = (h * 31 + i) % 1000
    return a * s + a * a * h


def products_reset_every_iteration(a):
    s = 0.0
    sign = 1
    for i in range(30):
        g = 1
        g = g * 10
        sign = sign * -1
        s += a * g * sign + (-1) ** i * a * i ** 2
    return s


ORDINARY = [
    (index_arithmetic, (np.array([0.5, -1.0, 2.0]),)),
    (running_sums_and_hashes, (0.7, 40)),
    (products_reset_every_iteration, (0.7,)),
]


@pytest.mark.parametrize("f, args", ORDINARY, ids=[case[0].__name__ for case in ORDINARY])
def test_ordinary_int_loops_still_compile(f, args):
    explanation = ad.explain(ad.differentiable(f), *args)
    assert explanation.path == "numba", explanation.reason
    check_grads(f, *args, paths=("python", "numba"))
