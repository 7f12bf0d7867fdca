"""np.linalg's decompositions, matrix norms and stacks of matrices (issue 23).

Every function is checked by ``check_grads`` (central finite differences, the
dot-product identity) over shapes (tall, wide, square; 2-D, 3-D and 4-D stacks where
NumPy takes them) and its options on the Python path; the Numba path compiles three
functions that call all of them (``check_grads`` also requires Numba = Python).
Losses that read singular vectors or eigenvectors are sign-invariant (squares, or a
vector times its partner), as every meaningful loss of them is.  The conventions of
``s2s_ad.runtime.decompositions`` (repeated and zero singular values, degenerate
eigenvalues, sign choices, the triangle NumPy reads) are checked at their points.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.linalg

import s2s_ad as ad
from s2s_ad import runtime as rt
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import check_grads

RNG = np.random.default_rng(2311)
PY = ("python",)
SHAPES = [(4, 3), (3, 4), (3, 3)]


def normal(*shape):
    return RNG.normal(size=shape)


def well_conditioned(*shape):
    """Diagonally dominant matrices (stacks too): invertible, positive determinant."""
    n = shape[-1]
    return RNG.uniform(-0.5, 0.5, shape) + n * np.eye(n)


def positive_definite(*shape):
    mats = RNG.uniform(-0.5, 0.5, shape)
    return mats @ np.swapaxes(mats, -1, -2) + shape[-1] * np.eye(shape[-1])


def with_singular_values(values, rows, cols):
    """A ``rows x cols`` matrix with these singular values (random singular vectors)."""
    left, _ = np.linalg.qr(normal(rows, rows))
    right, _ = np.linalg.qr(normal(cols, cols))
    middle = np.zeros((rows, cols))
    middle[np.arange(len(values)), np.arange(len(values))] = values
    return left @ middle @ right


# ---- svd ----------------------------------------------------------------------------------
def reduced_svd_loss(image):
    left, spectrum, right_t = np.linalg.svd(image, full_matrices=False)
    weights = np.arange(1.0, left.shape[1] + 1.0)
    pairs = np.sum(left[:, 0] * (np.cos(image) @ right_t[0]))
    return np.sum(left ** 2 @ weights) + np.sum(spectrum * weights) + pairs \
        + np.sum(right_t ** 3 * right_t)


def singular_values_loss(image):
    return np.sum(np.sin(np.linalg.svd(image, compute_uv=False)))


def full_square_svd_loss(image):
    left, spectrum, right_t = np.linalg.svd(image)
    return np.sum(left ** 2 * image) + np.prod(spectrum) + np.sum(right_t[1] ** 2)


def spectrum_of_full_svd(image):
    return np.sum(np.linalg.svd(image)[1] ** 3)


def squared_frobenius_by_svd(image):
    return np.sum(np.linalg.svd(image, full_matrices=False)[1] ** 2)


def nuclear_by_svd(image):
    return np.sum(np.linalg.svd(image, compute_uv=False))


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_reduced_and_values_only(shape):
    image = normal(*shape)
    check_grads(reduced_svd_loss, image, paths=PY)
    check_grads(singular_values_loss, image, paths=PY)
    check_grads(spectrum_of_full_svd, image, paths=PY)


def test_svd_full_matrices_of_a_square_matrix():
    check_grads(full_square_svd_loss, normal(3, 3), paths=PY)


def test_float32_inputs_keep_their_dtype():
    """Gradients of float32 matrices are float32, and agree with float64's to float32
    precision."""
    for fn, matrix in ((singular_values_loss, normal(4, 3)), (reduced_svd_loss, normal(3, 4)),
                       (eigh_upper_loss, normal(4, 4)), (cholesky_loss, positive_definite(3, 3)),
                       (slogdet_loss, well_conditioned(3, 3)), (norm_nuc, normal(3, 4)),
                       (exponential, normal(3, 3))):
        grad = ad.gradient(ad.differentiable(fn, jit=False))
        single, double = grad(matrix.astype(np.float32)), grad(matrix)
        assert single.dtype == np.float32, fn.__name__
        np.testing.assert_allclose(single, double, rtol=2e-4, atol=2e-4, err_msg=fn.__name__)


def test_svd_full_matrices_cotangent_on_extra_columns_raises():
    def extra_columns(image):
        left, spectrum, right_t = np.linalg.svd(image)
        return np.sum(left ** 2 * np.arange(16.0).reshape(4, 4))

    with pytest.raises(ValueError, match="full_matrices=False"):
        ad.gradient(ad.differentiable(extra_columns, jit=False))(normal(4, 3))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 5)])
def test_svd_repeated_and_zero_singular_values(shape):
    """Losses of the singular values alone are exact at repeated and zero values
    (sum(s**2) is smooth everywhere; the nuclear norm where every value is > 0)."""
    repeated_and_zero = with_singular_values([2.0, 2.0, 0.0], *shape)
    check_grads(squared_frobenius_by_svd, repeated_and_zero, paths=PY)
    repeated = with_singular_values([1.5, 1.5, 0.5], *shape)
    check_grads(nuclear_by_svd, repeated, paths=PY)


def test_svd_convention_at_the_identity():
    """Every singular value of I is 1 (one repeated value): d sum(s) = U @ Vt = I, and a
    loss of the singular vectors gets the finite value that drops the coupling terms."""
    identity = np.eye(3)
    grad = ad.gradient(ad.differentiable(nuclear_by_svd, jit=False))(identity)
    np.testing.assert_allclose(grad, np.eye(3), atol=1e-12)
    vectors = ad.gradient(ad.differentiable(reduced_svd_loss, jit=False))(identity)
    assert np.all(np.isfinite(vectors))


def _flipped(signs, left, right_t):
    return left * signs, signs[:, None] * right_t


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_vjp_does_not_depend_on_lapack_signs(shape):
    """Flip the signs of pairs (U[:, i], Vt[i]): the cotangents of a loss that does not
    see them flip alike, and the VJP is the same."""
    image = normal(*shape)
    left, spectrum, right_t = np.linalg.svd(image, full_matrices=False)
    d_left, d_spectrum, d_right_t = normal(*left.shape), normal(*spectrum.shape), \
        normal(*right_t.shape)
    signs = np.array([-1.0, 1.0, -1.0])
    base = rt.svd_vjp((d_left, d_spectrum, d_right_t), (left, spectrum, right_t))
    d_left_flipped, d_right_t_flipped = _flipped(signs, d_left, d_right_t)
    left_flipped, right_t_flipped = _flipped(signs, left, right_t)
    other = rt.svd_vjp((d_left_flipped, d_spectrum, d_right_t_flipped),
                       (left_flipped, spectrum, right_t_flipped))
    np.testing.assert_allclose(other, base, rtol=1e-12, atol=1e-12)


def test_eigh_vjp_does_not_depend_on_eigenvector_signs():
    matrix = normal(4, 4)
    values, vectors = rt.eigh(matrix, False)
    d_values, d_vectors = normal(4), normal(4, 4)
    signs = np.array([1.0, -1.0, -1.0, 1.0])
    base = rt.eigh_vjp((d_values, d_vectors), (values, vectors), False)
    other = rt.eigh_vjp((d_values, d_vectors * signs), (values, vectors * signs), False)
    np.testing.assert_allclose(other, base, rtol=1e-12, atol=1e-12)


# ---- eigh, eigvalsh -----------------------------------------------------------------------
def eigh_lower_loss(matrix):
    values, vectors = np.linalg.eigh(matrix)
    return np.sum(values * np.arange(4.0)) + np.sum(vectors ** 2 @ np.arange(4.0)) \
        + np.sum(vectors[:, 1] * matrix[0, 0] * vectors[:, 1])


def eigh_upper_loss(matrix):
    values, vectors = np.linalg.eigh(matrix, UPLO="U")
    return np.sum(np.exp(values)) + np.sum(vectors[:, 0] ** 2 * np.arange(4.0))


def eigvalsh_lower(matrix):
    return np.sum(np.linalg.eigvalsh(matrix) ** 3)


def eigvalsh_upper(matrix):
    return np.sum(np.linalg.eigvalsh(matrix, "U") * np.arange(4.0))


@pytest.mark.parametrize("fn", [eigh_lower_loss, eigh_upper_loss, eigvalsh_lower,
                                eigvalsh_upper])
def test_eigh_and_eigvalsh(fn):
    check_grads(fn, normal(4, 4), paths=PY)


@pytest.mark.parametrize("fn, upper", [(eigvalsh_lower, False), (eigvalsh_upper, True)])
def test_eigh_gradient_is_on_the_triangle_numpy_reads(fn, upper):
    grad = ad.gradient(ad.differentiable(fn, jit=False))(normal(4, 4))
    unread = np.tril(grad, -1) if upper else np.triu(grad, 1)
    assert np.all(unread == 0.0) and np.any(grad != 0.0)


def test_eigh_degenerate_eigenvalues():
    """sum(w**2) is |A|_F**2 of the symmetric matrix read: smooth at I, where every
    eigenvalue is 1, and so is sum(w) (its trace)."""
    def squares(matrix):
        return np.sum(np.linalg.eigh(matrix)[0] ** 2)

    check_grads(squares, np.eye(4), paths=PY)
    check_grads(squares, np.diag([1.0, 1.0, 2.0, 3.0]), paths=PY)
    trace = ad.gradient(ad.differentiable(eigvalsh_upper, jit=False))(np.eye(4))
    np.testing.assert_allclose(trace, np.diag(np.arange(4.0)), atol=1e-12)


# ---- cholesky, slogdet, pinv, matrix_power -----------------------------------------------------
def cholesky_loss(covariance):
    factor = np.linalg.cholesky(covariance)
    return np.sum(factor * np.cos(covariance)) + np.sum(factor ** 3)


def slogdet_loss(system):
    sign, logdet = np.linalg.slogdet(system)
    return np.sum(sign * logdet + logdet ** 2)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (2, 1, 2, 2)])
def test_cholesky_and_slogdet_of_matrices_and_stacks(shape):
    check_grads(cholesky_loss, positive_definite(*shape), paths=PY)
    check_grads(slogdet_loss, well_conditioned(*shape), paths=PY)


def test_slogdet_negative_determinant_and_gradient_on_lower_triangle_of_cholesky():
    flipped = well_conditioned(3, 3)[::-1].copy()
    assert np.linalg.det(flipped) < 0
    check_grads(slogdet_loss, flipped, paths=PY)
    grad = ad.gradient(ad.differentiable(cholesky_loss, jit=False))(positive_definite(3, 3))
    assert np.all(np.triu(grad, 1) == 0.0)


def pinv_loss(design):
    return np.sum(np.linalg.pinv(design) ** 2 * np.arange(design.size).reshape(design.shape).T)


@pytest.mark.parametrize("shape", SHAPES)
def test_pinv_full_rank(shape):
    check_grads(pinv_loss, normal(*shape), paths=PY)


def matrix_power_loss(transition, steps):
    return np.sum(np.linalg.matrix_power(transition, steps) * np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("steps", [0, 1, 2, 3, -1, -3])
def test_matrix_power_integer_exponents(steps):
    check_grads(matrix_power_loss, well_conditioned(3, 3) / 3.0, steps, paths=PY)


def test_matrix_power_zero_gives_zero_gradient():
    grad = ad.gradient(ad.differentiable(matrix_power_loss, jit=False))(normal(3, 3), 0)
    assert np.all(grad == 0.0)


# ---- matrix norms -------------------------------------------------------------------------
def norm_2(weights):
    return np.linalg.norm(weights, 2) ** 2


def norm_nuc(weights):
    return np.linalg.norm(weights, "nuc") ** 2


def norm_1(weights):
    return np.linalg.norm(weights, 1) ** 2


def norm_minus_1(weights):
    return np.linalg.norm(weights, -1) ** 2


def norm_inf(weights):
    return np.linalg.norm(weights, np.inf) ** 2


def norm_minus_inf(weights):
    return np.linalg.norm(weights, -np.inf) ** 2


def norm_minus_2(weights):
    return np.linalg.norm(weights, -2) ** 2


def norm_fro(weights):
    return np.linalg.norm(weights, "fro") ** 2


NORMS = {2: norm_2, -2: norm_minus_2, "nuc": norm_nuc, 1: norm_1, -1: norm_minus_1,
         np.inf: norm_inf, -np.inf: norm_minus_inf, "fro": norm_fro}


@pytest.mark.parametrize("order", list(NORMS), ids=str)
@pytest.mark.parametrize("shape", SHAPES)
def test_matrix_norms(order, shape):
    weights = RNG.uniform(0.3, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    check_grads(NORMS[order], weights, paths=PY)
    value = ad.value_and_gradient(ad.differentiable(NORMS[order], jit=False))(weights)[0]
    assert value == pytest.approx(np.linalg.norm(weights, order) ** 2, rel=1e-12)


def test_matrix_norm_conventions_at_ties_and_zeros():
    """ord=1: the columns of largest |sum| tie: each gets half of g, times sign(x), 0
    where x is 0; ord=2 at a repeated largest singular value: LAPACK's first pair."""
    tied = np.array([[1.0, -1.0, 0.5], [0.0, 0.0, 0.1]])

    def column_norm(weights):
        return np.linalg.norm(weights, 1)

    grad = ad.gradient(ad.differentiable(column_norm, jit=False))(tied)
    np.testing.assert_array_equal(grad, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]])

    def spectral(weights):
        return np.linalg.norm(weights, 2)

    grad = ad.gradient(ad.differentiable(spectral, jit=False))(np.eye(2))
    left, _, right_t = np.linalg.svd(np.eye(2))
    np.testing.assert_allclose(grad, np.outer(left[:, 0], right_t[0]), atol=1e-12)


# ---- det, inv, solve of stacks ------------------------------------------------------------------
def stacked_loss(systems, rhs):
    return np.sum(np.linalg.det(systems)) + np.sum(np.linalg.inv(systems) ** 2) \
        + np.sum(np.linalg.solve(systems, rhs) ** 2)


@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 2, 3, 3)])
def test_stacked_det_inv_solve(shape):
    systems = well_conditioned(*shape)
    check_grads(stacked_loss, systems, normal(*shape[:-1], 2), paths=PY)


# ---- refusals -----------------------------------------------------------------------------------
def eigenvalues(matrix):
    return np.sum(np.linalg.eigvals(matrix))


def eigen_pairs(matrix):
    values, vectors = np.linalg.eig(matrix)
    return np.sum(values)


def stacked_svd(images):
    return np.sum(np.linalg.svd(images, compute_uv=False))


def frobenius_cube(weights):
    return np.linalg.norm(weights, 3)


@pytest.mark.parametrize("fn, args, message", [
    (eigenvalues, (np.eye(2),), r"np.linalg.eigvals is not differentiated: its results are "
                                r"complex(.|\n)*eigh"),
    (eigen_pairs, (np.eye(2),), r"np.linalg.eig is not differentiated"),
    (stacked_svd, (np.ones((2, 3, 3)),), r"np.linalg.svd of a 3-D array is not supported"),
    (frobenius_cube, (np.ones((2, 2)),), r"the matrix norm ord=3 is not supported"),
])
@pytest.mark.parametrize("jit", [False, True])
def test_refused_with_a_located_message(fn, args, message, jit):
    with pytest.raises(NonDifferentiableError, match=message) as info:
        ad.gradient(ad.differentiable(fn, jit=jit))(*args)
    assert "test_surface_linalg.py:" in str(info.value)


# ---- the Numba path: three compiled functions call every rule --------------------------------
def decompositions(image, square, covariance, steps):
    left, spectrum, right_t = np.linalg.svd(image, full_matrices=False)
    values, vectors = np.linalg.eigh(square, "U")
    sign, logdet = np.linalg.slogdet(covariance)
    total = np.sum(left ** 2 @ spectrum) + np.sum(right_t[0] * right_t[0] * spectrum[0])
    total += np.sum(np.linalg.svd(image, compute_uv=False) ** 2)
    total += np.sum(values * values) + np.sum(vectors ** 2 @ values)
    total += np.sum(np.linalg.eigvalsh(square) ** 3)
    total += np.sum(np.linalg.cholesky(covariance)) + sign * logdet
    total += np.sum(np.linalg.pinv(image) ** 2)
    total += np.sum(np.linalg.matrix_power(covariance / 4.0, steps))
    return total


def matrix_norms(weights):
    return (np.linalg.norm(weights, 2) + np.linalg.norm(weights, -2)
            + np.linalg.norm(weights, "nuc") + np.linalg.norm(weights, "fro")
            + np.linalg.norm(weights, 1) + np.linalg.norm(weights, -1)
            + np.linalg.norm(weights, np.inf) + np.linalg.norm(weights, -np.inf))


def stacks(systems, covariances, rhs):
    sign, logdet = np.linalg.slogdet(systems)
    return stacked_loss(systems, rhs) + np.sum(np.linalg.cholesky(covariances) ** 2) \
        + np.sum(sign * logdet)


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
def test_numba_decompositions():
    for steps in (3, -2):
        check_grads(decompositions, normal(4, 3), normal(3, 3), positive_definite(3, 3), steps)


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
def test_numba_matrix_norms():
    for shape in ((3, 4), (4, 3)):
        check_grads(matrix_norms, RNG.uniform(0.3, 1.5, shape) * RNG.choice([-1.0, 1.0], shape))


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
def test_numba_stacks():
    check_grads(stacks, well_conditioned(2, 3, 3), positive_definite(2, 3, 3), normal(2, 3, 2))


# ---- scipy.linalg ---------------------------------------------------------------------------
def _triangular_solver(directory, trans, lower, unit):
    """A function calling solve_triangular with these constant options, in a real file
    (the compiler reads functions' source; the options must be literals)."""
    name = f"triangular_{trans}_{lower}_{unit}"
    path = directory / f"{name}.py"
    path.write_text(
        "import numpy as np\nimport scipy.linalg\n\n\n"
        f"def solver(factor, rhs):\n"
        f"    solved = scipy.linalg.solve_triangular(factor, rhs, trans={trans!r}, "
        f"lower={lower}, unit_diagonal={unit})\n"
        "    return np.sum(solved ** 2 * np.cos(rhs))\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.solver


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("rhs_shape", [(3,), (3, 2)])
def test_solve_triangular(trans, lower, unit, rhs_shape, tmp_path):
    solver = _triangular_solver(tmp_path, trans, lower, unit)
    factor, rhs = well_conditioned(3, 3), normal(*rhs_shape)
    check_grads(solver, factor, rhs, paths=PY)
    grad = ad.gradient(ad.differentiable(solver, jit=False))(factor, rhs)[0]
    unread = np.triu(grad, 0 if unit else 1) if lower else np.tril(grad, 0 if unit else -1)
    assert np.all(unread == 0.0)


def scipy_cholesky_upper(covariance):
    return np.sum(scipy.linalg.cholesky(covariance) ** 2 * np.cos(covariance))


def scipy_cholesky_lower(covariance):
    return np.sum(scipy.linalg.cholesky(covariance, lower=True) * np.cos(covariance))


@pytest.mark.parametrize("fn, upper", [(scipy_cholesky_upper, True),
                                       (scipy_cholesky_lower, False)])
def test_scipy_cholesky_on_the_triangle_it_reads(fn, upper):
    covariance = positive_definite(4, 4)
    check_grads(fn, covariance, paths=PY)
    grad = ad.gradient(ad.differentiable(fn, jit=False))(covariance)
    assert np.all((np.tril(grad, -1) if upper else np.triu(grad, 1)) == 0.0)


def cho_solved(covariance, rhs):
    c, low = scipy.linalg.cho_factor(covariance)
    upper = scipy.linalg.cho_solve((c, low), rhs)
    factored = scipy.linalg.cho_factor(covariance, lower=True)
    lower = scipy.linalg.cho_solve(factored, rhs * 2.0)
    return np.sum(upper ** 2) + np.sum(lower * np.sin(rhs))


def cho_factor_entries(covariance):
    """The factor's triangle, and the other one: covariance's own entries."""
    c, low = scipy.linalg.cho_factor(covariance)
    return np.sum(c ** 2 * np.arange(16.0).reshape(4, 4))


@pytest.mark.parametrize("rhs_shape", [(4,), (4, 3)])
def test_cho_factor_and_cho_solve(rhs_shape):
    check_grads(cho_solved, positive_definite(4, 4), normal(*rhs_shape), paths=PY)
    check_grads(cho_factor_entries, positive_definite(4, 4), paths=PY)


def exponential(generator):
    return np.sum(scipy.linalg.expm(generator) * np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("scale", [0.1, 1.0, 8.0])  # 8: scaling and squaring
def test_expm(scale):
    check_grads(exponential, scale * normal(3, 3), paths=PY, rtol=1e-5)


def scipy_aliases(system, rhs):
    return scipy.linalg.det(system) + np.sum(scipy.linalg.inv(system) ** 2) \
        + np.sum(scipy.linalg.solve(system, rhs) ** 2)


def test_scipy_det_inv_solve():
    check_grads(scipy_aliases, well_conditioned(3, 3), normal(3), paths=PY)


def scipy_everything(factor, covariance, rhs, generator):
    solved = scipy.linalg.solve_triangular(factor, rhs, lower=True)
    back = scipy.linalg.solve_triangular(factor, rhs, trans="T", unit_diagonal=True)
    c, low = scipy.linalg.cho_factor(covariance)
    total = np.sum(solved ** 2) + np.sum(back) + np.sum(scipy.linalg.cho_solve((c, low), rhs))
    total += np.sum(c * c) + np.sum(scipy.linalg.cholesky(covariance, lower=True) ** 2)
    return total + np.sum(scipy.linalg.expm(generator) ** 2) + scipy_aliases(covariance, rhs)


@pytest.mark.slow  # compiles a function per case: the rule table compiles each rule
def test_numba_scipy_linalg():
    check_grads(scipy_everything, well_conditioned(3, 3), positive_definite(3, 3), normal(3),
                3.0 * normal(3, 3))
