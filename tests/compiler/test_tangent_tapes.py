"""Forward mode over gradient code keeps the tangents of tapes that grow together as
the columns of one tangent tape grown at one place (``s2s_ad.compiler.tangent_tapes``):
under Numba each array rebound in a loop costs a reference count per iteration, and a
Newton loop's ten growing tapes cost more than its arithmetic.

The Hessian-vector products of functions whose gradient code grows tapes in ``while``
loops (past their first length, so the tangent tape grows too) equal finite
differences of the gradient on both paths; the generated code grows one tangent tape;
a tape growing alone keeps its own tangent tape; ``rt.grow`` grows a tape of columns
by rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hvp_checks import check_hvp

import s2s_ad as ad
from s2s_ad import runtime as rt
from s2s_ad.higher_order import _plan_for

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


def eccentric_anomalies(eccentricity, phase, count):
    total = 0.0
    for i in range(count):
        mean = phase + 0.37 * i
        guess = mean
        steps = 0
        while steps < 50:
            step = (guess - eccentricity * math.sin(guess) - mean) / \
                (1.0 - eccentricity * math.cos(guess))
            guess = guess - step
            steps += 1
            if math.fabs(step) < 1e-13:
                break
        total = total + math.cos(guess) * mean
    return total / count


def settling(rate, level, count):
    height = level
    energy = 0.0
    steps = 0
    while steps < count:
        height = height * (1.0 - rate)
        energy = energy + math.sin(height)
        steps += 1
    return energy


def drifting(rate, level, count):
    height = level
    energy = 0.0
    steps = 0
    while steps < count:
        height = height - 0.1 * rate
        energy = energy + math.sin(height)
        steps += 1
    return energy


def _tangent_source(fn, args: tuple, tangents: tuple) -> str:
    plan = _plan_for(ad.differentiable(fn, jit=False), args, frozenset(), tangents)
    return plan.inner_t.tangent_module.source


@PATHS
def test_hvps_through_growing_tapes_equal_differences_of_the_gradient(jit):
    # 40 solves of ~5 Newton steps: the tapes (8 long at first) grow several times
    for fn, args in [(eccentric_anomalies, (0.6, 0.3, 40)), (settling, (0.02, 3.0, 30)),
                     (drifting, (0.02, 3.0, 30))]:
        status, detail = check_hvp(fn, args, jit)
        assert status == "pass", (fn.__name__, detail)


def test_the_tapes_of_a_newton_loop_share_one_tangent_tape():
    source = _tangent_source(eccentric_anomalies, (0.6, 0.3, 40), (1.0, 0.5, None))
    assert source.count("t_tapes = rt.grow(t_tapes, ") == 1
    assert "t_tapes = np.zeros((8, 5))" in source
    grows = [line for line in source.splitlines()
             if "= rt.grow(" in line and not line.lstrip().startswith("#")]
    assert len(grows) == 5 + 1  # the five tapes, and their one tangent tape


def test_a_tape_growing_alone_keeps_its_own_tangent_tape():
    two = _tangent_source(settling, (0.02, 3.0, 30), (1.0, 0.5, None))
    assert "t_tapes = np.zeros((8, 2))" in two
    one = _tangent_source(drifting, (0.02, 3.0, 30), (1.0, 0.5, None))
    assert "t_tapes" not in one
    assert "t_height_tape = rt.grow(t_height_tape, " in one


@pytest.mark.parametrize("grow", [rt.grow, numba.njit(lambda tape, at: rt.grow(tape, at))],
                         ids=["python", "numba"])
def test_grow_keeps_the_rows_of_a_tape_of_columns(grow):
    tape = np.arange(6.0).reshape(2, 3)
    assert grow(tape, 1) is tape
    bigger = grow(tape, 2)
    assert bigger.shape == (8, 3) and np.array_equal(bigger[:2], tape)
    assert grow(np.arange(3.0), 3).shape == (8,)
