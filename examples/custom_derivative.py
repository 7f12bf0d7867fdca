"""SPEC §2: a custom derivative, even of a C function (libm's pow via ctypes).

Run: python examples/custom_derivative.py
"""

import ctypes
import ctypes.util
import math

import s2s_ad as ad

libm = ctypes.CDLL(ctypes.util.find_library("m"))
libm.pow.restype, libm.pow.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]


def silly_exp(x):
    e = math.e
    print(f"Taking e({e}) to the power of {x}!")
    return libm.pow(e, x)


@ad.derivative(of=silly_exp)
def silly_derivative(x):
    y = silly_exp(x)
    return y, lambda v: v * y


print("exp(3) =", silly_exp(3.0))
print("grad exp(3) =", ad.gradient(silly_exp)(3.0))
