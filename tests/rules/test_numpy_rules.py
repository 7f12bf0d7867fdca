"""More NumPy and math rules: einsum, cumsum, sort, take, float64/float, np.array of
tuples, math.fsum, np.linalg.norm with ``ord``, vstack/hstack/column_stack and
atleast_1d/2d/3d.

Every gradient is checked by ``s2s_ad.testing.check_grads`` against central finite
differences of the original function and the dot-product identity, on the Python
path and compiled by Numba (the two must agree). Parameters are named like the
rule templates' own names (``a``, ``b``, ``c``, ``g``, ``z``, ``x``, ``seq``,
``indices``) so that a substitution mixing them up would show. Sorts and
inf-norms are checked at points without ties; the conventions at ties and at 0
are checked separately, against their stated definitions.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from numba_sample import numba_marks

import s2s_ad as ad
from s2s_ad import runtime as rt
from s2s_ad.testing import check_grads

RNG = np.random.default_rng(20240611)


def normal(*shape):
    return RNG.normal(size=shape)


def distinct(*shape):
    """Shuffled, evenly spaced values, shifted so that no two have the same |value|
    and none is 0: no ties for sort, max or min, of the values or of their abs."""
    values = np.linspace(-2.0, 2.0, int(np.prod(shape))) + 0.037
    RNG.shuffle(values)
    return values.reshape(shape)


def grads_on_both_paths(f, *args, wrt=None):
    """``ad.gradient`` of ``f`` in Python and compiled by Numba."""
    return [ad.gradient(ad.differentiable(f, wrt=wrt, jit=jit))(*args) for jit in (False, True)]


# ---- einsum ----------------------------------------------------------------------------
def einsum_matvec(weights, b):
    y = np.einsum("ij,j->i", weights, b)
    return np.sum(np.sin(y))


def einsum_matmul(a, b):
    z = np.einsum("ij,jk->ik", a, b)
    return z * z


def einsum_dot(g, z):
    return np.einsum("i,i->", g, z) ** 2


def einsum_transpose(a):
    return np.einsum("ij->ji", a) * np.arange(12.0).reshape(4, 3)


def einsum_diagonal(g):
    return np.einsum("ii->i", g) ** 3


def einsum_trace_implicit(a):
    return np.einsum("ii", a) * np.einsum("ij->", a)


def einsum_matmul_implicit(z, g):
    return np.exp(np.einsum("ij,jk", z, g))


def einsum_spaced_and_summed(a, b):
    return np.einsum(" ij , kj -> i ", a, b)


def einsum_three(a, b, c):
    return np.einsum("i,ij,jk->k", a, b, c)


def einsum_four(a, b, c, z):
    return np.einsum("i,ij,jk,kl->il", a, b, c, z)


def einsum_batched(a, b):
    return np.einsum("bij,bjk->bik", a, b)


def einsum_scalar_operand(z, g):
    return np.einsum(",i->i", z, g) * g


def einsum_same_operand(a):
    return np.einsum("ij,ij->", a, a)


def einsum_outer(a, b):
    return np.einsum("i,j->ij", a, b) ** 2


def einsum_of_views(a, b):
    return np.einsum("ij,jk->ik", a.T, b[::2]) ** 2


def einsum_implicit_upper_case(a, b):
    return np.einsum("bA,Ac", a, b) * np.arange(6.0).reshape(3, 2)


def einsum_from_loop(weights, b):
    total = 0.0
    for k in range(3):
        total = total + np.sum(np.einsum("ij,j->i", weights, b * k))
    return total


EINSUM_CASES = [
    (einsum_matvec, (normal(3, 4), normal(4))),
    (einsum_matmul, (normal(3, 4), normal(4, 2))),
    (einsum_dot, (normal(5), normal(5))),
    (einsum_transpose, (normal(3, 4),)),
    (einsum_diagonal, (normal(3, 3),)),
    (einsum_trace_implicit, (normal(3, 3),)),
    (einsum_matmul_implicit, (normal(2, 3) * 0.5, normal(3, 4) * 0.5)),
    (einsum_spaced_and_summed, (normal(3, 4), normal(2, 4))),
    (einsum_three, (normal(2), normal(2, 3), normal(3, 4))),
    (einsum_four, (normal(2), normal(2, 3), normal(3, 4), normal(4, 2))),
    (einsum_batched, (normal(2, 3, 4), normal(2, 4, 2))),
    (einsum_scalar_operand, (0.7, normal(4))),
    (einsum_same_operand, (normal(3, 2),)),
    (einsum_outer, (normal(3), normal(2))),
    (einsum_of_views, (normal(4, 3), normal(8, 2))),
    (einsum_implicit_upper_case, (normal(3, 4), normal(4, 2))),
    (einsum_from_loop, (normal(3, 4), normal(4))),
]


@pytest.mark.parametrize(("f", "args"), EINSUM_CASES, ids=[f.__name__ for f, _ in EINSUM_CASES])
def test_einsum(f, args):
    check_grads(f, *args, paths=("python",))


@pytest.mark.parametrize(("f", "args"), [pytest.param(f, args, id=f.__name__,
                                                      marks=numba_marks(f.__name__))
                                         for f, args in EINSUM_CASES])
def test_einsum_compiled(f, args):
    check_grads(f, *args)  # both paths: Numba's against finite differences and Python's


def test_einsum_matches_numpy_in_both_paths():
    a, b = normal(3, 4), normal(4, 2)
    for jit in (False, True):
        value = ad.differentiable(einsum_matmul, jit=jit)(a, b)
        np.testing.assert_allclose(value, np.einsum("ij,jk->ik", a, b) ** 2, rtol=1e-13)


def test_einsum_source_reads_as_einsums():
    text = ad.source(einsum_matmul, normal(3, 4), normal(4, 2))
    assert "z = rt.einsum('ij,jk->ik', a, b)" in text
    # the VJPs are einsums of the cotangent of z with the other operand
    assert "rt.accumulate(d_a, rt.einsum('ik,jk->ij', d_z, b))" in text
    assert "rt.accumulate(d_b, rt.einsum('ik,ij->jk', d_z, a))" in text
    line = inspect.getsourcelines(einsum_matmul)[1] + 1
    assert f'# adjoint of line {line}: z = np.einsum("ij,jk->ik", a, b)' in text
    diagonal = ad.source(einsum_diagonal, normal(3, 3))
    # "ii->i": the cotangent goes on the diagonal of a zero matrix shaped like g
    assert "rt.einsum_like('i->ii', g, d_" in diagonal
    assert ad.explain(ad.differentiable(einsum_matmul), normal(3, 4), normal(4, 2)).path == "numba"


def einsum_matvec_sum(weights, b):
    return np.sum(np.einsum("ij,j->i", weights, b))


def test_einsum_gradient_keeps_float32():
    weights, b = normal(3, 4).astype(np.float32), normal(4)
    exact = grads_on_both_paths(einsum_matvec_sum, weights.astype(np.float64), b)
    for got, want in zip(grads_on_both_paths(einsum_matvec_sum, weights, b), exact,
                         strict=True):
        assert got[0].dtype == np.float32 and got[1].dtype == np.float64
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def einsum_variable_subscripts(a, b, spec):
    return np.einsum(spec, a, b)


def einsum_ellipsis(a, b):
    return np.einsum("...ijk,...jk->...ik", a, b)


def einsum_wrong_rank(a, b):
    return np.einsum("ij,j->i", a, b)


@pytest.mark.parametrize(("f", "args", "message"), [
    (einsum_variable_subscripts, (normal(2, 2), normal(2), "ij,j->i"),
     "np.einsum: the subscripts must be a string literal"),
    (einsum_ellipsis, (normal(2, 2), normal(2, 2)), "more labels than dimensions"),
    (einsum_wrong_rank, (normal(2, 2), normal(2, 2)), "subscript 'j' for a 2-D operand"),
])
def test_einsum_refusals_name_the_call(f, args, message):
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(ad.differentiable(f, wrt=("a",)))(*args)
    text = str(info.value)
    assert message in text
    assert re.search(r"test_numpy_rules\.py:\d+:\d+: error", text), text


def test_einsum_runtime_refuses_broadcasting_in_both_paths():
    a, b = np.ones((1, 3)), np.ones((2, 3))
    with pytest.raises(ValueError, match="label 'i' has sizes"):
        rt.einsum("ij,ij->ij", a, b)
    f = ad.differentiable(lambda a, b: np.einsum("ij,ij->ij", a, b), jit=True)
    with pytest.raises(ValueError, match="different sizes"):
        f(a, b)


def test_einsum_like_doctest_forms_in_numba():
    import numba

    @numba.njit
    def both(g, like):
        return rt.einsum_like("i->ii", like, g), rt.einsum_like("ij->ijk", np.zeros((2, 3, 2)),
                                                                like[:2])
    g, like = normal(3), np.zeros((3, 3))
    diag, spread = both(g, like)
    np.testing.assert_array_equal(diag, np.diag(g))
    np.testing.assert_array_equal(spread, rt.einsum_like("ij->ijk", np.zeros((2, 3, 2)),
                                                         like[:2]))


# ---- cumsum -------------------------------------------------------------------------------
def cumsum_flat(a):
    return np.cumsum(a) * np.arange(12.0)


def cumsum_rows(g):
    return np.cumsum(g, axis=1) ** 2


def cumsum_first_axis(z):
    return np.sin(np.cumsum(z, 0))


def cumsum_last_of_3d(a):
    return np.cumsum(a, axis=-1) ** 2


def cumsum_middle_of_3d(x):
    return np.cumsum(x, axis=1) * x


def cumsum_method(a):
    return a.cumsum() ** 2


@pytest.mark.parametrize(("f", "args"), [
    (cumsum_flat, (normal(3, 4),)), (cumsum_rows, (normal(3, 4),)),
    (cumsum_first_axis, (normal(3, 4),)), (cumsum_last_of_3d, (normal(2, 3, 4),)),
    (cumsum_middle_of_3d, (normal(2, 3, 4),)), (cumsum_method, (normal(5),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_cumsum(f, args):
    check_grads(f, *args)


# ---- sort ---------------------------------------------------------------------------------
def sort_vector(a):
    return np.sort(a) * np.arange(6.0)


def sort_last_axis(g):
    return np.sort(g) ** 3


def sort_first_axis(z):
    return np.sort(z, axis=0) * np.arange(4.0)


def sort_flattened(a):
    return np.sort(a, axis=None) * np.arange(12.0)


def sort_middle_of_3d(x):
    return np.sort(x, axis=1) ** 3


@pytest.mark.parametrize(("f", "args"), [
    (sort_vector, (distinct(6),)), (sort_last_axis, (distinct(3, 4),)),
    (sort_first_axis, (distinct(3, 4),)), (sort_flattened, (distinct(3, 4),)),
    (sort_middle_of_3d, (distinct(2, 3, 4),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_sort(f, args):
    check_grads(f, *args)


def sort_weighted(a):
    return np.sum(np.sort(a) * np.array((1.0, 2.0, 3.0)))


def test_sort_at_a_tie_is_the_same_on_both_paths():
    # d/da of sum(sort(a) * w) sends w[k] to the entry of rank k; with a stable
    # ranking the first of two equal entries takes the lower rank.
    python, numba = grads_on_both_paths(sort_weighted, np.array([2.0, 1.0, 2.0]))
    np.testing.assert_array_equal(python, [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(numba, python)


# ---- take ---------------------------------------------------------------------------------
def take_flat(a, indices):
    return np.take(a, indices) * np.arange(6.0)


def take_rows(g, idx):
    return np.take(g, idx, axis=0) ** 2


def take_columns(a, idx):
    return np.take(a, idx, axis=1) ** 2


def take_one(z):
    return np.take(z, 5) ** 2 + np.take(z, -1, axis=1) * z[0, 0]


def take_grid(a):
    return np.take(a, np.array(((1, 1), (0, -1))), axis=-1) ** 2


def take_tuple(seq):
    return np.take(seq, (2, 2, 0)) ** 2


def take_method(a, idx):
    return a.take(idx, axis=1) ** 2


REPEATS = np.array([0, 5, 5, 11, -1, 5])


@pytest.mark.parametrize(("f", "args"), [
    (take_flat, (normal(3, 4), REPEATS)),
    (take_rows, (normal(3, 4), np.array([2, 0, 2, 2]))),
    (take_columns, (normal(2, 4, 3), np.array([[3, 1], [3, -4]]))),
    (take_one, (normal(3, 4),)), (take_grid, (normal(2, 3),)), (take_tuple, (normal(4),)),
    (take_method, (normal(3, 4), np.array([1, 1, 3]))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_take(f, args):
    check_grads(f, *args)


def take_sum(a, idx):
    return np.sum(np.take(a, idx, axis=1))


def test_take_repeated_indices_add_up_on_both_paths():
    # d/da[i, j] of sum(take(a, idx, axis=1)) = number of times j occurs in idx
    idx = np.array([1, 1, 1, 0, -1])
    for grad in grads_on_both_paths(take_sum, normal(2, 3), idx, wrt=("a",)):
        np.testing.assert_array_equal(grad, [[1.0, 3.0, 1.0], [1.0, 3.0, 1.0]])


def test_take_out_of_bounds_raises_on_both_paths():
    for jit in (False, True):
        f = ad.differentiable(take_sum, wrt=("a",), jit=jit)
        with pytest.raises(IndexError):
            f(normal(2, 3), np.array([0, 3]))


# ---- conversions: np.float64, float, np.array of tuples ------------------------------------
def as_float64(z):
    return np.float64(z) ** 2 + float(z * 2.0) ** 3


def array_as_float64(a):
    return np.float64(a) ** 2


def array_of_tuple(a, b, c):
    t = (a, b * c, 2.0)
    return np.array(t) ** 2


def array_of_tuple_literal(g, z):
    return np.exp(np.array((g, 1, z * g)))


def array_of_nested_tuple(a, b):
    return np.array(((a, b), (b * a, 1.0), (2.0, a))) ** 2


def array_of_arrays(a, b):
    return np.array((a, b * 2.0, a * b)) ** 2


def array_copy(seq):
    return np.array(seq) ** 2


@pytest.mark.parametrize(("f", "args"), [
    (as_float64, (0.7,)), (array_as_float64, (normal(2, 3),)),
    (array_of_tuple, (0.3, -0.5, 0.7)), (array_of_tuple_literal, (0.3, -0.5)),
    (array_of_nested_tuple, (0.3, -0.5)), (array_of_arrays, (normal(2, 3), normal(2, 3))),
    (array_copy, (normal(4),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_conversions(f, args):
    check_grads(f, *args)


def array_of_a_number(a):
    return np.array(a) * a


def array_of_an_array_and_a_number(a, b):
    return np.array((a, b))


def test_np_array_of_a_number_is_the_number():
    check_grads(array_of_a_number, 1.5)


def test_np_array_of_mixed_items_is_refused_with_its_location():
    with pytest.raises(ad.NonDifferentiableError, match=r"test_numpy_rules\.py:\d+:\d+: error: "
                       "np.array: only a tuple"):
        ad.gradient(array_of_an_array_and_a_number)(normal(2), 1.0)


# ---- math.fsum ------------------------------------------------------------------------------
def fsum_tuple(a, b):
    t = (a, b * a, 1.0, 2)
    return math.fsum(t) ** 2


def fsum_literal(g, z):
    return math.fsum((g, z, g * z))


def fsum_array(seq):
    return math.fsum(seq * seq)


@pytest.mark.parametrize(("f", "args"), [
    (fsum_tuple, (0.3, -0.4)), (fsum_literal, (0.3, -0.4)), (fsum_array, (normal(7),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_fsum(f, args):
    check_grads(f, *args)


def fsum_tiny(seq):
    return math.fsum(seq)


def test_fsum_is_exact_on_both_paths():
    seq = np.array([1e16, 1.0, -1e16, 1e-16] * 3)
    for jit in (False, True):
        assert ad.differentiable(fsum_tiny, jit=jit)(seq) == math.fsum(seq)


# ---- np.linalg.norm with ord ----------------------------------------------------------------
def norm_one(x):
    return np.linalg.norm(x, 1)


def norm_inf(x):
    return np.linalg.norm(x, ord=np.inf)


def norm_minus_inf(x):
    return np.linalg.norm(x, ord=-np.inf)


def norm_two(x):
    return np.linalg.norm(x, ord=2)


def norm_three(x):
    return np.linalg.norm(x, 3)


def norm_half(x):
    return np.linalg.norm(x, 0.5)


def norm_fro(a):
    return np.linalg.norm(a, "fro") + np.linalg.norm(a, None)


def norm_one_rows(a):
    return np.linalg.norm(a, 1, axis=1)


def norm_inf_columns_keepdims(a):
    return np.linalg.norm(a, np.inf, axis=0, keepdims=True) * a


def norm_minus_inf_3d(z):
    return np.linalg.norm(z, -np.inf, axis=1)


def norm_p_rows(g):
    return np.linalg.norm(g, 1.5, axis=-1)


def norm_p_keepdims(a):
    return a / np.linalg.norm(a, 4, axis=0, keepdims=True)


def norm_two_axis(a):
    return np.linalg.norm(a, 2, axis=0)


@pytest.mark.parametrize(("f", "args"), [
    (norm_one, (normal(6),)), (norm_inf, (distinct(6),)), (norm_minus_inf, (distinct(6),)),
    (norm_two, (normal(6),)), (norm_three, (normal(6),)), (norm_half, (normal(6),)),
    (norm_fro, (normal(3, 4),)), (norm_one_rows, (normal(3, 4),)),
    (norm_inf_columns_keepdims, (distinct(3, 4),)), (norm_minus_inf_3d, (distinct(2, 3, 4),)),
    (norm_p_rows, (normal(3, 4),)), (norm_p_keepdims, (normal(3, 4),)),
    (norm_two_axis, (normal(3, 4),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_norm_ord(f, args):
    check_grads(f, *args)


def test_norm_subgradients_at_kinks_are_the_stated_ones():
    # ord=1: sign(x), 0 where x == 0
    for grad in grads_on_both_paths(norm_one, np.array([2.0, 0.0, -1.0])):
        np.testing.assert_array_equal(grad, [1.0, 0.0, -1.0])
    # ord=inf: the entries of largest |x| share the cotangent equally, times their sign
    for grad in grads_on_both_paths(norm_inf, np.array([3.0, -3.0, 1.0])):
        np.testing.assert_array_equal(grad, [0.5, -0.5, 0.0])
    # ord=p at x == 0 and at the norm's zero: 0
    for grad in grads_on_both_paths(norm_three, np.array([2.0, 0.0, -1.0])):
        assert grad[1] == 0.0
    for grad in grads_on_both_paths(norm_three, np.zeros(3)):
        np.testing.assert_array_equal(grad, np.zeros(3))


def norm_nuclear(a):
    return np.linalg.norm(a, "nuc")


def norm_matrix_three(a):
    return np.linalg.norm(a, 3)


def norm_zero(a):
    return np.linalg.norm(a, 0)


def norm_negative(a):
    return np.linalg.norm(a, -1)


def norm_variable_order(a, p):
    return np.linalg.norm(a, p)


@pytest.mark.parametrize(("f", "args", "message"), [
    (norm_nuclear, (normal(3),), "ord='nuc' is not a vector norm"),
    (norm_matrix_three, (normal(3, 3),), "the matrix norm ord=3 is not supported"),
    (norm_zero, (normal(3),), "ord=0 is not supported"),
    (norm_negative, (normal(3),), "ord=-1 is not supported"),
    (norm_variable_order, (normal(3), 3.0), "ord, axis and keepdims must be constants"),
])
def test_norm_refusals_name_the_call(f, args, message):
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(ad.differentiable(f, wrt=("a",)))(*args)
    text = str(info.value)
    assert f"np.linalg.norm: {message}" in text
    assert re.search(r"test_numpy_rules\.py:\d+:\d+: error", text), text


# ---- vstack, hstack, column_stack, atleast_1d/2d/3d -----------------------------------------
def vstack_two_vectors(a, b):
    return np.vstack((a, b * 2.0)) ** 2


def vstack_vector_on_matrix(a, rows):
    return np.sin(np.vstack([a, rows]))


def vstack_matrix_then_vector(rows, x):
    return np.vstack((rows, x)) * np.arange(3.0)


def vstack_three(a, b, c):
    return np.vstack((a * b, c, b)) ** 2


def vstack_numbers(x, z):
    return np.vstack((z, x, z * x[0])) ** 2


def hstack_vectors(x, b):
    return np.hstack((x, b, x * b[0])) ** 2


def hstack_matrices(a, b):
    return np.exp(np.hstack([a, b.T]))


def hstack_number_and_vector(x, z):
    return np.hstack((z, x, z * z)) ** 2


def column_stack_vectors(x, b):
    return np.column_stack((x, b * x)) ** 2


def column_stack_vector_and_matrix(a, rows):
    return np.column_stack([a, rows]) @ np.array((1.0, -2.0, 3.0))


def column_stack_numbers(x, z):
    return np.column_stack((x * z, z)) ** 2


def atleast_1d_number(x):
    return np.atleast_1d(np.sin(x) * x) ** 2


def atleast_2d_number(x):
    return np.atleast_2d(x * x) * np.arange(6.0).reshape(2, 3)


def atleast_3d_number(a):
    return np.atleast_3d(np.sum(a ** 2)) ** 2


def atleast_1d_arrays(a, rows):
    return np.sum(np.atleast_1d(a) * a) + np.sum(np.atleast_1d(rows) ** 2)


def atleast_2d_vector(a):
    return np.atleast_2d(a).T @ np.atleast_2d(a * 2.0)


def atleast_2d_matrix(rows):
    return np.atleast_2d(rows) ** 2


def atleast_3d_vector(a):
    return np.sum(np.atleast_3d(a) ** 2, axis=2)


def atleast_3d_matrix(rows):
    return np.cumsum(np.atleast_3d(rows), axis=1) ** 2


def stack_in_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.vstack((x * i, x)) ** 2)
    return total


def stack_names_like_templates(seq, axis, g):
    x = np.vstack((seq, axis))
    z = np.hstack((g, seq))
    a = np.column_stack((seq, g))
    return np.sum(x ** 2) + np.sum(z * z) + np.sum(np.atleast_2d(a) * np.atleast_1d(axis[0]))


def stack_of_a_0d_array(a, z):
    # a 0-d array computes like a number; Numba's np.full and atleast_* differ on it
    return np.vstack((z, a)) ** 2 + np.sum(np.hstack((z, a)) ** 2) + \
        np.sum(np.atleast_2d(z) * a)


STACK_CASES = [
    (vstack_two_vectors, (normal(3), normal(3))),
    (vstack_vector_on_matrix, (normal(3), normal(2, 3))),
    (vstack_matrix_then_vector, (normal(2, 3), normal(3))),
    (vstack_three, (normal(3), normal(3), normal(2, 3))),
    (vstack_numbers, (normal(1), 0.7)),
    (hstack_vectors, (normal(3), normal(2))),
    (hstack_matrices, (normal(2, 3), normal(1, 2))),
    (hstack_number_and_vector, (normal(3), 0.7)),
    (column_stack_vectors, (normal(4), normal(4))),
    (column_stack_vector_and_matrix, (normal(4), normal(4, 2))),
    (column_stack_numbers, (0.3, -0.6)),
    (atleast_1d_number, (0.7,)),
    (atleast_2d_number, (0.7,)),
    (atleast_3d_number, (normal(3),)),
    (atleast_1d_arrays, (normal(3), normal(2, 3))),
    (atleast_2d_vector, (normal(3),)),
    (atleast_2d_matrix, (normal(2, 3),)),
    (atleast_3d_vector, (normal(3),)),
    (atleast_3d_matrix, (normal(2, 3),)),
    (stack_in_loop, (normal(3),)),
    (stack_names_like_templates, (normal(2), normal(2), normal(2))),
    (stack_of_a_0d_array, (normal(1), np.array(0.5))),
]


@pytest.mark.parametrize(("f", "args"), STACK_CASES, ids=[f.__name__ for f, _ in STACK_CASES])
def test_stacks(f, args):
    check_grads(f, *args)


def test_stacks_match_numpy_in_both_paths():
    for f, args in STACK_CASES:
        want = f(*args)
        for jit in (False, True):
            got = ad.differentiable(f, jit=jit)(*args)
            assert np.shape(got) == np.shape(want), f.__name__
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f.__name__)


def test_stack_source_joins_promoted_operands():
    text = ad.source(vstack_vector_on_matrix, normal(3), normal(2, 3))
    # Numba's vstack needs operands of one rank: a 1-D operand is made a row first
    assert "np.concatenate((np.atleast_2d(tup[0]), tup[1]), axis=0)" in text
    # its cotangent is row 0 of the result's; the matrix's, the rows after it
    assert "rt.index_axis(d_vstack_tup, 0, 0)" in text
    assert "rt.slice_axis(d_vstack_tup, 0, 1, 1 + tup[1].shape[0])" in text
    assert "np.vstack(tup)" in ad.source(vstack_two_vectors, normal(3), normal(3))
    number = ad.source(atleast_1d_number, 0.7)
    assert "rt.filled((1,), " in number and "np.sum(d_atleast_1d_" in number


def stack_int_and_bool(x, k):
    counts = np.vstack((k, k + 1))
    mask = np.column_stack((x > 0.0, x < 0.5))
    wide = np.hstack((k, x))
    return np.sum(counts * x) + np.sum(np.where(mask.T, np.vstack((x, x)), 0.0)) + np.sum(wide ** 2)


def test_stacks_of_int_and_bool_arrays_keep_their_dtype():
    x, k = normal(3), np.arange(3)
    check_grads(stack_int_and_bool, x, k)
    for jit in (False, True):
        f = ad.differentiable(stack_int_and_bool, wrt=("x",), jit=jit)
        assert f(x, k) == pytest.approx(stack_int_and_bool(x, k), rel=1e-13)
    text = ad.source(stack_int_and_bool, x, k)
    assert "mask = np.column_stack(" in text and "wide = np.hstack(" in text


def hstack_vector_and_matrix(a, b):
    return np.hstack((a, b))


def atleast_1d_of_two(a, b):
    return np.atleast_1d(a, b)


def column_stack_of_a_vector(a, b):
    return np.column_stack(a * b)


@pytest.mark.parametrize(("f", "args", "message"), [
    (hstack_vector_and_matrix, (normal(3), normal(2, 3)),
     "np.hstack: operands of 1 and 2 dimensions (after promotion) cannot be joined"),
    (atleast_1d_of_two, (normal(3), normal(2)),
     "'atleast_1d' has no derivative rule for 2 arguments (only for 1)"),
    (column_stack_of_a_vector, (normal(3), normal(3)),
     "np.column_stack of a 1-d array (its items are numbers) is not supported"),
])
def test_stack_refusals_name_the_call(f, args, message):
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(ad.differentiable(f, wrt=("a",)))(*args)
    text = str(info.value)
    assert message in text
    assert re.search(r"test_numpy_rules\.py:\d+:\d+: error", text), text


def atleast_2d_then_write(a):
    b = a * 2.0
    y = np.atleast_2d(b)  # NumPy: b itself
    y[0, 0] = 5.0
    return np.sum(b * y)


def test_writing_into_what_atleast_may_return_is_refused():
    with pytest.raises(ad.NonDifferentiableError, match="writing into 'y' while 'b' views or "
                       "aliases it is not supported: 'b' is read after the write"):
        ad.gradient(atleast_2d_then_write)(normal(2, 2))


# ---- all of them compiled together -----------------------------------------------------------
def everything(weights, b, idx):
    h = np.einsum("ij,j->i", weights, b)
    s = np.sort(np.cumsum(h))
    t = np.take(s, idx)
    pair = np.array((np.float64(t[0]), math.fsum((t[1], b[0]))))
    rows = np.vstack((b, weights))
    wide = np.hstack((t[2], s, pair))
    cols = np.column_stack((pair, np.atleast_2d(pair).T))
    stacked = np.sum(rows ** 2) * 0.1 + np.sum(wide * np.atleast_1d(b[1])) + \
        np.sum(np.atleast_3d(cols) ** 2)
    return np.linalg.norm(pair, 3) + np.linalg.norm(weights, np.inf, axis=1)[0] + stacked


def test_everything_compiles_with_numba():
    args = (distinct(3, 4), normal(4), np.array([2, 0, 1]))
    how = ad.explain(ad.differentiable(everything), *args)
    assert how.path == "numba", str(how)
    check_grads(everything, *args)


def einsum_view_then_write(a):
    y = a * 2.0
    d = np.einsum("ii->i", y)  # NumPy: a view of y's diagonal
    y[0, 0] = 5.0
    return np.sum(d * y)


def test_writing_into_an_array_an_einsum_may_view_is_refused():
    with pytest.raises(ad.NonDifferentiableError, match="'y' while 'd' views or aliases it"):
        ad.gradient(einsum_view_then_write)(normal(2, 2))
