"""Gradients of np.linalg's rules compile with Numba, and stacking joins pieces of
different lengths (issue 34, items 10 and 11).

Item 10: Numba's ``np.linalg.matrix_power`` returns an optional array (its code for
small exponents can fall off its end), so ``np.sum(np.linalg.matrix_power(A, 3))``
did not compile and ``jit="auto"`` ran it on the Python path.  The rule's forward is
``rt.matrix_power`` now, an array on every path.  Every linalg rule is checked here
with literal options, as users write them: ``ad.explain`` must say that the gradient
runs with Numba, and the gradient matches finite differences on both paths.

Item 11: NumPy joins pieces of different lengths along the joining axis.
``np.row_stack`` (``np.vstack`` under its deprecated name, a function of its own in
NumPy 2) was not known as a stack: its tuple became one array (``np.stack``: "all input
arrays must have the same shape").  Each stack of pieces of different lengths is
checked on both paths against finite differences, and its tangent (``ad.jvp``).
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads, directional_difference

RNG = np.random.default_rng(3410)


def well_conditioned(n):
    return RNG.uniform(-0.5, 0.5, (n, n)) + n * np.eye(n)


def positive_definite(n):
    mats = RNG.uniform(-0.5, 0.5, (n, n))
    return mats @ mats.T + n * np.eye(n)


def cube_total(A):
    return np.sum(np.linalg.matrix_power(A, 3))


def square_total(A):
    return np.sum(np.linalg.matrix_power(A, 2))


def fifth_power_trace(A):
    return np.trace(np.linalg.matrix_power(A, 5))


def inverse_square_total(A):
    return np.sum(np.linalg.matrix_power(A, -2))


def identity_power(A):
    return np.sum(np.linalg.matrix_power(A, 0) * A)


def determinant(A):
    return np.linalg.det(A)


def inverse_total(A):
    return np.sum(np.linalg.inv(A) ** 2)


def solved_total(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def log_determinant(A):
    sign, logdet = np.linalg.slogdet(A)
    return sign * logdet


def cholesky_total(A):
    return np.sum(np.linalg.cholesky(A))


def eigen_total(A):
    values, vectors = np.linalg.eigh(A)
    return np.sum(values ** 2) + np.sum(vectors ** 2 @ values)


def eigenvalue_cubes(A):
    return np.sum(np.linalg.eigvalsh(A) ** 3)


def singular_total(A):
    left, spectrum, right_t = np.linalg.svd(A, full_matrices=False)
    return np.sum(left ** 2 @ spectrum) + np.sum(np.linalg.svd(A, compute_uv=False) ** 2)


def pseudo_inverse_total(A):
    return np.sum(np.linalg.pinv(A) ** 2)


def spectral_norms(A):
    return np.linalg.norm(A, 2) + np.linalg.norm(A, "nuc") + np.linalg.norm(A, 1) \
        + np.linalg.norm(A, np.inf)


LINALG = {
    "matrix_power_3": (cube_total, lambda: (well_conditioned(3) / 3.0,)),
    "matrix_power_2": (square_total, lambda: (well_conditioned(3) / 3.0,)),
    "matrix_power_5": (fifth_power_trace, lambda: (well_conditioned(3) / 3.0,)),
    "matrix_power_-2": (inverse_square_total, lambda: (well_conditioned(3),)),
    "matrix_power_0": (identity_power, lambda: (well_conditioned(3),)),
    "det": (determinant, lambda: (well_conditioned(3),)),
    "inv": (inverse_total, lambda: (well_conditioned(3),)),
    "solve": (solved_total, lambda: (well_conditioned(3), RNG.normal(size=3))),
    "slogdet": (log_determinant, lambda: (positive_definite(3),)),
    "cholesky": (cholesky_total, lambda: (positive_definite(3),)),
    "eigh": (eigen_total, lambda: (positive_definite(3),)),
    "eigvalsh": (eigenvalue_cubes, lambda: (positive_definite(3),)),
    "svd": (singular_total, lambda: (RNG.normal(size=(4, 3)),)),
    "pinv": (pseudo_inverse_total, lambda: (RNG.normal(size=(4, 3)),)),
    "norm": (spectral_norms, lambda: (RNG.uniform(0.3, 1.5, (3, 4)),)),
}
COMPILED_BY_DEFAULT = {"matrix_power_3", "matrix_power_-2", "det", "slogdet"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in COMPILED_BY_DEFAULT
                                               else pytest.mark.slow) for n in LINALG])
def test_the_gradient_of_a_linalg_rule_compiles_with_numba(name):
    fn, make = LINALG[name]
    args = make()
    explained = ad.explain(ad.differentiable(fn), *args)
    assert f"{fn.__name__}_value_and_grad: numba" in str(explained), str(explained)
    check_grads(fn, *args)  # both paths, against finite differences


def row_stacked(top, bottom):
    return np.sum(np.row_stack((top, bottom)) ** 2 * np.arange(1.0, 5.0))


def vertically_stacked(top, bottom):
    return np.sum(np.vstack((top, bottom)) ** 3)


def horizontally_stacked(left, right):
    return np.sum(np.sin(np.hstack((left, right))) * np.arange(9.0).reshape(3, 3))


def column_stacked(left, right, column):
    return np.sum(np.column_stack((left, right, column)) ** 2 * np.arange(4.0))


def concatenated_columns(left, right):
    return np.sum(np.concatenate((left, right), axis=1) ** 3)


RAGGED = {
    "row_stack": (row_stacked, lambda: (RNG.normal(size=(2, 4)), RNG.normal(size=(1, 4)))),
    "vstack": (vertically_stacked, lambda: (RNG.normal(size=(3, 2)), RNG.normal(size=(1, 2)))),
    "hstack": (horizontally_stacked,
               lambda: (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 1)))),
    "column_stack": (column_stacked, lambda: (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 1)),
                                              RNG.normal(size=3))),
    "concatenate": (concatenated_columns,
                    lambda: (RNG.normal(size=(3, 1)), RNG.normal(size=(3, 3)))),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # np.row_stack
@pytest.mark.parametrize("name", list(RAGGED))
def test_stacks_join_pieces_of_different_lengths(name):
    fn, make = RAGGED[name]
    args = make()
    check_grads(fn, *args, paths=("python", "numba") if name == "row_stack" else ("python",))
    directions = tuple(RNG.normal(size=np.shape(a)) for a in args)
    value, tangent = ad.jvp(ad.differentiable(fn, jit=False), args, directions)
    estimate, _ = directional_difference(fn, args, dict(enumerate(directions)), 1e-6)
    np.testing.assert_allclose(tangent, estimate, rtol=1e-6)
