"""Issue 20, items 7, 8, 9 and 13: wrong rules and readings, and kernel gradients given
as tuples. Each is checked on the Python path (jit=False) and the Numba path (jit=True),
gradients against central finite differences of the original function.

* 7: ``np.linspace(start, stop, num)`` and ``np.full(shape, value)`` were registered as
  constants (a zero gradient and a false ZeroDerivativeWarning). The audit of every rule
  is in test_rule_table.py (each parameter of each rule fed from a float argument).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

PATHS = ("python", "numba")


def _no_zero_warning(fn, *args):
    """``fn``'s gradient on the Python path, which must not warn ZeroDerivativeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ZeroDerivativeWarning)
        return ad.gradient(ad.differentiable(fn, jit=False))(*args)


# ---- item 7: linspace and full carry their float arguments' derivatives ------------------
def ramp_energy(t_start, t_stop):
    times = np.linspace(t_start, t_stop, 6)
    return np.sum(np.sin(times) * times)


def ramp_default_count(t_start, t_stop):
    return np.sum(np.linspace(t_start, t_stop) ** 2) / 50.0


def ramp_single_point(t_start, t_stop):
    return np.sum(np.linspace(t_start, t_stop, 1) ** 3)


def ramp_keyword_count(t_start, t_stop):
    return np.sum(np.exp(np.linspace(t_start, t_stop, num=3)))


def bias_grid(bias, weights):
    return np.sum(np.full(weights.shape, bias) * weights ** 2)


def row_tiled(row_bias, weights):
    return np.sum(np.tanh(np.full((3, 4), row_bias) + weights))


@pytest.mark.parametrize("fn", [ramp_energy, ramp_default_count, ramp_single_point,
                                ramp_keyword_count])
def test_linspace_endpoints_have_gradients(fn):
    check_grads(fn, 0.3, 1.7, paths=PATHS)
    grads = _no_zero_warning(fn, 0.3, 1.7)
    assert fn is ramp_single_point or all(g != 0.0 for g in grads)


def test_full_value_has_a_gradient():
    weights = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    check_grads(bias_grid, 0.7, weights, paths=PATHS)
    assert _no_zero_warning(bias_grid, 0.7, weights)[0] == pytest.approx(np.sum(weights ** 2))


def test_full_broadcasts_an_array_value():
    weights = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    check_grads(row_tiled, np.array([0.1, -0.2, 0.3, 0.5]), weights, paths=PATHS)


def test_linspace_of_arrays_is_refused_at_its_line():
    def ramps(starts, stops):
        return np.sum(np.linspace(starts, stops, 4))

    with pytest.raises(ad.NonDifferentiableError, match="np.linspace: start and stop"):
        ad.gradient(ad.differentiable(ramps, jit=False))(np.zeros(2), np.ones(2))

