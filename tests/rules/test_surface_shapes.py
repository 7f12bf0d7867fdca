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


def _name(case) -> str:
    return case[0].__name__


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


# ---- products -----------------------------------------------------------------------------
batch = rng.normal(size=(2, 3, 4))
layer = rng.normal(size=(4, 5))
kernels = rng.normal(size=(3, 4, 5))
broadcast_kernels = rng.normal(size=(2, 1, 4, 5))
stacked = rng.normal(size=(3, 3, 4))
pairs = rng.normal(size=(2, 4, 3))
small = rng.normal(size=(2, 5))


def contracted_once(tensor, matrix):
    return np.tensordot(tensor, matrix, 1)


def contracted_pairs(tensor, other):
    return np.tensordot(tensor, other, axes=([0, 2], [0, 1]))


def contracted_default(matrix, tensor):
    return np.tensordot(matrix, tensor)


def outer_tensordot(samples, matrix):
    return np.tensordot(samples, matrix, 0)


def contracted_negative(tensor, other):
    return np.tensordot(tensor, other, axes=((-1,), (1,)))


def dot_batched(tensor, matrix):
    return np.dot(tensor, matrix)


def dot_with_number(gain, matrix):
    return np.dot(gain, matrix) + np.dot(matrix, 2.0 * gain)


def dot_of_numbers(gain, bias):
    return np.dot(gain, bias)


def matmul_operator(tensor, matrix):
    return tensor @ matrix


def matmul_broadcast(tensor, kernel):
    return np.matmul(tensor, kernel)


def matmul_vector_left(samples, kernel):
    return samples @ kernel


def matmul_vector_right(tensor, samples):
    return np.matmul(tensor, samples)


def inner_of(tensor, matrix):
    return np.inner(tensor, matrix)


def inner_of_vectors(left, right):
    return np.inner(left, right)


def inner_with_number(gain, matrix):
    return np.inner(gain, matrix)


def vdot_of(matrix, other):
    return np.vdot(matrix, other)


def kron_of(matrix, other):
    return np.kron(matrix, other)


def kron_mixed(tensor, samples):
    return np.kron(tensor, samples)


def einsum_batched(tensor, matrix):
    return np.einsum("...ij,...j->...i", tensor, matrix)


def einsum_ellipsis_implicit(tensor):
    return np.einsum("i...", tensor)


def einsum_ellipsis_middle(tensor, samples):
    return np.einsum("a...c,c->...", tensor, samples)


def einsum_interleaved(matrix, other):
    return np.einsum(matrix, [0, 1], other, [1, 2], [0, 2])


def einsum_interleaved_implicit(matrix):
    return np.einsum(matrix, [1, 0])


PRODUCT_CASES = [
    (contracted_once, batch, layer), (contracted_pairs, batch, rng.normal(size=(2, 4, 3))),
    (contracted_default, grid, rng.normal(size=(3, 4, 2))), (outer_tensordot, weights4, grid),
    (contracted_negative, batch, rng.normal(size=(3, 4, 2))),
    (dot_batched, batch, layer), (dot_batched, grid, kernels), (dot_batched, batch, weights4),
    (dot_with_number, 2.5, grid), (dot_of_numbers, 1.5, -0.5),
    (matmul_operator, batch, layer), (matmul_operator, stacked, broadcast_kernels),
    (matmul_broadcast, grid, kernels), (matmul_vector_left, weights4, kernels),
    (matmul_vector_right, batch, weights4),
    (inner_of, batch, grid), (inner_of_vectors, weights4, weights4), (inner_with_number, 2.0, grid),
    (vdot_of, grid, rng.normal(size=(2, 6))),
    (kron_of, grid, small), (kron_mixed, batch, weights4), (kron_of, weights4, small),
    (einsum_batched, batch, small[:, :4].copy()), (einsum_ellipsis_implicit, batch),
    (einsum_ellipsis_middle, batch, weights4), (einsum_interleaved, grid, layer),
    (einsum_interleaved_implicit, grid),
]

NUMBA_PRODUCT_CASES = [
    (contracted_pairs, batch, rng.normal(size=(2, 4, 3))), (dot_batched, batch, layer),
    (dot_with_number, 2.5, grid), (matmul_operator, stacked, broadcast_kernels),
    (matmul_vector_left, weights4, kernels), (matmul_vector_right, batch, weights4),
    (inner_of, batch, grid), (vdot_of, grid, rng.normal(size=(2, 6))),
    (kron_mixed, batch, weights4), (einsum_batched, batch, small[:, :4].copy()),
    (einsum_interleaved, grid, layer),
]


@pytest.mark.parametrize("case", PRODUCT_CASES, ids=_name)
def test_products_python_path(case):
    fn, *operands = case
    check_grads(fn, *operands, paths=("python",))


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
@pytest.mark.parametrize("case", NUMBA_PRODUCT_CASES, ids=_name)
def test_products_numba_path(case):
    fn, *operands = case
    check_grads(fn, *operands)


def test_a_batched_product_keeps_numpy_s_value_on_both_paths():
    for jit in (False, True):
        value, _ = ad.value_with_pullback(ad.differentiable(matmul_operator, jit=jit),
                                          stacked, broadcast_kernels)
        np.testing.assert_allclose(value, stacked @ broadcast_kernels, rtol=1e-13)


# ---- stacks of one array ------------------------------------------------------------------
def hstack_of_one(image):
    return np.hstack((image,))


def hstack_of_rows(volume):
    return np.hstack(volume)


def column_stack_of_one(image):
    return np.column_stack((image,))


def column_stack_of_rows(image):
    return np.column_stack(image)


def column_stack_of_planes(volume):
    return np.column_stack(volume * 2.0)


def row_stacked(image):
    return np.row_stack((image, image * 2.0))


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="NumPy without row_stack")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # NumPy 2 deprecates row_stack
def test_row_stack_is_vstack_on_both_paths():
    check_grads(row_stacked, grid)


# ---- splits: the tuple of pieces -------------------------------------------------------------
def halves_product(image):
    left, right = np.split(image, 2, axis=1)
    return left * right


def split_at_indices(samples):
    head, middle, tail = np.split(samples, [1, 3])
    return np.sum(head) * middle + np.sum(tail ** 2)


def split_negative_axis(volume):
    first, second = np.split(volume, 2, -1)
    return first - 2.0 * second


def uneven_thirds(samples):
    parts = np.array_split(samples, 3)
    return parts[0] * parts[1] + parts[2][0]


def rows_split(image):
    top, bottom = np.vsplit(image[:2], 2)
    return top * bottom


def columns_split(image):
    pieces = np.hsplit(image, (1,))
    return np.sum(pieces[0]) * pieces[1]


def vector_hsplit(samples):
    a, b, c, d, e = np.hsplit(samples, 5)
    return a * b + c * d * e


def depth_split(volume):
    near, far = np.dsplit(volume, 2)
    return near * far


def unequal_split(samples):
    left, right = np.split(samples, 2)
    return np.sum(left * right)


# ---- np.gradient, np.select ---------------------------------------------------------------
def slope(samples):
    return np.gradient(samples)


def slope_spaced(image, spacing):
    return np.gradient(image, spacing, axis=1) * image


def slope_last_axis(volume):
    return np.gradient(volume, 0.5, axis=-1)


def piecewise(image):
    return np.select([image > 0.5, image < -0.5], [image * 2.0, image ** 2], 0.0)


def piecewise_default(image, level):
    return np.select((image > 0.2,), (np.sin(image),), level * image)


def piecewise_number_choice(image, level):
    return np.select([image > 0.0, image < -0.3], [level, image], default=level * 2.0)


# ---- np.partition (a subgradient like sort's), np.r_ and np.c_ ------------------------------
def smallest_two(image):
    return np.sum(np.partition(image, 2)[:, :2] ** 2)


def middle_rank(image):
    return np.partition(image, 1, axis=0)[1] * 3.0


def largest(samples):
    return np.partition(samples, -1)[-1]


def joined_rows(samples, other):
    return np.r_[samples, 2.0 * other, 1.5]


def joined_matrices(image):
    return np.r_[image, image * 2.0]


def joined_columns(samples, other):
    return np.c_[samples, other * 3.0]


def joined_column_blocks(image):
    return np.c_[image, image ** 2]


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
    (hstack_of_one, grid), (hstack_of_rows, cube), (column_stack_of_one, grid),
    (column_stack_of_rows, grid), (column_stack_of_planes, cube),
    (halves_product, grid), (split_at_indices, signal), (split_negative_axis, cube),
    (uneven_thirds, signal), (rows_split, grid), (columns_split, grid), (vector_hsplit, signal),
    (depth_split, cube),
    (slope, signal), (slope_spaced, grid, 0.7), (slope_last_axis, cube), (piecewise, grid),
    (piecewise_default, grid, 0.4), (piecewise_number_choice, grid, -0.6),
    (smallest_two, grid), (middle_rank, grid), (largest, signal),
    (joined_rows, signal, weights4[:2].copy()), (joined_matrices, grid),
    (joined_columns, signal, signal[::-1].copy()), (joined_column_blocks, grid),
]

NUMBA_CASES = [
    (channels_last, cube), (transposed_method, cube), (squeezed, column),
    (expanded_tuple, signal), (rotated_three, cube), (flipped_axes, cube),
    (upper_stack, cube), (diagonal_of, grid), (diagonal_axes, cube), (diagonal_matrix, signal),
    (repeated_rows, grid), (tiled, grid), (rolled_two_axes, cube), (padded_reflect, grid),
    (padded_edge, cube), (appended_rows, grid), (hstack_of_rows, cube),
    (column_stack_of_rows, grid), (split_at_indices, signal), (uneven_thirds, signal),
    (columns_split, grid), (slope_spaced, grid, 0.7), (piecewise_default, grid, 0.4),
    (smallest_two, grid), (joined_rows, signal, weights4[:2].copy()), (joined_columns, signal,
                                                                      signal[::-1].copy()),
]




@pytest.mark.parametrize("case", PYTHON_CASES, ids=_name)
def test_python_path(case):
    fn, *args = case
    check_grads(fn, *args, paths=("python",))
    value = ad.value_with_pullback(ad.differentiable(fn, jit=False), *args)[0]
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13)


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
@pytest.mark.parametrize("case", NUMBA_CASES, ids=_name)
def test_numba_path(case):
    fn, *args = case
    check_grads(fn, *args)


# ---- refusals -----------------------------------------------------------------------------
def squeeze_everything(stack):
    return np.squeeze(stack)


def pad_with_mean(image):
    return np.pad(image, 1, mode="mean")


def diag_of_cube(volume):
    return np.diag(volume)


def matmul_by_number(matrix):
    return np.matmul(matrix, 2.0)


def slope_of_image(image):
    return np.gradient(image)


def slope_second_order(samples):
    return np.gradient(samples, edge_order=2)


@pytest.mark.parametrize(("fn", "arg", "words"), [
    (slope_of_image, grid, "np.gradient of an array of more than 1 dimension returns one"),
    (slope_second_order, signal, "np.gradient: only edge_order=1"),
    (matmul_by_number, grid, "matmul: a number is not a matrix"),
    (squeeze_everything, column, "np.squeeze: give the axis"),
    (pad_with_mean, grid, "np.pad: mode must be one of"),
    (diag_of_cube, cube, "np.diag: the array must have 1 or 2 dimensions"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_with_a_located_message(fn, arg, words):
    with pytest.raises(NonDifferentiableError, match=words) as info:
        ad.value_with_pullback(ad.differentiable(fn, jit=False), arg)
    assert "test_surface_shapes.py:" in str(info.value)


def test_np_split_into_unequal_pieces_raises_as_numpy_does():
    for jit in (False, True):
        with pytest.raises(ValueError, match="array split does not result in an equal division"):
            ad.gradient(ad.differentiable(unequal_split, jit=jit))(signal)


def split_runtime_count(samples):
    pieces = np.split(samples, len(samples))
    return np.sum(pieces[0])


def test_a_split_into_a_number_of_pieces_known_only_at_run_time_is_refused():
    with pytest.raises(NonDifferentiableError, match="np.split: the sections must be a "
                       "literal int or tuple of ints") as info:
        ad.gradient(split_runtime_count)(signal)
    assert "test_surface_shapes.py:" in str(info.value)


# ---- a write after a view: refused (NumPy would write through it) ----------------------------
def write_into_transposed(volume):
    doubled = volume * 2.0
    view = np.transpose(doubled, (2, 0, 1))
    view[0, 1, 1] = 5.0
    return np.sum(doubled * volume)


def write_into_flipped(image):
    doubled = image * 2.0
    view = np.flip(doubled, 1)
    view[0, 0] = 1.0
    return np.sum(doubled * image)


def write_into_diagonal(image):
    doubled = image * 2.0
    view = np.diagonal(doubled)
    view[0] = 1.0
    return np.sum(doubled * image)


def write_into_piece(samples):
    doubled = samples * 2.0
    head, tail = np.split(doubled, [2])
    head[0] = 1.0
    return np.sum(doubled * samples)


@pytest.mark.parametrize(("fn", "arg"), [(write_into_transposed, cube),
                                         (write_into_flipped, grid),
                                         (write_into_diagonal, grid),
                                         (write_into_piece, signal)], ids=lambda v: getattr(
                                             v, "__name__", ""))
def test_a_write_through_a_view_is_refused_at_its_line(fn, arg):
    with pytest.raises(NonDifferentiableError, match="writing into 'view'|writing into 'head'") \
            as info:
        ad.gradient(fn)(arg)
    assert "test_surface_shapes.py:" in str(info.value)


def test_partition_at_a_tie_gives_each_rank_one_entry():
    """The subgradient at ties: the tied entries take the cotangents of their ranks in
    order (as a stable sort), so the gradient of the kth value goes to one entry."""
    tied = np.array([3.0, 1.0, 1.0, 2.0])

    def second_smallest(values):
        return np.partition(values, 1)[1]

    for jit in (False, True):
        grad = ad.gradient(ad.differentiable(second_smallest, jit=jit))(tied)
        np.testing.assert_array_equal(grad, [0.0, 0.0, 1.0, 0.0])


def range_in_r(samples):
    return np.r_[samples, 0:3]


def test_np_r_with_a_slice_is_refused_at_its_line():
    with pytest.raises(NonDifferentiableError, match="np.r_ with slices or string "
                       "directives is not supported") as info:
        ad.value_with_pullback(ad.differentiable(range_in_r, jit=False), signal)
    assert "test_surface_shapes.py:" in str(info.value)
