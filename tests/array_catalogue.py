"""A catalogue of small NumPy-array functions that every derivative path must get right.

Each function is plain, undecorated Python at module level so that the compiler reads
it through its own source. Arguments come from one seeded generator and are chosen
inside each function's math domain and away from its kinks: logs see positive values,
arcsin and arccos see (-1, 1), `abs`/`maximum`/`clip`/`where` see values well away from
their switching points, `max`/`min` see distinct values, and the matrices given to
`solve`, `inv` and `det` are diagonally dominant. So central finite differences are a
valid reference everywhere.

Functions may return a scalar or an array. Float arrays and floats are differentiated;
int arrays and ints are not (they index and steer loops).

`numba=False` would mark a case that only the Python path can run (none needs it).
`rtol` and `atol` loosen the finite-difference tolerance for float32 cases, where the
gradient itself is computed in float32.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Case:
    """One function and one argument tuple at which to check its derivative."""

    name: str
    fn: Callable
    args: tuple
    numba: bool = True
    rtol: float = 1e-5
    atol: float = 1e-7


_rng = np.random.default_rng(0)


def uniform(shape, low=-1.0, high=1.0, dtype=np.float64):
    """Random values in [low, high) of the given shape and dtype."""
    return _rng.uniform(low, high, shape).astype(dtype)


def away_from_zero(shape, low=0.3, high=1.5):
    """Random values with |v| in [low, high) and random signs: no kink of abs/relu nearby."""
    return _rng.uniform(low, high, shape) * _rng.choice([-1.0, 1.0], size=shape)


def distinct(shape, low=-2.0, high=2.0):
    """Values spread evenly over [low, high] and shuffled, so no two are closer than
    (high - low) / size: no ties for max, min or argmax."""
    size = int(np.prod(shape))
    values = np.linspace(low, high, size)
    _rng.shuffle(values)
    return values.reshape(shape)


def well_conditioned(n):
    """A random diagonally dominant n x n matrix: invertible, with a moderate condition
    number and a positive determinant."""
    return _rng.uniform(-0.5, 0.5, (n, n)) + n * np.eye(n)


def strided(shape):
    """A non-contiguous view: every other row of a larger array."""
    base = uniform((2 * shape[0],) + tuple(shape[1:]))
    return base[::2]


def transposed(shape):
    """A non-contiguous (Fortran-ordered) view: the transpose of a C-ordered array."""
    return uniform(tuple(reversed(shape))).T


# --- element-wise ufuncs, one per rule ------------------------------------------------------


def ufunc_sin(x):
    return np.sin(x)


def ufunc_cos(x):
    return np.cos(x)


def ufunc_tan(x):
    return np.tan(x)


def ufunc_arcsin(x):
    return np.arcsin(x)


def ufunc_arccos(x):
    return np.arccos(x)


def ufunc_arctan(x):
    return np.arctan(x)


def ufunc_sinh(x):
    return np.sinh(x)


def ufunc_cosh(x):
    return np.cosh(x)


def ufunc_tanh(x):
    return np.tanh(x)


def ufunc_exp(x):
    return np.exp(x)


def ufunc_expm1(x):
    return np.expm1(x)


def ufunc_log(x):
    return np.log(x)


def ufunc_log1p(x):
    return np.log1p(x)


def ufunc_log2(x):
    return np.log2(x)


def ufunc_log10(x):
    return np.log10(x)


def ufunc_sqrt(x):
    return np.sqrt(x)


def ufunc_square(x):
    return np.square(x)


def ufunc_abs(x):
    return np.abs(x)


def ufunc_negative(x):
    return np.negative(x)


def ufunc_chain_to_scalar(x):
    return np.sum(np.exp(np.sin(x)) * np.log1p(x * x) + np.sqrt(np.cosh(x)))


# --- operators and broadcasting ----------------------------------------------------------


def operators_same_shape(x, y):
    return x + y - x * y + x / (y + 3.0) - (-x)


def power_array_by_constants(x):
    return x**3 + x**0.5 - 2.0**x + x**-1


def power_array_by_array(x, y):
    return x**y


def scalar_with_array(a, x):
    return a * x + x / a - a**2 + (a - x) * (x + a)


def broadcast_column_with_row(c, r):
    return c * r + c - r / (c + 2.0)


def broadcast_vector_with_matrix(v, m):
    return m / (v + 2.0) + v * m - v


def broadcast_matrix_with_vector(m, v):
    return v - m + m * v


def broadcast_scalar_left(x):
    return 2.0 - x + 1.0 / (x + 3.0) + 3.0 * x


def broadcast_into_higher_rank(x, y):
    # (2, 3, 1) with (4,): the result is (2, 3, 4), both inputs are summed back.
    return np.sum(np.sin(x * y) + x**2 - y)


# --- where, maximum, minimum, clip -------------------------------------------------------


def where_select(x, y):
    return np.where(x > 0.0, x * y, y**2)


def where_with_scalar_branch(x):
    return np.sum(np.where(x < 0.0, 0.5, x * x))


def maximum_minimum(x, y):
    return np.maximum(x, y) * 2.0 + np.minimum(x, 2.0 * y)


def relu_by_maximum(x):
    return np.sum(np.maximum(x, 0.0) * x)


def clip_scalar_bounds(x):
    return np.clip(x, -0.5, 0.5) * x


# --- reductions: each with every axis variant --------------------------------------------


def sum_all(x):
    return np.sum(x)


def sum_axis0(x):
    return np.sum(x, axis=0)


def sum_axis1_keepdims(x):
    return np.sum(x, axis=1, keepdims=True)


def sum_axis_last(x):
    return np.sum(x, axis=-1)


def sum_all_keepdims(x):
    return np.sum(x * x, keepdims=True)


def sum_axis0_keepdims(x):
    return np.sum(x, axis=0, keepdims=True) * x


def mean_all(x):
    return np.mean(x * x)


def mean_axis0(x):
    return np.mean(x, axis=0)


def mean_axis1_keepdims(x):
    return np.mean(x, axis=1, keepdims=True)


def mean_axis_last(x):
    return np.mean(x, axis=-1)


def prod_all(x):
    return np.prod(x)


def prod_axis0(x):
    return np.prod(x, axis=0)


def prod_axis1_keepdims(x):
    return np.prod(x, axis=1, keepdims=True)


def max_all(x):
    return np.max(x)


def max_axis0(x):
    return np.max(x, axis=0)


def max_axis1_keepdims(x):
    return np.max(x, axis=1, keepdims=True)


def max_axis_last(x):
    return np.max(x, axis=-1)


def min_all(x):
    return np.min(x)


def min_axis0(x):
    return np.min(x, axis=0)


def min_axis1_keepdims(x):
    return np.min(x, axis=1, keepdims=True)


def min_axis_last_keepdims(x):
    return np.min(x, axis=-1, keepdims=True)


def reduction_methods(x):
    return x.sum() + x.mean() * x.prod() - x.min() + x.max()


def reduction_methods_with_axis(x):
    return np.sum(x.sum(axis=0) * x.max(axis=1, keepdims=True)) + x.mean(axis=1).sum()


def logsumexp_pattern(x):
    m = np.max(x, axis=1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))


# --- products -----------------------------------------------------------------------------


def dot_vector_vector(x, y):
    return np.dot(x, y)


def dot_matrix_vector(a, x):
    return np.dot(a, x)


def dot_vector_matrix(x, a):
    return np.dot(x, a)


def dot_matrix_matrix(a, b):
    return np.dot(a, b)


def matmul_function(a, b):
    return np.matmul(a, b)


def matmul_operator_all_ranks(a, x, b):
    return x @ x + (a @ x) @ (x @ a) + np.sum(a @ b)


def outer_product(x, y):
    return np.outer(x, y)


# --- shapes -------------------------------------------------------------------------------


def reshape_function(x, y):
    return np.reshape(x, (2, 3)) @ y


def reshape_method(x):
    return x.reshape(3, 2) * x.reshape((3, 2))


def transpose_function_and_attribute(a, b):
    return np.transpose(a) @ b + a.T @ b * 2.0


def concatenate_tuple(x, y):
    return np.concatenate((x, y * 2.0, x * y))


def stack_tuple(x, y):
    return np.stack((x, np.sin(y), x * y))


# --- linear algebra -----------------------------------------------------------------------


def vector_norm(x):
    return np.linalg.norm(x)


def solve_system(a, b):
    return np.linalg.solve(a, b)


def inverse_matrix(a):
    return np.linalg.inv(a)


def determinant(a):
    return np.linalg.det(a)


def linear_algebra_combined(a, b):
    return np.linalg.norm(np.linalg.solve(a, b)) + np.linalg.det(a @ a) * np.sum(np.linalg.inv(a))


# --- element and slice reads --------------------------------------------------------------


def read_elements(x):
    return x[1] * x[2] - x[0] / x[3]


def read_elements_2d(a):
    return a[1, 2] * a[0, 0] + a[2, 1] ** 2


def read_slice(x, y):
    return np.sum(x[1:4] * y)


def read_step_slice(x):
    return x[::2] * x[1::2]


def read_negative_index(x):
    return x[-1] * x[-2] + x[0]


def read_row_and_column(a):
    return a[1, :] * a[:, 2]


def read_in_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += x[i] * x[i + 1]
    return s


def read_with_int_index_parameter(x, i):
    return x[i] * x[i + 1] + x[0]


# --- writes into local arrays -------------------------------------------------------------


def write_elements_in_loop(x):
    n = len(x)
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] ** 2 + x[n - 1 - i]
    return y


def write_augmented_in_loop(x, w):
    y = np.zeros(3)
    for i in range(len(x)):
        y[i % 3] += w * x[i] * x[i]
    return y


def write_slice(x):
    y = x.copy()
    y[1:3] = x[:2] * 2.0
    y[3:] = np.sin(y[3:])
    return y * y


def write_row_of_matrix(a, x):
    b = np.zeros((3, 4))
    for i in range(3):
        b[i, :] = a[i, :] * x[i]
    return b


def overwrite_then_reuse(x):
    y = x.copy()
    old = y[1]
    y[1] = y[1] * y[2]
    y[2] = y[1] + old
    return old * y[1] + y[2] * y[0]


def overwrite_in_loop_recurrence(x):
    # A prefix product in place: each write overwrites a value the pullback needs.
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = y[i - 1] * y[i]
    return y


def overwrite_same_cell_in_loop(x):
    acc = np.zeros(1)
    for i in range(len(x)):
        acc[0] = acc[0] * x[i] + x[i] ** 2
    return acc[0]


def write_then_read_other_cells(x):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = np.sin(y[i - 1]) + x[i]
    return np.sum(y * y)


def write_augmented_operators(x):
    y = x.copy()
    y[0] += x[1]
    y[1] *= x[2]
    y[2] -= y[0] * x[0]
    y[3] /= x[1] + 2.0
    return y


# --- iteration ----------------------------------------------------------------------------


def iterate_values(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


def iterate_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):  # noqa: B905 (Numba and the spec take plain zip)
        s += np.sin(a) * b
    return s


def iterate_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s += (i + 1) * v**2
    return s


def iterate_rows(a):
    s = 0.0
    for row in a:
        s += np.sum(row * row) * row[0]
    return s


def len_and_shape(x, a):
    n = len(x)
    rows, cols = a.shape
    return np.sum(x) / n + np.sum(a) * rows / cols + x.shape[0] * x[0]


# --- non-differentiable operations --------------------------------------------------------


def argmax_selects(x):
    return x[np.argmax(x)] * 2.0 + x[np.argmin(x)]


def sign_floor_round(x):
    return np.sign(x) * x + np.floor(x * 3.0) * x + np.round(x * 2.0) * x


def comparisons_as_mask(x, y):
    return (x > y) * x + (x <= y) * y


def astype_int(x):
    k = (x * 3.0).astype(np.int64)
    return k * x + x.astype(int) * 2.0


# --- dtypes, 0-d, empty and non-contiguous arrays, mixed parameters -----------------------


def f32_elementwise(x):
    return np.tanh(x) * x + np.exp(-x)


def f32_reduce_and_matmul(a, b):
    return np.sum((a @ b) ** 2) / np.mean(np.exp(a))


def f32_loop_write(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * x[len(x) - 1 - i]
    return np.sum(y)


def zero_d_elementwise(x):
    return np.sin(x) * x + np.exp(x)


def zero_d_with_vector(x, y):
    return np.sum(x * y) + x * x


def empty_sum(x):
    return np.sum(x)


def empty_rows_sum_axis0(x):
    return np.sum(x * x, axis=0)


def empty_elementwise(x):
    return np.exp(x) * x


def empty_beside_nonempty(x, y, a):
    return np.sum(x) * a + np.sum(y**2) * a + np.dot(x, x)


def strided_elementwise(x):
    return np.sum(np.sin(x) * x)


def strided_loop(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * (i + 1.0)
    return s


def transposed_matmul(a, y):
    return a @ y


def mixed_scalar_array_int(a, x, n, b):
    s = 0.0
    for i in range(n):
        s += a * x[i] ** 2 - b
    return s + np.sum(x) * b


def mixed_array_and_int_array(x, k):
    return np.sum(x * k + x[k[0]])


# --- harder cases -------------------------------------------------------------------------


def prod_with_a_zero(x):
    # The VJP of prod may not divide by x: one entry is exactly zero.
    return np.prod(x) + np.sum(np.prod(x.reshape(2, 2), axis=0))


def normalise_rows(x):
    return x / np.sum(x, axis=1, keepdims=True) - np.mean(x, axis=0, keepdims=True)


def softmax_rows(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def where_and_maximum_broadcast(c, r):
    return np.where(c * r > 0.0, c * r, 0.1 * r) + np.maximum(c, r)


def stencil_slices(x):
    return np.sum((x[2:] - 2.0 * x[1:-1] + x[:-2]) ** 2) + x[::-1] * x


def reshape_with_minus_one(x):
    return np.sum(x.reshape(2, -1) ** 2, axis=1) + x.reshape(-1)[0]


def concatenate_and_stack_2d(a, b):
    return np.concatenate((a, b * b), axis=0) @ np.stack((a[0], b[1]), axis=1)


def slice_and_row_augmented_writes(a, x):
    b = a.copy()
    b[1, :] += x * b[0, :]
    b[0:2] *= 2.0
    b[:, 1] = np.sin(b[:, 2])
    return b


def scatter_add_with_int_index(x, k):
    y = np.zeros(3)
    for i in range(len(x)):
        y[k[i]] += x[i] * y[k[i]] + x[i]
    return y


def while_loop_writes(x):
    y = x.copy()
    i = 0
    while i < len(y) - 1:
        y[i + 1] = y[i + 1] + np.sin(y[i])
        i += 1
    return y


def break_in_array_loop(x):
    s = 0.0
    for v in x:
        if v > 0.9:
            break
        s += v * s + v
    return s


def early_return_in_write_loop(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] * x[i]
        if x[i] > 0.9:
            return np.sum(y)
    return np.sum(y) * 2.0


def build_matrix_then_det(x):
    n = len(x)
    a = np.zeros((n, n))
    for i in range(n):
        a[i, i] = 3.0
        for j in range(n):
            a[i, j] += x[i] * x[j]
    return np.linalg.det(a) + np.sum(np.linalg.solve(a, x))


def mixed_float32_and_float64(x32, y64):
    return np.sum(x32 * x32) + np.sum(y64 * x32[0]) * 2.0


def array_reassigned_in_loop(x):
    y = x
    for _ in range(3):
        y = np.tanh(y) * x + y
    return y


def overlapping_slice_writes_in_loop(x):
    y = x.copy()
    for _ in range(3):
        y[1:] = y[:-1] + x[1:] * y[1:]
    return y


def row_writes_in_nested_loops(a):
    b = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            b[i, j] = a[i, j] * a[j, i]
        b[i, :] = b[i, :] * b[i, i]
    return b


CATALOGUE = [
    # element-wise ufuncs
    Case("ufunc_sin", ufunc_sin, (uniform((2, 3), -2.0, 2.0),)),
    Case("ufunc_cos", ufunc_cos, (uniform((2, 3), -2.0, 2.0),)),
    Case("ufunc_tan", ufunc_tan, (uniform((4,), -1.0, 1.0),)),
    Case("ufunc_arcsin", ufunc_arcsin, (uniform((4,), -0.9, 0.9),)),
    Case("ufunc_arccos", ufunc_arccos, (uniform((2, 2), -0.9, 0.9),)),
    Case("ufunc_arctan", ufunc_arctan, (uniform((5,), -3.0, 3.0),)),
    Case("ufunc_sinh", ufunc_sinh, (uniform((4,), -2.0, 2.0),)),
    Case("ufunc_cosh", ufunc_cosh, (uniform((4,), -2.0, 2.0),)),
    Case("ufunc_tanh", ufunc_tanh, (uniform((2, 3), -2.0, 2.0),)),
    Case("ufunc_exp", ufunc_exp, (uniform((2, 3), -2.0, 2.0),)),
    Case("ufunc_expm1", ufunc_expm1, (uniform((4,), -1.0, 1.0),)),
    Case("ufunc_log", ufunc_log, (uniform((2, 3), 0.2, 3.0),)),
    Case("ufunc_log1p", ufunc_log1p, (uniform((4,), -0.5, 2.0),)),
    Case("ufunc_log2", ufunc_log2, (uniform((4,), 0.2, 3.0),)),
    Case("ufunc_log10", ufunc_log10, (uniform((4,), 0.2, 3.0),)),
    Case("ufunc_sqrt", ufunc_sqrt, (uniform((2, 3), 0.2, 3.0),)),
    Case("ufunc_square", ufunc_square, (uniform((4,), -2.0, 2.0),)),
    Case("ufunc_abs", ufunc_abs, (away_from_zero((2, 3)),)),
    Case("ufunc_negative", ufunc_negative, (uniform((4,)),)),
    Case("ufunc_chain_to_scalar", ufunc_chain_to_scalar, (uniform((2, 3)),)),
    # operators and broadcasting
    Case("operators_same_shape", operators_same_shape, (uniform((2, 3)), uniform((2, 3)))),
    Case("power_array_by_constants", power_array_by_constants, (uniform((4,), 0.3, 2.0),)),
    Case("power_array_by_array", power_array_by_array, (uniform((4,), 0.3, 2.0), uniform((4,)))),
    Case("scalar_with_array", scalar_with_array, (1.3, uniform((2, 3)))),
    Case(
        "broadcast_column_with_row", broadcast_column_with_row, (uniform((3, 1)), uniform((1, 4)))
    ),
    Case(
        "broadcast_vector_with_matrix",
        broadcast_vector_with_matrix,
        (uniform((4,)), uniform((3, 4))),
    ),
    Case(
        "broadcast_matrix_with_vector",
        broadcast_matrix_with_vector,
        (uniform((3, 4)), uniform((4,))),
    ),
    Case("broadcast_scalar_left", broadcast_scalar_left, (uniform((2, 3)),)),
    Case(
        "broadcast_into_higher_rank",
        broadcast_into_higher_rank,
        (uniform((2, 3, 1)), uniform((4,))),
    ),
    # where, maximum, minimum, clip
    Case("where_select", where_select, (away_from_zero((2, 3)), uniform((2, 3)))),
    Case("where_with_scalar_branch", where_with_scalar_branch, (away_from_zero((5,)),)),
    Case(
        "maximum_minimum", maximum_minimum, (distinct((6,), -2.0, 2.0), distinct((6,), -1.1, 0.9))
    ),
    Case("relu_by_maximum", relu_by_maximum, (away_from_zero((2, 3)),)),
    Case("clip_scalar_bounds", clip_scalar_bounds, (np.array([-0.9, -0.3, 0.1, 0.4, 0.8, -0.7]),)),
    # reductions
    Case("sum_all", sum_all, (uniform((3, 4)),)),
    Case("sum_axis0", sum_axis0, (uniform((3, 4)),)),
    Case("sum_axis1_keepdims", sum_axis1_keepdims, (uniform((3, 4)),)),
    Case("sum_axis_last", sum_axis_last, (uniform((2, 3, 4)),)),
    Case("sum_all_keepdims", sum_all_keepdims, (uniform((3, 4)),)),
    Case("sum_axis0_keepdims", sum_axis0_keepdims, (uniform((3, 4)),)),
    Case("mean_all", mean_all, (uniform((3, 4)),)),
    Case("mean_axis0", mean_axis0, (uniform((3, 4)),)),
    Case("mean_axis1_keepdims", mean_axis1_keepdims, (uniform((3, 4)),)),
    Case("mean_axis_last", mean_axis_last, (uniform((2, 3, 4)),)),
    Case("prod_all", prod_all, (uniform((2, 3), 0.5, 1.5),)),
    Case("prod_axis0", prod_axis0, (uniform((3, 4), 0.5, 1.5),)),
    Case("prod_axis1_keepdims", prod_axis1_keepdims, (away_from_zero((3, 4), 0.5, 1.5),)),
    Case("max_all", max_all, (distinct((3, 4)),)),
    Case("max_axis0", max_axis0, (distinct((3, 4)),)),
    Case("max_axis1_keepdims", max_axis1_keepdims, (distinct((3, 4)),)),
    Case("max_axis_last", max_axis_last, (distinct((2, 3, 4)),)),
    Case("min_all", min_all, (distinct((3, 4)),)),
    Case("min_axis0", min_axis0, (distinct((3, 4)),)),
    Case("min_axis1_keepdims", min_axis1_keepdims, (distinct((3, 4)),)),
    Case("min_axis_last_keepdims", min_axis_last_keepdims, (distinct((3, 4)),)),
    Case("reduction_methods", reduction_methods, (distinct((2, 3), 0.5, 1.5),)),
    Case("reduction_methods_with_axis", reduction_methods_with_axis, (distinct((3, 4)),)),
    Case("logsumexp_pattern", logsumexp_pattern, (distinct((3, 4)),)),
    # products
    Case("dot_vector_vector", dot_vector_vector, (uniform((5,)), uniform((5,)))),
    Case("dot_matrix_vector", dot_matrix_vector, (uniform((3, 4)), uniform((4,)))),
    Case("dot_vector_matrix", dot_vector_matrix, (uniform((3,)), uniform((3, 4)))),
    Case("dot_matrix_matrix", dot_matrix_matrix, (uniform((3, 4)), uniform((4, 2)))),
    Case("matmul_function", matmul_function, (uniform((3, 4)), uniform((4, 2)))),
    Case(
        "matmul_operator_all_ranks",
        matmul_operator_all_ranks,
        (uniform((3, 3)), uniform((3,)), uniform((3, 2))),
    ),
    Case("outer_product", outer_product, (uniform((3,)), uniform((4,)))),
    # shapes
    Case("reshape_function", reshape_function, (uniform((6,)), uniform((3,)))),
    Case("reshape_method", reshape_method, (uniform((6,)),)),
    Case(
        "transpose_function_and_attribute",
        transpose_function_and_attribute,
        (uniform((3, 4)), uniform((3, 2))),
    ),
    Case("concatenate_tuple", concatenate_tuple, (uniform((3,)), uniform((3,)))),
    Case("stack_tuple", stack_tuple, (uniform((4,)), uniform((4,)))),
    # linear algebra
    Case("vector_norm", vector_norm, (uniform((5,)),)),
    Case("solve_system", solve_system, (well_conditioned(3), uniform((3,)))),
    Case("solve_system_matrix_rhs", solve_system, (well_conditioned(3), uniform((3, 2)))),
    Case("inverse_matrix", inverse_matrix, (well_conditioned(3),)),
    Case("determinant", determinant, (well_conditioned(3),)),
    Case("linear_algebra_combined", linear_algebra_combined, (well_conditioned(3), uniform((3,)))),
    # element and slice reads
    Case("read_elements", read_elements, (uniform((5,), 0.5, 1.5),)),
    Case("read_elements_2d", read_elements_2d, (uniform((3, 3)),)),
    Case("read_slice", read_slice, (uniform((6,)), uniform((3,)))),
    Case("read_step_slice", read_step_slice, (uniform((6,)),)),
    Case("read_negative_index", read_negative_index, (uniform((5,)),)),
    Case("read_row_and_column", read_row_and_column, (uniform((3, 3)),)),
    Case("read_in_loop", read_in_loop, (uniform((6,)),)),
    Case("read_with_int_index_parameter", read_with_int_index_parameter, (uniform((5,)), 2)),
    # writes into local arrays
    Case("write_elements_in_loop", write_elements_in_loop, (uniform((5,)),)),
    Case("write_augmented_in_loop", write_augmented_in_loop, (uniform((7,)), 0.8)),
    Case("write_slice", write_slice, (uniform((6,)),)),
    Case("write_row_of_matrix", write_row_of_matrix, (uniform((3, 4)), uniform((3,)))),
    Case("overwrite_then_reuse", overwrite_then_reuse, (uniform((4,), 0.5, 1.5),)),
    Case("overwrite_in_loop_recurrence", overwrite_in_loop_recurrence, (uniform((5,), 0.5, 1.5),)),
    Case("overwrite_same_cell_in_loop", overwrite_same_cell_in_loop, (uniform((6,)),)),
    Case("write_then_read_other_cells", write_then_read_other_cells, (uniform((5,)),)),
    Case("write_augmented_operators", write_augmented_operators, (uniform((5,), 0.5, 1.5),)),
    # iteration
    Case("iterate_values", iterate_values, (uniform((5,)),)),
    Case("iterate_zip", iterate_zip, (uniform((5,)), uniform((5,)))),
    Case("iterate_enumerate", iterate_enumerate, (uniform((5,)),)),
    Case("iterate_rows", iterate_rows, (uniform((3, 4)),)),
    Case("len_and_shape", len_and_shape, (uniform((5,)), uniform((2, 3)))),
    # non-differentiable operations
    Case("argmax_selects", argmax_selects, (distinct((6,)),)),
    Case("sign_floor_round", sign_floor_round, (np.array([-0.9, -0.4, 0.1, 0.4, 0.55, 0.9]),)),
    Case("comparisons_as_mask", comparisons_as_mask, (distinct((6,)), distinct((6,), -1.9, 1.9))),
    Case("astype_int", astype_int, (np.array([-1.2, -0.4, 0.1, 0.5, 1.6, 2.9]),)),
    # dtypes, 0-d, empty, non-contiguous, mixed parameters
    Case(
        "f32_elementwise",
        f32_elementwise,
        (uniform((2, 3), dtype=np.float32),),
        rtol=1e-4,
        atol=1e-5,
    ),
    Case(
        "f32_reduce_and_matmul",
        f32_reduce_and_matmul,
        (uniform((3, 4), dtype=np.float32), uniform((4, 2), dtype=np.float32)),
        rtol=1e-4,
        atol=1e-5,
    ),
    Case(
        "f32_loop_write", f32_loop_write, (uniform((5,), dtype=np.float32),), rtol=1e-4, atol=1e-5
    ),
    Case(
        "f32_with_python_float",
        scalar_with_array,
        (1.3, uniform((2, 3), dtype=np.float32)),
        rtol=1e-4,
        atol=1e-5,
    ),
    Case("zero_d_elementwise", zero_d_elementwise, (np.array(0.7),)),
    Case("zero_d_with_vector", zero_d_with_vector, (np.array(-0.4), uniform((3,)))),
    Case("empty_sum", empty_sum, (np.zeros((0,)),)),
    Case("empty_rows_sum_axis0", empty_rows_sum_axis0, (np.zeros((0, 3)),)),
    Case("empty_elementwise", empty_elementwise, (np.zeros((0, 3)),)),
    Case("empty_beside_nonempty", empty_beside_nonempty, (np.zeros((0,)), uniform((3,)), 0.7)),
    Case("empty_loop_over_array", iterate_values, (np.zeros((0,)),)),
    Case("strided_elementwise", strided_elementwise, (strided((4,)),)),
    Case("strided_loop", strided_loop, (strided((5,)),)),
    Case("strided_rows_reduction", sum_axis1_keepdims, (strided((3, 4)),)),
    Case("transposed_matmul", transposed_matmul, (transposed((3, 4)), uniform((4,)))),
    Case("transposed_reduction", max_axis0, (distinct((4, 3)).T,)),
    Case("mixed_scalar_array_int", mixed_scalar_array_int, (0.6, uniform((5,)), 4, -0.3)),
    Case(
        "mixed_array_and_int_array",
        mixed_array_and_int_array,
        (uniform((4,)), np.array([2, 0, 1, 3])),
    ),
    # harder cases
    Case("prod_with_a_zero", prod_with_a_zero, (np.array([0.5, 0.0, 1.3, -0.7]),)),
    Case("normalise_rows", normalise_rows, (uniform((3, 4), 0.5, 1.5),)),
    Case("softmax_rows", softmax_rows, (distinct((3, 4)),)),
    Case(
        "where_and_maximum_broadcast",
        where_and_maximum_broadcast,
        (np.array([[0.9], [-0.6], [0.3]]), np.array([[0.5, -1.2, 0.75, -0.2]])),
    ),
    Case("stencil_slices", stencil_slices, (uniform((6,)),)),
    Case("reshape_with_minus_one", reshape_with_minus_one, (uniform((6,)),)),
    Case("concatenate_and_stack_2d", concatenate_and_stack_2d, (uniform((2, 3)), uniform((2, 3)))),
    Case(
        "slice_and_row_augmented_writes",
        slice_and_row_augmented_writes,
        (uniform((3, 4)), uniform((4,))),
    ),
    Case(
        "scatter_add_with_int_index",
        scatter_add_with_int_index,
        (uniform((6,)), np.array([0, 2, 0, 1, 2, 0])),
    ),
    Case("while_loop_writes", while_loop_writes, (uniform((5,)),)),
    Case("break_in_array_loop", break_in_array_loop, (np.array([0.3, -0.5, 0.7, 1.2, 0.4]),)),
    Case(
        "early_return_in_write_loop",
        early_return_in_write_loop,
        (np.array([0.3, -0.5, 1.4, 0.2]),),
    ),
    Case(
        "early_return_in_write_loop_fallthrough",
        early_return_in_write_loop,
        (np.array([0.3, -0.5, 0.4, 0.2]),),
    ),
    Case("build_matrix_then_det", build_matrix_then_det, (uniform((3,)),)),
    Case(
        "mixed_float32_and_float64",
        mixed_float32_and_float64,
        (uniform((3,), dtype=np.float32), uniform((3,))),
        rtol=1e-4,
        atol=1e-5,
    ),
    Case("array_reassigned_in_loop", array_reassigned_in_loop, (uniform((2, 3)),)),
    Case("overlapping_slice_writes_in_loop", overlapping_slice_writes_in_loop, (uniform((5,)),)),
    Case("row_writes_in_nested_loops", row_writes_in_nested_loops, (uniform((3, 3)),)),
]
