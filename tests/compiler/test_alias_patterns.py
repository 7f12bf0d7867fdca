"""Array patterns that an alias analysis must accept (issue 23): module constants in
tuples and lists, in-place operators on argument arrays, double buffering, views
rebound and written, writes around calls.  Each in both paths, against finite
differences; the refusals that remain name what makes the write unsafe."""

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])

# -- module constants in tuples and lists ----------------------------------------------

LAYER_GAINS = (0.5, 1.5)
STAGE_WEIGHTS = [1.0, 2.0, -0.5]


def gated_response(signal):
    return np.sum(np.tanh(signal * LAYER_GAINS[0]) * LAYER_GAINS[1])


def staged_energy(position):
    energy = 0.0
    for k in range(len(STAGE_WEIGHTS)):
        energy = energy + STAGE_WEIGHTS[k] * np.sin(position * (k + 1.0))
    return energy


def weighted_powers(rate):
    total = 0.0
    power = rate
    for weight in STAGE_WEIGHTS:
        total = total + weight * power
        power = power * rate
    return total


@pytest.mark.parametrize("f, args", [
    (gated_response, (np.array([0.3, -1.2, 0.8]),)),
    (staged_energy, (0.7,)),
    (weighted_powers, (1.3,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_module_tuples_and_lists_of_numbers_are_read(f, args):
    check_grads(f, *args, seed=3)


@PATHS
def test_rebinding_a_module_tuple_or_list_between_calls_is_seen(jit):
    global LAYER_GAINS, STAGE_WEIGHTS
    saved = LAYER_GAINS, STAGE_WEIGHTS
    signal = np.array([0.3, -1.2, 0.8])
    try:
        grad_g = ad.gradient(ad.differentiable(gated_response, jit=jit))
        grad_s = ad.gradient(ad.differentiable(staged_energy, jit=jit))
        grad_g(signal)
        grad_s(0.7)
        LAYER_GAINS = (2.0, -1.0)  # new values
        STAGE_WEIGHTS = [0.25, 4.0]  # a new length
        np.testing.assert_allclose(grad_g(signal), -2.0 / np.cosh(2.0 * signal) ** 2)
        assert grad_s(0.7) == pytest.approx(0.25 * np.cos(0.7) + 8.0 * np.cos(1.4))
        STAGE_WEIGHTS[1] = 1.0  # changed in place
        assert grad_s(0.7) == pytest.approx(0.25 * np.cos(0.7) + 2.0 * np.cos(1.4))
    finally:
        LAYER_GAINS, STAGE_WEIGHTS = saved


MIXED = (1.0, np.ones(2))


def reads_a_mixed_tuple(x):
    return x * MIXED[0]


def test_a_module_tuple_of_arrays_is_refused_where_it_is_read():
    with pytest.raises(ad.NonDifferentiableError, match="a tuple cannot be used as a value"):
        ad.gradient(reads_a_mixed_tuple)(1.0)
