"""SPEC section 7: an op with a kernel per backend and a registered gradient, backend
switching, overriding the gradient, and ``custom_grad`` for a stable log1pexp.

Run: python examples/custom_op.py
"""

import math
import warnings

import numba
import numpy as np

import s2s_ad as ad


# -- kernels: one implementation per backend ------------------------------------------
def softplus_numpy(x):
    return np.logaddexp(0.0, x)


@numba.njit(cache=True)
def softplus_numba(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


# -- the gradient: grad_fn(dy, saved) returns the input's cotangent -------------------
@numba.njit(cache=True)
def softplus_grad(dy, saved):
    (x,) = saved
    return dy / (1.0 + np.exp(-x))


ad.register_kernel("softplus", "numpy", softplus_numpy)
ad.register_kernel("softplus", "numba", softplus_numba)
ad.register_gradient("softplus", softplus_grad, inputs_to_save=[0])


def softplus(x):
    """The op: what user code calls."""
    return ad.run_kernel("softplus", x)


def loss(x):
    return np.sum(softplus(x))


def show(label, values):
    print(f"{label}: [{', '.join(f'{v:.6f}' for v in values)}]")


x = np.array([-1.0, 0.0, 2.0])
show("gradient, numba backend", ad.gradient(loss)(x))
print(str(ad.explain(loss, x)).splitlines()[0])
with ad.backend("numpy"):
    in_python = ad.differentiable(loss, jit=False)
    show("gradient, numpy backend", ad.gradient(in_python)(x))
    print("backend in the block:", ad.get_backend())
print("backend after it:", ad.get_backend())


# -- overriding the gradient (a straight-through estimator) ---------------------------
@numba.njit(cache=True)
def straight_through(dy, saved):
    return dy


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ad.register_gradient("softplus", straight_through, inputs_to_save=[])
print("warning:", caught[0].message)
show("gradient, overridden", ad.gradient(loss)(x))


# -- custom_grad: a numerically stable log(1 + exp(x)) and its derivative -------------
def sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@ad.custom_grad
def log1pexp(x, save):
    save(x)
    value = x + math.log1p(math.exp(-x)) if x > 0.0 else math.log1p(math.exp(x))

    def grad_fn(dy, saved):
        return dy * sigmoid(saved[0])

    return value, grad_fn


def uses_log1pexp(x):
    return 2.0 * log1pexp(x)


for at in (1000.0, -1000.0):  # exp(1000) overflows: the naive formula fails there
    print(f"2 log1pexp({at}) = {uses_log1pexp(at)}, "
          f"derivative = {ad.gradient(uses_log1pexp)(at)}")
