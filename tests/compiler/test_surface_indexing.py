"""Issue 23, indexing: an integer index array mixed with integers and slices
(``x[idx, 1:]``, ``x[1:, idx]``, ``x[0, idx]``, with NumPy's placement of the
array's axes), ``...`` in subscripts, and a boolean mask of two or more
dimensions on the Numba path (``rt.masked``: Numba reads only 1-d masks), each
checked with ``check_grads`` (finite differences, dot-product identity, Numba =
Python).  Writes through a mixed index stay refused, with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import check_grads

rng = np.random.default_rng(231)
table = rng.normal(size=(4, 5))
volume = rng.normal(size=(3, 4, 5))
rows = np.array([2, 0, 2])
grid_rows = np.array([[1, 3], [0, 1]])


def rows_then_slice(weights, picks):
    return weights[picks, 1:] * 2.0


def slice_then_rows(weights, picks):
    return weights[1:, picks] ** 2


def number_then_rows(weights, picks):
    return weights[0, picks] * weights[1, picks]


def rows_then_number(weights, picks):
    return weights[picks, -1]


def middle_axis(cube, picks):
    return cube[:, picks, 1:4]


def apart_from_number(cube, picks):
    return cube[0, :, picks]  # NumPy puts the array's axis first


def grid_of_rows(cube, picks):
    return cube[1, picks, :]


def ellipsis_last(cube):
    return cube[..., 1] * cube[..., -1]


def ellipsis_first(cube):
    return np.sum(cube[0, ...] ** 2) + cube[..., 2, :]


def mask_of_volume(cube):
    return cube[cube > 0.2] * 3.0


def mask_of_leading_axes(cube):
    keep = cube[:, :, 0] > 0.0
    return cube[keep] ** 2


PYTHON_CASES = [
    (rows_then_slice, table, rows), (slice_then_rows, table, rows),
    (number_then_rows, table, rows), (rows_then_number, table, rows),
    (middle_axis, volume, rows), (apart_from_number, volume, np.array([4, 1, 1])),
    (grid_of_rows, volume, grid_rows), (ellipsis_last, volume), (ellipsis_first, volume),
    (mask_of_volume, volume), (mask_of_leading_axes, volume),
]
NUMBA_CASES = [
    (rows_then_slice, table, rows), (apart_from_number, volume, np.array([4, 1, 1])),
    (grid_of_rows, volume, grid_rows), (ellipsis_first, volume), (mask_of_volume, volume),
    (mask_of_leading_axes, volume),
]


def _name(case) -> str:
    return case[0].__name__


@pytest.mark.parametrize("case", PYTHON_CASES, ids=_name)
def test_python_path(case):
    fn, *args = case
    check_grads(fn, *args, paths=("python",))
    value = ad.value_with_pullback(ad.differentiable(fn, jit=False), *args)[0]
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13)


@pytest.mark.parametrize("case", NUMBA_CASES, ids=_name)
def test_numba_path(case):
    fn, *args = case
    check_grads(fn, *args)


def write_through_mixed_index(weights, picks):
    copy = weights * 1.0
    copy[picks, 1:] = 0.0
    return np.sum(copy * weights)


def test_a_write_through_a_mixed_index_is_refused_at_its_line():
    with pytest.raises(NonDifferentiableError, match="through an index array mixed with "
                       "integers or slices") as info:
        ad.gradient(write_through_mixed_index)(table, rows)
    assert "test_surface_indexing.py:" in str(info.value)
