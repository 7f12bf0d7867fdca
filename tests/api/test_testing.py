"""s2s_ad.testing.check_grads: the public gradient checker, on both catalogues, and
shown to fail on wrong derivatives (a checker that cannot fail proves nothing)."""

import zlib

import numpy as np
import pytest
from array_catalogue import CATALOGUE as ARRAY_CATALOGUE
from catalogue import CATALOGUE

import s2s_ad as ad
from s2s_ad.testing import check_grads

SCALAR = [pytest.param(c, id=c.name) for c in CATALOGUE[::4]]
ARRAY = [pytest.param(c, id=c.name) for c in ARRAY_CATALOGUE[::4] if c.rtol == 1e-5]


@pytest.mark.parametrize("case", SCALAR)
def test_scalar_catalogue(case):
    check_grads(case.fn, *case.args, seed=zlib.crc32(case.name.encode()))


@pytest.mark.parametrize("case", ARRAY)
def test_array_catalogue(case):
    check_grads(case.fn, *case.args, seed=zlib.crc32(case.name.encode()))


def cube(q):
    return q * q * q


def wrong_cube_derivative(q):
    return cube(q), lambda v: 2.0 * q * q * v  # should be 3 q^2


def test_a_wrong_custom_derivative_is_caught():
    ad.derivative(of=cube)(wrong_cube_derivative)
    with pytest.raises(AssertionError, match="central finite differences"):
        check_grads(cube, 1.5, paths=("python",))


def twice_sum(w):
    return w * 2.0


def wrong_array_derivative(w):
    return twice_sum(w), lambda v: v * np.array([2.0, 2.0, 2.5])


def test_a_wrong_array_entry_is_caught():
    ad.derivative(of=twice_sum)(wrong_array_derivative)
    with pytest.raises(AssertionError, match=r"\[2\]"):
        check_grads(twice_sum, np.array([1.0, 2.0, 3.0]), paths=("python",))
