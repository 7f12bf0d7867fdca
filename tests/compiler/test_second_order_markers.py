"""Markers mean the same in second derivatives (issue 34, item 4): ``hvp``, ``hessian``,
``jvp`` of ``gradient`` and ``gradient`` of ``gradient`` transform the generated gradient
code again, and that code keeps the user's markers.

- ``without_derivative``: the value is a constant in every order (JAX's stop_gradient).
  The reference is the definition: the Hessian of the function with the cut value frozen
  at its value here, by central differences of that function's gradient.  (Differences
  of ``ad.gradient`` itself would not do: the gradient's value moves with the cut value.)
- ``recompute_in_pullback``: checkpointing changes no derivative; the Hessian is the
  derivative of the gradient.
- ``with_derivative`` hooks and registered derivatives are refused (located at the
  user's line, naming the function) rather than differentiated with another meaning.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import partial_derivatives

JITS = [False, True]


def scaled_energy(weights, scale):
    level = ad.without_derivative(np.sum(weights * scale))
    return np.sum(weights * weights * scale) * level


def frozen_energy(level):
    """``scaled_energy`` with the cut value ``level`` a constant."""
    def energy(weights, scale):
        return np.sum(weights * weights * scale) * level
    return energy


WEIGHTS = np.array([0.5, -0.3, 0.8])
SCALE = np.array([1.0, 2.0, -1.0])


def _reference_hessian(fn, args, wrt: int) -> np.ndarray:
    """The Jacobian of ``ad.gradient(fn)`` in argument ``wrt``, by central differences."""
    gradient = ad.gradient(ad.differentiable(fn, jit=False), wrt=("weights", "scale")[wrt])
    size = np.size(args[wrt])
    rows = [partial_derivatives(lambda *a, k=k: gradient(*a)[k], args, wrt)[0]
            for k in range(size)]
    return np.array(rows)


@pytest.mark.parametrize("jit", JITS)
def test_a_value_cut_by_without_derivative_is_a_constant_in_the_hessian(jit):
    level = float(np.sum(WEIGHTS * SCALE))
    f = ad.differentiable(scaled_energy, jit=jit, wrt="weights")
    hessian = ad.hessian(f)(WEIGHTS, SCALE)
    expected = _reference_hessian(frozen_energy(level), (WEIGHTS, SCALE), 0)
    np.testing.assert_allclose(hessian, expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("jit", JITS)
def test_hvp_and_the_jvp_of_the_gradient_keep_the_cut(jit):
    level = float(np.sum(WEIGHTS * SCALE))
    f = ad.differentiable(scaled_energy, jit=jit)
    along = (np.array([0.3, 1.0, -0.5]), np.array([1.0, 0.0, 2.0]))
    product = ad.hvp(f, (WEIGHTS, SCALE), along)
    exact = ad.hessian(ad.differentiable(frozen_energy(level), jit=False))(WEIGHTS, SCALE)
    for i in range(2):
        np.testing.assert_allclose(product[i], exact[i][0] @ along[0] + exact[i][1] @ along[1],
                                   rtol=1e-12, atol=1e-12)
    _, tangent = ad.jvp(ad.gradient(f), (WEIGHTS, SCALE), along)
    for i in range(2):
        np.testing.assert_allclose(tangent[i], product[i], rtol=1e-12, atol=1e-12)


def drift(rate, time):
    damping = ad.without_derivative(rate * time)
    return rate ** 3 * damping + math.sin(rate * time)


@pytest.mark.parametrize("jit", JITS)
def test_the_gradient_of_a_gradient_keeps_the_cut(jit):
    rate, time = 0.7, 1.3
    second = ad.gradient(ad.gradient(ad.differentiable(drift, jit=jit), wrt="rate"),
                         wrt="rate")(rate, time)
    damping = rate * time  # a constant: d2/drate2 = 6 rate damping - time^2 sin(rate time)
    assert second == pytest.approx(6.0 * rate * damping - time ** 2 * math.sin(rate * time),
                                   rel=1e-12)


def peaked(values):
    return np.sum(values * values) * ad.without_derivative(np.max(values))


def through_a_helper(values, gain):
    return gain * peaked(values) + np.sum(values) ** 2


@pytest.mark.parametrize("jit", JITS)
def test_a_cut_inside_a_called_function_is_kept(jit):
    values = np.array([0.2, 1.5, -0.4])
    hessian = ad.hessian(ad.differentiable(through_a_helper, jit=jit), wrt="values")(
        values, 2.0)
    expected = 2.0 * 2.0 * np.max(values) * np.eye(3) + 2.0 * np.ones((3, 3))
    np.testing.assert_allclose(hessian, expected, rtol=1e-12)


@ad.recompute_in_pullback
def layer(signal):
    return np.tanh(signal) * signal


def stacked(signal, bias):
    return np.sum(layer(signal + bias) * signal)


@pytest.mark.parametrize("jit", JITS)
def test_checkpointing_changes_no_second_derivative(jit):
    signal, bias = np.array([0.5, -0.3, 0.8]), 0.2
    hessian = ad.hessian(ad.differentiable(stacked, jit=jit), wrt="signal")(signal, bias)
    gradient = ad.gradient(ad.differentiable(stacked, jit=False), wrt="signal")
    expected = np.array([partial_derivatives(lambda s, b, k=k: gradient(s, b)[k],
                                             (signal, bias), 0)[0] for k in range(3)])
    np.testing.assert_allclose(hessian, expected, rtol=1e-7, atol=1e-8)


def clipped(weights):
    squared = ad.with_derivative(weights * weights, lambda d: 2.0 * d)  # refused: hook
    return np.sum(squared * weights)


def cube(x):
    return x ** 3


@ad.derivative(of=cube)
def cube_vjp(x):
    return cube(x), lambda g: 3.0 * x * x * g


def cubes(weights):
    total = 0.0
    for i in range(weights.shape[0]):
        total += cube(weights[i]) * weights[0]  # refused: registered derivative
    return total


def _marked_line(fn, mark: str) -> int:
    """The line of ``fn``'s source holding ``mark``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if mark in text)


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("fn, mark", [(clipped, "refused: hook"),
                                      (cubes, "refused: registered derivative")],
                         ids=["hook", "custom"])
def test_hooks_and_registered_derivatives_are_refused_at_the_users_line(fn, mark, jit):
    with pytest.raises(NonDifferentiableError) as caught:
        ad.hessian(ad.differentiable(fn, jit=jit))(np.array([0.5, -0.3, 0.8]))
    where = caught.value.location
    assert (where.filename, where.lineno) == (__file__, _marked_line(fn, mark))
    assert where.col > 1 and fn.__name__ in caught.value.problem
    if fn is clipped:
        assert "with_derivative hook" in caught.value.problem
