"""Indexing: list-display indices, ``a[()]``/``a[...]``, lists among array operands, and
writes into arrays a growing list holds (issue 20, items 5, 6, 14 and 16).

Each function runs on the Python and the Numba path (``check_grads``: central
finite differences and the dot-product identity); refusals are checked for their
text and line.

- item 5: an array a growing list holds (append stores the array itself), written
  after it was appended, is refused at the write; writes into an array before it is
  appended, into a fresh array per append, or into the original after appending a
  copy, are differentiated.
- item 6: a list display used as an index is NumPy fancy indexing (an index array),
  never the tuple index ``x[0, 1]``; repeated positions add up in the adjoint.
- item 14: an operand of np.concatenate, the stacks or np.array written as a list
  display is an array, as NumPy converts it; ragged operands and operands of
  different ranks are refused at their line.
- item 16: 0-d arrays indexed with ``()`` and arrays indexed with ``...`` (read and
  written); a write into a 0-d array passed in, or into an array another name views
  through ``...``, is refused at its line.
"""

import inspect

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

GRID = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75]])
SIGNAL = np.array([0.3, -1.2, 2.5])


def _line_of(f, text: str) -> int:
    """The file line of the first line of ``f`` holding ``text``."""
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ---- item 5: arrays a growing list holds ---------------------------------------------------
def written_between_appends(rate):
    state = np.array([rate, rate])
    history = []
    history.append(state)
    state[0] = 2.0 * rate
    history.append(state)
    return np.sum(history[0]) + np.sum(history[1])


def written_after_the_append(rate):
    state = np.array([rate, 1.0])
    history = []
    history.append(state)
    state[1] = rate
    return np.sum(history[0]) * 2.0


def one_buffer_in_a_loop(signal):
    buffer = np.zeros(2)
    rows = []
    for i in range(3):
        buffer[0] = signal[i]
        rows.append(buffer)
    return np.sum(np.stack(rows))


def scaled_in_place_after_the_append(signal):
    history = []
    level = signal * 2.0
    history.append(level)
    level *= 3.0  # ndarray.__imul__: the list sees it (found by the round-5 fuzzer)
    return np.sum(history[0])


@pytest.mark.parametrize("f, args, text", [
    (written_between_appends, (0.7,), "] = "),
    (written_after_the_append, (0.7,), "] = "),
    (one_buffer_in_a_loop, (SIGNAL,), "] = "),
    (scaled_in_place_after_the_append, (SIGNAL,), "*= "),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_write_into_an_array_a_list_holds_is_refused(f, args, text):
    line = _line_of(f, text)
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*which the list '"):
        ad.gradient(f)(*args)


def fresh_rows_and_copies(signal, rate):
    rows = []
    for i in range(3):
        row = np.zeros(2)
        row[0] = signal[i]
        row[1] = signal[i] * rate
        rows.append(row)
    state = signal * 1.0
    state[2] = rate
    history = [np.copy(state)]
    for i in range(2):
        history.append(np.copy(state))
        state[i] = state[i] * rate
    return np.sum(np.stack(rows) ** 2) + np.sum(np.stack(history) ** 2) + np.sum(state)


def test_writes_before_appending_or_into_copies_are_differentiated():
    check_grads(fresh_rows_and_copies, SIGNAL, 0.7)


# ---- item 6: a list display as an index --------------------------------------------------
def rows_by_list(grid):
    return np.sum(grid[[0, 1]] ** 2) + np.sum(grid[[2, 2, 0]] * 3.0)


def repeated_positions(signal):
    return np.sum(signal[[0, 0]] * signal[[1, 0]])


def list_indices_everywhere(grid, signal):
    picked = np.zeros((4, 2))
    picked[[3, 0]] = grid[[1, 1]] * 2.0  # a written list index
    total = np.sum(picked ** 2) + np.sum(grid[[[0, 2], [2, 2]]])  # a 2-d index array
    for i in range(2):
        total = total + np.sum(signal[[i, i + 1, 0]] ** 2)  # ints known at run time
    return total + np.sum(signal[[True, False, True]] * 0.5)  # a mask


@pytest.mark.parametrize("f, args", [
    (repeated_positions, (SIGNAL,)),
    (list_indices_everywhere, (GRID, SIGNAL)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_list_index_is_an_index_array(f, args):
    check_grads(f, *args)


def test_a_list_index_reads_rows_as_numpy_does():
    """The forward value itself was wrong: ``grid[[0, 1]]`` read ``grid[0, 1]``."""
    assert ad.differentiable(rows_by_list, jit=False)(GRID) == pytest.approx(rows_by_list(GRID))
    check_grads(rows_by_list, GRID, paths=("python",))


def float_list_index(grid):
    return np.sum(grid[[0.0, 1]])


def test_a_list_index_of_floats_is_refused_at_its_line():
    line = _line_of(float_list_index, "return")
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*must hold integers"):
        ad.gradient(float_list_index)(GRID)


# ---- item 16: a[()] and a[...] -------------------------------------------------------------
def zero_d_accumulator(rate):
    total = np.zeros(())
    total[()] = rate * rate
    total[...] = total[()] * 3.0 + rate
    return total[()] * 2.0 + np.sum(total)


def zero_d_argument(level, rate):
    return level[()] * rate + level[()] ** 2


def ellipsis_reads_and_writes(grid, rate):
    scaled = np.zeros((3, 2))
    scaled[...] = grid * rate
    scaled[..., 0] = grid[..., 1] ** 2
    return np.sum(scaled ** 2) + np.sum(grid[...][..., 0] * scaled[..., 1])


@pytest.mark.parametrize("f, args", [
    (zero_d_accumulator, (0.7,)),
    (zero_d_argument, (np.array(1.5), 0.7)),
    (ellipsis_reads_and_writes, (GRID, 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_empty_tuple_and_ellipsis_indices(f, args):
    check_grads(f, *args)


def written_zero_d_argument(level, rate):
    level[()] = rate
    return rate * 2.0


def written_under_a_view(rate):
    total = np.zeros(())
    seen = total[...]
    total[()] = rate
    return seen * 2.0


@pytest.mark.parametrize("f, args, message", [
    (written_zero_d_argument, (np.array(1.5), 0.7), "a 0-d array passed in"),
    (written_under_a_view, (0.7,), "while 'seen' views or aliases it"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_python_would_see_elsewhere_are_refused(f, args, message):
    line = _line_of(f, "] = rate")
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*{message}"):
        ad.gradient(f)(*args)


# ---- item 14: list displays as operands of np.concatenate, the stacks, np.array ----------
def operands_as_lists(signal, rate):
    joined = np.concatenate([signal, [rate, 2.0 * rate]])
    rows = np.stack([signal, [rate, rate * rate, 1.0]]) + np.vstack([signal, [rate, 0.5, 2.0]])
    wide = np.hstack([signal, [rate]]) + np.concatenate([[rate], [rate * rate, 3.0, 1.0]])
    table = np.array([signal, [rate, 2.0, rate]]) + np.column_stack([signal, [rate, 1.0, 0.0]]).T
    return np.sum(joined ** 2) + np.sum(rows * table) + np.sum(wide ** 3)


def test_list_operands_are_arrays():
    check_grads(operands_as_lists, SIGNAL, 0.7)


def ragged_operand(signal, rate):
    return np.sum(np.concatenate([signal, [[rate], [2.0 * rate, rate]]]))


def operands_of_two_ranks(signal, rate):
    return np.sum(np.concatenate([signal, [[rate], [2.0 * rate]]]))


@pytest.mark.parametrize("f, message", [
    (ragged_operand, "operand 1 is a ragged list"),
    (operands_of_two_ranks, "operands must be arrays of one number of dimensions"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_operands_numpy_rejects_are_refused_at_their_line(f, message):
    line = _line_of(f, "return")
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*{message}"):
        ad.gradient(f)(SIGNAL, 0.7)
