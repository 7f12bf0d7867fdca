"""Whole workloads: ADBench's Gaussian mixture objective and Rosenbrock written with index
loops, and a vectorised MLP with a softmax cross-entropy loss.

The references never use the compiler: an analytic gradient for Rosenbrock, and
finite differences of the original Python for the others. For the full-size GMM the
original is evaluated by a plain `numba.njit` of its own source, because running the
loop form N*K*d^2 times per evaluation in the interpreter would take minutes.
"""

import functools

import numba
import numpy as np
import pytest
from gmm import gmm_data, gmm_objective

import s2s_ad as ad
from s2s_ad.testing import (
    assert_close,
    assert_gradient_like_arguments,
    five_point_difference,
    moving_entry,
)

# --- ADBench GMM, loop form -------------------------------------------------------------------


GMM_WRT = ("alphas", "means", "icf")


@functools.cache
def gmm_differentiable(jit):
    return ad.differentiable(gmm_objective, wrt=GMM_WRT, jit=jit)


@pytest.mark.slow  # a full-size compile; the default run checks the GMM at small sizes
def test_gmm_full_size_compiles_and_matches_finite_differences():
    args = gmm_data(n=1000)
    df = gmm_differentiable(True)
    assert ad.explain(df, *args).path == "numba", ad.explain(df, *args).reason
    value, gradient = ad.value_and_gradient(df)(*args)
    reference = numba.njit(gmm_objective)
    assert_close(value, reference(*args), rtol=1e-12, what="GMM value")
    assert_gradient_like_arguments(args[:3], gradient)
    rng = np.random.default_rng(1)
    failures = []
    for index in range(3):
        for _ in range(7):
            position = tuple(int(rng.integers(0, s)) for s in args[index].shape)
            estimate, rounding = five_point_difference(
                moving_entry(reference, args, index, position), 1e-3)
            got = float(gradient[index][position])
            if abs(got - estimate) > 1e-6 * max(1.0, abs(estimate)) + rounding:
                failures.append(f"{GMM_WRT[index]}{position}: {got!r} vs FD {estimate!r}")
    assert not failures, "; ".join(failures)


def test_gmm_python_path_agrees_with_numba_on_a_small_sample():
    args = gmm_data(n=8)
    value_py, grad_py = ad.value_and_gradient(gmm_differentiable(False))(*args)
    value_nb, grad_nb = ad.value_and_gradient(gmm_differentiable(True))(*args)
    assert_close(value_nb, value_py, what="GMM value")
    assert_close(grad_nb, grad_py, what="GMM gradient")
    assert_close(value_py, gmm_objective(*args), what="GMM value vs original")


# --- Rosenbrock, index loop ------------------------------------------------------------------


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_gradient(x):
    """Term i, 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2, has
    d/dx[i]   = -400 x[i] (x[i+1] - x[i]^2) - 2 (1 - x[i])
    d/dx[i+1] =  200 (x[i+1] - x[i]^2),
    so x[j] collects the first from term j (j < n-1) and the second from term j-1 (j > 0)."""
    g = np.zeros_like(x)
    gap = x[1:] - x[:-1] ** 2
    g[:-1] += -400.0 * x[:-1] * gap - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * gap
    return g


@pytest.mark.parametrize("jit", [pytest.param(False, id="python"), pytest.param(True, id="numba")])
def test_rosenbrock_matches_the_analytic_gradient(jit):
    x = np.random.default_rng(2).uniform(-1.5, 1.5, 100)
    df = ad.differentiable(rosenbrock, jit=jit)
    if jit:
        assert ad.explain(df, x).path == "numba", ad.explain(df, x).reason
    value, gradient = ad.value_and_gradient(df)(x)
    assert_close(value, rosenbrock(x), what="Rosenbrock value")
    assert isinstance(gradient, np.ndarray) and gradient.shape == x.shape
    assert_close(gradient, rosenbrock_gradient(x), rtol=1e-13, what="Rosenbrock gradient")


# --- vectorised MLP with softmax cross-entropy ------------------------------------------------


def mlp_loss(w1, b1, w2, b2, inputs, labels):
    hidden = np.maximum(inputs @ w1 + b1, 0.0)
    logits = hidden @ w2 + b2
    top = np.max(logits, axis=1, keepdims=True)
    lse = top + np.log(np.sum(np.exp(logits - top), axis=1, keepdims=True))
    picked = np.sum(labels * logits, axis=1, keepdims=True)
    return np.mean(lse - picked)


MLP_WRT = ("w1", "b1", "w2", "b2")


def mlp_data(batch=16, inputs=5, hidden=8, classes=4, seed=3):
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0.0, 0.5, (inputs, hidden))
    b1 = rng.normal(0.0, 0.1, hidden)
    w2 = rng.normal(0.0, 0.5, (hidden, classes))
    b2 = rng.normal(0.0, 0.1, classes)
    x = rng.normal(0.0, 1.0, (batch, inputs))
    labels = np.eye(classes)[rng.integers(0, classes, batch)]
    return w1, b1, w2, b2, x, labels


@pytest.mark.parametrize("jit", [pytest.param(False, id="python"), pytest.param(True, id="numba")])
def test_mlp_softmax_cross_entropy_matches_finite_differences(jit):
    args = mlp_data()
    w1, b1, _, _, x, _ = args
    # Central differences are only valid away from the kink of relu.
    assert np.min(np.abs(x @ w1 + b1)) > 1e-4
    df = ad.differentiable(mlp_loss, wrt=MLP_WRT, jit=jit)
    if jit:
        assert ad.explain(df, *args).path == "numba", ad.explain(df, *args).reason
    value, gradient = ad.value_and_gradient(df)(*args)
    assert_close(value, mlp_loss(*args), what="MLP value")
    assert_gradient_like_arguments(args[:4], gradient)
    rng = np.random.default_rng(4)
    failures = []
    for index in range(4):
        for _ in range(6):
            position = tuple(int(rng.integers(0, s)) for s in args[index].shape)
            estimate, rounding = five_point_difference(
                moving_entry(mlp_loss, args, index, position), 1e-4)
            got = float(gradient[index][position])
            if abs(got - estimate) > 1e-7 + 1e-6 * abs(estimate) + rounding:
                failures.append(f"{MLP_WRT[index]}{position}: {got!r} vs FD {estimate!r}")
    assert not failures, "; ".join(failures)


def test_mlp_numba_agrees_with_python():
    args = mlp_data()
    grads = [
        ad.gradient(ad.differentiable(mlp_loss, wrt=MLP_WRT, jit=jit))(*args)
        for jit in (False, True)
    ]
    assert_close(grads[1], grads[0], what="MLP gradient")
