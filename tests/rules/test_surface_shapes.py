"""Issue 23, shapes and products: each rearrangement and product NumPy users reach for,
checked on the Python path in every form (axes, negative axes, tuples, modes) and on
the Numba path in representative ones, with ``check_grads`` (finite differences, the
dot-product identity, Numba = Python).  The forward values are NumPy's own (checked
against the function run by NumPy), and what stays refused says so at its line.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import check_grads

rng = np.random.default_rng(23)
cube = rng.normal(size=(2, 3, 4))
grid = rng.normal(size=(3, 4))
signal = rng.normal(size=(5,))
column = rng.normal(size=(3, 1, 2))
weights4 = rng.normal(size=(4,))


# ---- permutations, squeeze, expand_dims -------------------------------------------------
def channels_last(volume):
    return np.moveaxis(volume, 0, -1) * np.arange(24.0).reshape(3, 4, 2)


def moved_pair(volume):
    return np.moveaxis(volume, (0, 1), (2, 0))


def swapped(volume):
    return np.swapaxes(volume, 0, 2)


def swapped_method(image):
    return image.swapaxes(-1, 0) @ weights4[:3]


def rolled_axis(volume):
    return np.rollaxis(volume, 2)


def rolled_axis_start(volume):
    return np.rollaxis(volume, 0, 2)


def transposed_axes(volume):
    return np.transpose(volume, (2, 0, 1))


def transposed_method(volume):
    return volume.transpose(2, 0, 1)


def transposed_method_tuple(volume):
    return volume.transpose((1, -1, 0))


def squeezed(stack):
    return np.squeeze(stack, axis=1)


def squeezed_tuple(stack):
    return np.squeeze(stack[:1], (0, 1))


def squeezed_method(stack):
    return stack.squeeze(-2)


def expanded(image):
    return np.expand_dims(image, 1) * image[:, None, :]


def expanded_tuple(samples):
    return np.expand_dims(samples, (0, -1))


# ---- flips and rotations ------------------------------------------------------------------
def flipped(image):
    return np.flip(image)


def flipped_axis(volume):
    return np.flip(volume, 1)


def flipped_axes(volume):
    return np.flip(volume, (0, -1))


def upside_down(image):
    return np.flipud(image)


def mirrored(volume):
    return np.fliplr(volume)


def rotated(image):
    return np.rot90(image)


def rotated_twice(image):
    return np.rot90(image, 2)


def rotated_back(volume):
    return np.rot90(volume, -1, axes=(1, 2))


def rotated_three(volume):
    return np.rot90(volume, 3, (2, 0))


# ---- selections ---------------------------------------------------------------------------
def lower(image):
    return np.tril(image, -1)


def upper_stack(volume):
    return np.triu(volume, 1)


def lower_of_vector(samples):
    return np.tril(samples)


def diagonal_matrix(samples):
    return np.diag(samples, 1)


def diagonal_of(image):
    return np.diag(image, -1)


def diagonal_axes(volume):
    return np.diagonal(volume, 1, 2, 0)


def diagonal_method(image):
    return image.diagonal()


def diagonal_last_axes(volume):
    return np.diagonal(volume, -1, axis1=-2, axis2=-1)


# ---- repeat, tile, roll, pad, append ------------------------------------------------------
def repeated(image):
    return np.repeat(image, 2)


def repeated_rows(image):
    return np.repeat(image, (1, 0, 2), axis=0)


def repeated_method(image):
    return image.repeat(3, 1)


def repeated_negative_axis(volume):
    return np.repeat(volume, 2, axis=-1)


def tiled(image):
    return np.tile(image, (2, 1, 3))


def tiled_vector(samples):
    return np.tile(samples, 2)


def tiled_fewer_reps(volume):
    return np.tile(volume, (2, 1))


def rolled(image):
    return np.roll(image, 2)


def rolled_columns(image):
    return np.roll(image, -1, axis=1)


def rolled_two_axes(volume):
    return np.roll(volume, (1, 2), axis=(0, 2))


def rolled_far(samples):
    return np.roll(samples, 7, axis=0)


def padded(image):
    return np.pad(image, 1)


def padded_reflect(image):
    return np.pad(image, ((1, 2), (3, 0)), mode="reflect")


def padded_edge(volume):
    return np.pad(volume, (2, 1), "edge")


def padded_wrap(samples):
    return np.pad(samples, 2, mode="wrap")


def padded_symmetric(image):
    return np.pad(image, ((0, 0), (5, 1)), mode="symmetric")


def padded_reflect_wide(samples):
    return np.pad(samples, (6, 9), mode="reflect")


def appended(image):
    return np.append(image, image[0])


def appended_rows(image):
    return np.append(image, image[:1] * 2.0, axis=0)


def appended_number(image):
    return np.append(image, 2.0 * image[0, 0])


PYTHON_CASES = [
    (channels_last, cube), (moved_pair, cube), (swapped, cube), (swapped_method, grid),
    (rolled_axis, cube), (rolled_axis_start, cube), (transposed_axes, cube),
    (transposed_method, cube), (transposed_method_tuple, cube), (squeezed, column),
    (squeezed_tuple, column), (squeezed_method, column), (expanded, grid),
    (expanded_tuple, signal),
    (flipped, grid), (flipped_axis, cube), (flipped_axes, cube), (upside_down, grid),
    (mirrored, cube), (rotated, grid), (rotated_twice, grid), (rotated_back, cube),
    (rotated_three, cube),
    (lower, grid), (upper_stack, cube), (lower_of_vector, signal), (diagonal_matrix, signal),
    (diagonal_of, grid), (diagonal_axes, cube), (diagonal_method, grid),
    (diagonal_last_axes, cube),
    (repeated, grid), (repeated_rows, grid), (repeated_method, grid),
    (repeated_negative_axis, cube), (tiled, grid), (tiled_vector, signal),
    (tiled_fewer_reps, cube), (rolled, grid), (rolled_columns, grid), (rolled_two_axes, cube),
    (rolled_far, signal), (padded, grid), (padded_reflect, grid), (padded_edge, cube),
    (padded_wrap, signal), (padded_symmetric, grid), (padded_reflect_wide, signal),
    (appended, grid), (appended_rows, grid), (appended_number, grid),
]

NUMBA_CASES = [
    (channels_last, cube), (transposed_method, cube), (squeezed, column),
    (expanded_tuple, signal), (rotated_three, cube), (flipped_axes, cube),
    (upper_stack, cube), (diagonal_of, grid), (diagonal_axes, cube), (diagonal_matrix, signal),
    (repeated_rows, grid), (tiled, grid), (rolled_two_axes, cube), (padded_reflect, grid),
    (padded_edge, cube), (appended_rows, grid),
]


def _name(case) -> str:
    return case[0].__name__


@pytest.mark.parametrize("case", PYTHON_CASES, ids=_name)
def test_python_path(case):
    fn, arg = case
    check_grads(fn, arg, paths=("python",))
    value = ad.value_with_pullback(ad.differentiable(fn, jit=False), arg.copy())[0]
    np.testing.assert_allclose(value, fn(arg.copy()), rtol=1e-13)


@pytest.mark.parametrize("case", NUMBA_CASES, ids=_name)
def test_numba_path(case):
    fn, arg = case
    check_grads(fn, arg)


# ---- refusals -----------------------------------------------------------------------------
def squeeze_everything(stack):
    return np.squeeze(stack)


def pad_with_mean(image):
    return np.pad(image, 1, mode="mean")


def diag_of_cube(volume):
    return np.diag(volume)


@pytest.mark.parametrize(("fn", "arg", "words"), [
    (squeeze_everything, column, "np.squeeze: give the axis"),
    (pad_with_mean, grid, "np.pad: mode must be one of"),
    (diag_of_cube, cube, "np.diag: the array must have 1 or 2 dimensions"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_with_a_located_message(fn, arg, words):
    with pytest.raises(NonDifferentiableError, match=words) as info:
        ad.value_with_pullback(ad.differentiable(fn, jit=False), arg)
    assert "test_surface_shapes.py:" in str(info.value)
