"""Functions with registered derivatives, used by test_custom_derivatives.py."""

import ctypes
import ctypes.util
import math

import numpy as np

import s2s_ad as ad

libm = ctypes.CDLL(ctypes.util.find_library("m"))
c_exp = libm.exp
c_exp.restype, c_exp.argtypes = ctypes.c_double, [ctypes.c_double]
c_atan2 = libm.atan2
c_atan2.restype, c_atan2.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]


def cexp(x):
    return c_exp(x)


@ad.derivative(of=cexp)
def cexp_vjp(x):
    y = cexp(x)
    return y, lambda v: v * y


def uses_cexp(x, y):
    return cexp(x * y) + math.sin(x)


def catan2(y, x):
    return c_atan2(y, x)


@ad.derivative(of=catan2)
def catan2_vjp(y, x):
    r2 = x * x + y * y

    def pullback(v):
        return v * x / r2, -v * y / r2

    return catan2(y, x), pullback


def uses_catan2(a, b):
    return catan2(a * a, b) * b


def scaled(x, k):
    return x * k


@ad.derivative(of=scaled, wrt=("x",))
def scaled_vjp(x, k):
    return x * k, lambda v: v * k


def uses_scaled(x, k):
    return scaled(x, k) * k


def black_box_square(x):
    return x * x


def _make_pullback(x):
    return lambda v: 2.0 * x * v


@ad.derivative(of=black_box_square)
def black_box_square_vjp(x):
    return x * x, _make_pullback(x)


def uses_black_box(x):
    return black_box_square(x) + x


def in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + cexp(x * 0.1 * i)
    return s


TRACE = []


def hooks_in_order(x):
    a = ad.with_derivative(x * 2.0, lambda d: TRACE.append(("a", d)))
    b = ad.with_derivative(a * 3.0, lambda d: TRACE.append(("b", d)))
    return b + a


def doubled_by_hook(x):
    y = ad.with_derivative(math.sin(x), lambda d: 2.0 * d)
    return y * 3.0


def kept_by_hook(x):
    y = ad.with_derivative(math.sin(x), lambda d: None)
    return y * 3.0


def stopped_in_loop(x, n):
    s = 0.0
    for _ in range(n):
        s = s + x * ad.without_derivative(s + 1.0)
    return s


def halved_in_place(x):
    def halve(d):
        d *= 0.5  # changes the array cotangent in place and returns None

    y = ad.with_derivative(np.sin(x), halve)
    return np.sum(y * 3.0)
