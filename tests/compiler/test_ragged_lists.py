"""Joins of a growing list whose items differ in length along the joining axis
(issue 34, item 11): ``np.concatenate``, ``np.hstack``, ``np.vstack`` and
``np.row_stack`` of a list grown in a loop, a while loop, branches or a
comprehension.  Valid NumPy, which failed with NumPy's "inhomogeneous shape"
``ValueError`` (Python) or "cannot assign slice" (Numba) from generated code: the list
was converted to one array first.  Each is checked on both paths against finite
differences: gradients, forward mode (jvp) and, on one case, Hessians.
"""

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads, directional_difference, fresh_copies
from s2s_ad.testing.differences import central_difference

# np.row_stack, an alias of np.vstack, is deprecated in NumPy 2 (and still there)
pytestmark = pytest.mark.filterwarnings("ignore:.*row_stack.*:DeprecationWarning")

LEVELS = np.array([0.5, -1.0, 2.0, 0.25])
GRID = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6], [0.7, 0.2, -0.9]])


def grown_in_a_loop(levels):
    parts = []
    for k in range(1, 4):
        parts.append(levels[:k] * float(k))
    return np.sum(np.concatenate(parts) ** 2)


def grown_with_an_explicit_axis(levels):
    pieces = []
    for k in range(1, 4):
        pieces.append(np.sin(levels[k - 1:]))
    return np.sum(np.concatenate(pieces, axis=0) * np.arange(9.0))


def joined_comprehension(levels):
    return np.sum(np.concatenate([levels[:k] for k in range(1, 4)]) ** 3)


def hstacked_pieces(levels):
    chunks = []
    for k in range(1, 4):
        chunks.append(levels[k:] * levels[k - 1])
    return np.sum(np.hstack(chunks) ** 2 * np.arange(6.0))


def vstacked_blocks(grid):
    blocks = []
    for k in range(1, 3):
        blocks.append(grid[:k] * float(k))
    return np.sum(np.vstack(blocks) ** 2 * np.arange(3.0))


def row_stacked_blocks(grid):
    blocks = [grid[:2] * grid[2], np.tanh(grid[2:])]
    blocks.append(grid[1:] ** 2)
    return np.sum(np.row_stack(blocks) * np.arange(3.0))


def grown_in_a_while_loop(levels):
    runs = [levels[:1]]
    while len(runs) < 4:
        runs.append(runs[-1][:1] * levels[len(runs) - 1] + levels[:len(runs)])
    return np.sum(np.concatenate(runs) ** 2)


def grown_in_branches(levels, cut):
    spans = []
    for k in range(4):
        if levels[k] > cut:
            spans.append(levels[k:] * cut)
        else:
            spans.append(np.exp(levels[:1]))
    return np.sum(np.cos(np.concatenate(spans)))


def joined_along_columns(grid):
    strips = [grid[:, :k] * float(k) for k in range(1, 3)]
    wide = np.concatenate(strips, axis=1)
    return np.sum(wide ** 2 * np.arange(3.0)) + np.sum(np.hstack(strips) ** 3)


CASES = [
    (grown_in_a_loop, (LEVELS,)),
    (grown_with_an_explicit_axis, (LEVELS,)),
    (joined_comprehension, (LEVELS,)),
    (hstacked_pieces, (LEVELS,)),
    (vstacked_blocks, (GRID,)),
    (row_stacked_blocks, (GRID,)),
    (grown_in_a_while_loop, (LEVELS,)),
    (grown_in_branches, (LEVELS, 0.3)),
    (joined_along_columns, (GRID,)),
]
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_gradients_match_finite_differences(f, args):
    check_grads(f, *args, seed=3)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_values_match_numpy(f, args, jit):
    assert ad.differentiable(f, jit=jit)(*fresh_copies(args)) == pytest.approx(
        f(*fresh_copies(args)), rel=1e-13)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_jvp_matches_finite_differences(f, args, jit):
    rng = np.random.default_rng(7)
    direction = {0: rng.uniform(-1.0, 1.0, args[0].shape)}
    tangents = [direction[0]] + [0.0] * (len(args) - 1)
    value, tangent = ad.jvp(ad.differentiable(f, jit=jit), fresh_copies(args), tangents)
    estimate, rounding = directional_difference(f, args, direction, 1e-6)
    assert value == pytest.approx(f(*fresh_copies(args)), rel=1e-13)
    assert abs(tangent - estimate) <= 1e-6 * (abs(estimate) + 1.0) + 10 * rounding


def _hessian_by_differences(f, x, h=1e-5):
    """Central differences of the (reverse-mode, Python path) gradient, column by column."""
    grad = ad.gradient(ad.differentiable(f, jit=False))
    columns = []
    for i in range(x.size):
        unit = np.zeros_like(x)
        unit.flat[i] = 1.0
        columns.append(np.ravel(central_difference(lambda t, u=unit: grad(x + t * u), h)[0]))
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_hessian_and_hvp_through_a_ragged_join(jit):
    # d/dlevels of the pullback's pieces (rt.list_add_pieces) by forward mode
    df = ad.differentiable(grown_in_branches, jit=jit, wrt="levels")
    hessian = ad.hessian(df)(LEVELS, 0.3)
    expected = _hessian_by_differences(lambda v: grown_in_branches(v, 0.3), LEVELS)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-7)
    direction = np.array([1.0, -0.5, 0.25, 2.0])
    np.testing.assert_allclose(ad.hvp(df, (LEVELS, 0.3), (direction, 0.0)), expected @ direction,
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_hessian_of_a_grown_concatenation_is_its_diagonal(jit):
    # sum over k = 1..3 of sum((k * levels[:k])^2): H = 2 diag(1+4+9, 4+9, 9, 0)
    hessian = ad.hessian(ad.differentiable(grown_in_a_loop, jit=jit))(LEVELS)
    np.testing.assert_allclose(hessian, np.diag([28.0, 26.0, 18.0, 0.0]), rtol=1e-13)


def mismatched_rows(grid):
    blocks = [grid]
    blocks.append(grid[:, :2] * 2.0)  # (a list that grows: rt.list_vstack)
    return np.sum(np.vstack(blocks))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_items_that_differ_off_the_axis_raise_as_numpy_does(jit):
    with pytest.raises(ValueError, match="must match exactly"):
        ad.gradient(ad.differentiable(mismatched_rows, jit=jit))(GRID)
