"""Out-of-range indices raise NumPy's IndexError at the user's line, on both paths
(issue 34, item 1 and "Bounds").

Numba checks no bounds: before the bounds stage, ``signal[5]`` of three items read
garbage in compiled code and the pullback added a cotangent outside the array.  Each
program below indexes out of range in one way (a constant, an argument, a write, a 2-d
index, an index array, an index computed in a loop, a helper's index); every entry
point that runs the forward (the function itself, gradient, value_and_gradient,
value_with_pullback, jvp, hvp, jacobian in forward mode, hessian) raises the same
located IndexError on the Python and the Numba path.  In range (negative indices too),
the gradients are checked against finite differences; an index the range analysis
proves in range gets no check in the generated code.
"""

import inspect

import numpy as np
import pytest
from numba_sample import numba_marks

import s2s_ad as ad
from s2s_ad.errors import ArgumentError
from s2s_ad.testing import check_grads

# the checks inline into compiled code without Numba's IR warnings
pytestmark = pytest.mark.filterwarnings("error::numba.core.errors.NumbaIRAssumptionWarning")

SIGNAL = np.array([0.3, -1.2, 2.5])
GRID = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75]])


def _where(f, text: str) -> str:
    """``file:line:col`` of the first ``text`` in ``f``'s source (1-based column)."""
    lines, first = inspect.getsourcelines(f)
    number = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(f)}:{first + number}:{lines[number].index(text) + 1}"


# ---- programs that index out of range ----------------------------------------------------
def constant_index(signal):
    return signal[5] * 2.0


def index_argument(signal, position):
    return signal[position] * 2.0


def write_out_of_range(signal, position):
    scratch = signal * 1.5
    scratch[position] = 0.0
    return np.sum(scratch * signal)


def grid_index(grid, row, col):
    return grid[row, col] ** 2


def gather(signal, picks):
    return np.sum(signal[picks] ** 2)


def strided_sum(signal, stride):
    total = 0.0
    for step in range(signal.shape[0]):
        at = step * stride
        total += signal[at] * signal[step]
    return total


def lookup(values, at):
    return values[at] * values[0]


def calls_a_helper(signal, position):
    return lookup(signal, position) + signal[1]


#: (function, arguments, where the message points, the message's NumPy part)
OUT_OF_RANGE = {
    "constant": (constant_index, (SIGNAL,), (constant_index, "signal[5]"),
                 "index 5 is out of bounds for axis 0 with size 3"),
    "argument": (index_argument, (SIGNAL, 100000), (index_argument, "signal[position]"),
                 "index 100000 is out of bounds for axis 0 with size 3"),
    "negative argument": (index_argument, (SIGNAL, -4), (index_argument, "signal[position]"),
                          "index -4 is out of bounds for axis 0 with size 3"),
    "write": (write_out_of_range, (SIGNAL, 3), (write_out_of_range, "scratch[position]"),
              "index 3 is out of bounds for axis 0 with size 3"),
    "2-d": (grid_index, (GRID, 1, 2), (grid_index, "grid[row, col]"),
            "index 2 is out of bounds for axis 1 with size 2"),
    "index array": (gather, (SIGNAL, np.array([0, 2, -7])), (gather, "signal[picks]"),
                    "index -7 is out of bounds for axis 0 with size 3"),
    "computed in a loop": (strided_sum, (SIGNAL, 2), (strided_sum, "signal[at]"),
                           "index 4 is out of bounds for axis 0 with size 3"),
    "in a helper": (calls_a_helper, (SIGNAL, 3), (lookup, "values[at]"),
                    "index 3 is out of bounds for axis 0 with size 3"),
}


def _tangents(args: tuple) -> tuple:
    return tuple(np.ones_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                 else None for a in args)


ENTRY_POINTS = {
    "call": lambda df, args: df(*args),
    "gradient": lambda df, args: ad.gradient(df)(*args),
    "value_and_gradient": lambda df, args: ad.value_and_gradient(df)(*args),
    "value_with_pullback": lambda df, args: ad.value_with_pullback(df, *args)[1](1.0),
    "jvp": lambda df, args: ad.jvp(df, args, _tangents(args)),
    "hvp": lambda df, args: ad.hvp(df, args, _tangents(args)),
    "jacobian (forward mode, several directions)":
        lambda df, args: ad.jacobian(df, mode="forward")(*args),
    "hessian": lambda df, args: ad.hessian(df)(*args),
}


# every case and entry point on the Python path; on Numba one pair in four by default (the
# same every run, tests/numba_sample.py), the others in the slow tier
@pytest.mark.parametrize(("case", "entry", "jit"), [
    pytest.param(case, entry, jit, id=f"{case}-{entry}-{'numba' if jit else 'python'}",
                 marks=numba_marks(f"{case}-{entry}") if jit else ())
    for case in OUT_OF_RANGE for entry in ENTRY_POINTS for jit in (False, True)])
def test_an_index_out_of_range_raises_at_the_users_line(case, entry, jit):
    fn, args, (located_in, text), numpy_words = OUT_OF_RANGE[case]
    df = ad.differentiable(fn, jit=jit)
    with pytest.raises(IndexError) as raised:
        ENTRY_POINTS[entry](df, args)
    expected = f"{_where(located_in, text)}: {numpy_words} (in {located_in.__name__})"
    assert str(raised.value) == expected


def shrinking_view(signal):
    n = signal.shape[0]
    total = 0.0
    for i in range(n):
        total += signal[i]
        signal = signal[1:]
    return total


def an_item_is_no_size(signal):
    counts = np.zeros(5, np.int64)
    counts[0] = 100
    at = counts[0]
    scratch = np.zeros(6)
    scratch[at] = signal[0]
    return np.sum(scratch * signal[1])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_an_item_of_an_array_is_not_taken_for_its_size(jit):
    """``counts`` has 5 items, so its shape is known; ``counts[0]`` is an item, not
    that size (which would be in range for ``scratch``)."""
    with pytest.raises(IndexError, match="index 100 is out of bounds for axis 0 with size 6"):
        ad.gradient(ad.differentiable(an_item_is_no_size, jit=jit))(SIGNAL)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_an_array_rebound_in_the_loop_keeps_its_check(jit):
    """``signal[i]`` with ``i < n`` where ``n`` was the length before ``signal`` shrank:
    the analysis must not take the old length for the new one."""
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 1"):
        ad.gradient(ad.differentiable(shrinking_view, jit=jit))(SIGNAL)


def doubled_entry(values, at):
    return values[at] * 2.0


@ad.derivative(of=doubled_entry, wrt=("values",))
def doubled_entry_vjp(values, at):
    def back(g):
        d_values = np.zeros_like(values)
        d_values[at + 1] = 2.0 * g  # (wrong on purpose: one past the entry read)
        return d_values
    return values[at] * 2.0, back


def uses_a_custom_derivative(signal, position):
    return doubled_entry(signal, position) + signal[0]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_custom_pullback_indexing_out_of_range_raises_at_its_line(jit):
    """The pullback a custom derivative returns is the user's code: its indices are
    checked, and the message names the derivative, not the parts s2s_ad splits it in."""
    gradient = ad.gradient(ad.differentiable(uses_a_custom_derivative, jit=jit))
    np.testing.assert_allclose(gradient(SIGNAL, 1), [1.0, 0.0, 2.0])
    with pytest.raises(IndexError) as raised:
        gradient(SIGNAL, 2)
    assert str(raised.value) == (f"{_where(doubled_entry_vjp, 'd_values[at + 1]')}: index 3 "
                                 "is out of bounds for axis 0 with size 3 (in doubled_entry_vjp)")


# ---- in range: unchanged gradients -------------------------------------------------------
@pytest.mark.parametrize("fn, args", [
    (index_argument, (SIGNAL, -3)),
    (index_argument, (SIGNAL, 2)),
    (write_out_of_range, (SIGNAL, -1)),
    (grid_index, (GRID, -1, -2)),
    (gather, (SIGNAL, np.array([0, 2, -3, 2]))),
    (strided_sum, (SIGNAL, -1)),
    (calls_a_helper, (SIGNAL, -2)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_indices_in_range_give_the_gradients_they_did(fn, args):
    check_grads(fn, *args)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_jvp_and_hvp_in_range_match_the_gradient(jit):
    """``grid[-1, -2] ** 2``: tangent 2 g t at the indexed entry, Hessian 2 there."""
    df = ad.differentiable(grid_index, jit=jit)
    direction = np.arange(6.0).reshape(3, 2)
    value, tangent = ad.jvp(df, (GRID, -1, -2), (direction, None, None))
    assert value == GRID[2, 0] ** 2 and tangent == 2 * GRID[2, 0] * direction[2, 0]
    product = ad.hvp(df, (GRID, -1, -2), (direction, None, None))
    expected = np.zeros_like(GRID)
    expected[2, 0] = 2.0 * direction[2, 0]
    np.testing.assert_allclose(product, expected)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_wrongly_shaped_cotangent_is_refused_before_the_pullback_runs(jit):
    """The pullback indexes the cotangent of the result like the result: a cotangent of
    another shape is an ArgumentError, never a read outside it."""
    def rows(grid, row):
        return grid[row] * 2.0

    _, pullback = ad.value_with_pullback(ad.differentiable(rows, jit=jit), GRID, 2)
    with pytest.raises(ArgumentError, match="shaped like its result"):
        pullback(np.ones(5))


# ---- what the range analysis proves: no check in the generated code ----------------------
def loop_over_the_shape(signal):
    total = 0.0
    for i in range(signal.shape[0]):
        total += signal[i] * signal[i]
    return total


def loop_over_len(signal):
    total = 0.0
    n = len(signal)
    for i in range(n):
        total += signal[-1 + 1 + i]
    return total


def stencil(signal, lam):
    energy = 0.0
    for i in range(1, signal.shape[0] - 1):
        d2 = signal[i - 1] - 2.0 * signal[i] + signal[i + 1]
        energy += lam * d2 * d2
    return energy


def grid_loops(grid):
    total = 0.0
    for row in range(grid.shape[0]):
        for col in range(grid.shape[1]):
            total += grid[row, col] * grid[row, col]
    return total


def table(first, second):
    n = first.shape[0]
    m = second.shape[0]
    costs = np.zeros((n + 1, m + 1))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            costs[i, j] = costs[i - 1, j - 1] + first[i - 1] * second[j - 1]
    return costs[n, m]


def pairs(points):
    n = points.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = points[i] - points[j]
            energy += d * d
    for i in range(n - 1, -1, -1):
        energy += points[i]
    return energy


@pytest.mark.parametrize("fn, args", [
    (loop_over_the_shape, (SIGNAL,)),
    (loop_over_len, (SIGNAL,)),
    (stencil, (SIGNAL, 0.5)),
    (grid_loops, (GRID,)),
    (table, (SIGNAL, GRID[:, 0])),
    (pairs, (SIGNAL,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_indices_proven_in_range_get_no_check(fn, args):
    assert "check_index" not in ad.source(fn, *args)
    check_grads(fn, *args)


def past_the_end(signal):
    total = 0.0
    for i in range(signal.shape[0]):
        total += signal[i + 1]
    return total


def other_array(signal, weights):
    total = 0.0
    for i in range(signal.shape[0]):
        total += signal[i] * weights[i]
    return total


@pytest.mark.parametrize("fn, args, flag, checked", [
    (past_the_end, (SIGNAL,), "i_in_bounds = rt.range_in_bounds(signal_shape_1, 0, 0, "
     "signal_shape_0, 1, 1)",
     "rt.check_index_unless(i_in_bounds, signal_shape_1, 0, i_add_1, "),
    (other_array, (SIGNAL, np.ones(3)), "i_in_bounds = rt.range_in_bounds(weights_shape, 0, 0, "
     "signal_shape_0, 1, 0)", "rt.check_index_unless(i_in_bounds, weights_shape, 0, i, "),
], ids=["one past the end", "another array's length"])
def test_indices_not_proven_keep_their_check(fn, args, flag, checked):
    """Checked in the loop unless the loop's whole range, checked once before it, is in
    range (then Numba compiles the loop without the check)."""
    source = ad.source(fn, *args)
    assert source.count(checked) == 3  # primal, forward, fused
    assert source.count("rt.check_index") == 3
    assert source.count(flag) == 3


def first_items(signal, count):
    total = 0.0
    for i in range(signal.shape[0] + 5):
        if i < count:
            total += signal[i] * signal[i]
    return total


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_loop_whose_range_is_not_in_bounds_checks_each_index(jit):
    """The loop's range runs past the end, but the reads stay in range: no error; one
    past the end, the first index out of range is named."""
    df = ad.differentiable(first_items, jit=jit)
    value, gradient = ad.value_and_gradient(df)(SIGNAL, 3)
    assert value == pytest.approx(np.sum(SIGNAL ** 2))
    np.testing.assert_allclose(gradient, 2 * SIGNAL)
    with pytest.raises(IndexError) as raised:
        ad.gradient(df)(SIGNAL, 7)
    assert str(raised.value) == (f"{_where(first_items, 'signal[i] * ')}: index 3 is out of "
                                 "bounds for axis 0 with size 3 (in first_items)")
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        ad.gradient(ad.differentiable(past_the_end, jit=jit))(SIGNAL)


# ---- indices the same in every iteration, or a loop's variable plus such an offset ------
def gates(weights, state, row):
    """The lstm pattern: ``h`` and ``h + 1`` the same in the ``col`` loop, ``width + col``
    stepping with it; ``row`` out of range raises in the first iteration."""
    width = state.shape[1]
    total = 0.0
    for layer in range(state.shape[0] // 2):
        h = 2 * layer + row
        for col in range(width):
            total += weights[h, col] * weights[h + 1, width + col] * state[h + 1, col]
    return total


def offset_reads(signal, start):
    """``start + step`` runs past the end when ``start`` > 0: the sum of the reads before."""
    total = 0.0
    for step in range(signal.shape[0]):
        total += signal[start + step]
    return total


WEIGHTS = np.arange(1.0, 17.0).reshape(2, 8) / 10.0
STATE = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, -0.75, 0.3, 1.2]])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("entry", ["call", "gradient", "jvp", "hvp"])
def test_an_index_the_same_in_each_iteration_out_of_range_raises_at_its_line(entry, jit):
    df = ad.differentiable(gates, jit=jit)
    np.testing.assert_allclose(ENTRY_POINTS["gradient"](df, (WEIGHTS, STATE, 0))[0],
                               ad.gradient(ad.differentiable(gates, jit=False))(
                                   WEIGHTS, STATE, 0)[0])
    with pytest.raises(IndexError) as raised:
        ENTRY_POINTS[entry](df, (WEIGHTS, STATE, 1))
    assert str(raised.value) == (f"{_where(gates, 'weights[h + 1, ')}: index 2 is out of "
                                 "bounds for axis 0 with size 2 (in gates)")


def test_the_gradient_with_invariant_and_offset_indices_matches_finite_differences():
    check_grads(gates, WEIGHTS, STATE, 0)
    check_grads(offset_reads, SIGNAL, 0)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_an_offset_index_past_the_end_raises_at_the_iteration_it_leaves(jit):
    """``signal[1 + step]``: in range for steps 0 and 1, out at step 2 (index 3); the
    error names that index, as the per-iteration check did."""
    df = ad.differentiable(offset_reads, jit=jit)
    value, gradient = ad.value_and_gradient(df)(SIGNAL, 0)
    assert value == pytest.approx(np.sum(SIGNAL))
    with pytest.raises(IndexError) as raised:
        ad.value_and_gradient(df)(SIGNAL, 1)
    assert str(raised.value) == (f"{_where(offset_reads, 'signal[start + step]')}: index 3 "
                                 "is out of bounds for axis 0 with size 3 (in offset_reads)")
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        ad.gradient(df)(SIGNAL, -4)


def test_the_lstm_pattern_is_checked_before_the_inner_loop():
    """``h``, ``h + 1`` and ``width + col``: one flag, computed before the ``col`` loop;
    in it, the checks test that flag only (one check per distinct index)."""
    source = ad.source(gates, WEIGHTS, STATE, 0, stage="bounds")
    before, inside = source.split("    for col in range(width):")
    assert "h_in_weights = rt.index_in_bounds(weights_shape, 0, h)" in before
    assert "rt.range_in_bounds(weights_shape, 1, 0, width, 1, width)" in before
    assert "_in_state = rt.index_in_bounds(state_shape" in before
    assert "col_in_bounds = h_in_weights & " in before
    assert "rt.check_index(" not in inside and "in_bounds(" not in inside
    # weights: h, col, h + 1, width + col; state: h + 1 (its col is proven in range)
    assert inside.count("rt.check_index_unless(col_in_bounds, ") == 5
