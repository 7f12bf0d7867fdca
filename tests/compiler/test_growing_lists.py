"""Lists that grow: ``append``/``extend`` in loops and branches, list
comprehensions and generator expressions, read by index (negative too), ``len``,
iteration, ``sum``/``max``/``min`` and NumPy functions.  Each function is checked
on the Python and the Numba path against central finite differences and the
dot-product identity (``check_grads``); misuses are refused at their line.

The names are the ones generated code uses for lists (``items``, ``d_items``,
``position``, ``item``, ``List``), so a capture would show.
"""

import inspect
import math

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

V = np.array([0.5, -1.0, 2.0, 0.25])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.5], [0.0, 0.2, 0.4]])


def squares_comprehension(v):
    return sum([w * w for w in v])


def appended_in_a_loop(v):
    items = []
    for i in range(v.shape[0]):
        items.append(v[i] * v[i])
    return sum(items) + items[-1] * items[0] + len(items)


def hidden_states(x, W):
    states = []
    h = x
    for _step in range(3):
        h = np.tanh(W @ h)
        states.append(h)
    return np.sum(np.stack(states) ** 2) + np.sum(states[1] * states[-1])


def generator_with_a_filter(v, c):
    return max(w * c for w in v if w > 0.0) + len([1 for w in v])


def display_extended(a, b):
    List = [a, b * a]
    List.append(3.0)
    List.extend((a, b))
    List.extend(np.array([a, 2.0]) * b)
    return np.sum(np.array(List) ** 2)


def nested_generators(v):
    return sum([a * b for a in v for b in v if a < b])


def iterated_and_enumerated(v):
    d_items = [w * 2.0 for w in v]
    s = 0.0
    for i, w in enumerate(d_items):
        s += w * i
    for w in d_items:
        s += w ** 2
    for position, (p, q) in enumerate(zip(d_items, v, strict=True)):
        s += p * q * position
    return s


def concatenated_parts(v):
    parts = []
    for k in range(3):
        parts.append(v * (k + 1.0))
    return np.sum(np.concatenate(parts) ** 2) + np.sum(np.stack(parts, axis=0)[1])


def appended_in_branches(v, t):
    item = []
    for w in v:
        if w > t:
            item.append(w * t)
        else:
            item.append(t)
            item.append(w ** 3)
    return np.sum(np.array(item) * np.arange(len(item)))


def fresh_list_per_iteration(v):
    total = 0.0
    for k in range(3):
        row = []
        for w in v:
            row.append(w * k + w * w)
        total += max(row) * min(row) + row[k]
    return total


def while_loop_growth(x):
    items = [x]
    while len(items) < 5:
        items.append(items[-1] * x + 0.5)
    return sum(items)


def comprehension_over_range_and_rows(W, x):
    rows = [W[i] @ x for i in range(W.shape[0])]
    cols = np.array([np.sum(r * x) for r in W])
    return np.sum(np.array(rows) * cols) + np.mean(rows)


def comprehension_name_shadows_an_argument(x, v):
    return sum([x * x for x in v]) * x  # the comprehension's x is its own


def stacked_rows(v):
    rows = [w * v for w in v]
    return np.sum(np.vstack(rows) ** 2 * np.arange(16.0).reshape(4, 4))


def stacked_numbers(v):
    column = np.vstack([w * w for w in v])  # numbers become a column
    row = np.hstack([w * 2.0 for w in v])
    return np.sum(column * np.arange(4.0).reshape(4, 1)) + np.sum(row ** 3)


def stacked_blocks(m):
    blocks, pieces = [], []
    for k in range(2):
        blocks.append(m * (k + 0.5))
        pieces.append(m[0] * (k + 1.0))
    return np.sum(np.vstack(blocks) ** 2 * np.arange(12.0).reshape(4, 3)) + \
        np.sum(np.hstack(pieces) ** 2 * np.arange(6.0))


def stacked_matrix_rows(m):  # NumPy joins an array by its rows, like a list of them
    return np.sum(np.vstack(m) * m) + np.sum(np.hstack(m[0]) * 2.0)


def item_of_a_comprehension_in_a_tuple(base):  # fuzzer seed 4, program 746
    t = (base * base, 3.0)
    items = [t[1] * base for _ in range(2)]
    u = t + (items[-1],)
    return u[2] * u[0] + [w * base for w in u][-1]


@pytest.mark.parametrize("f, args", [
    (item_of_a_comprehension_in_a_tuple, (0.3,)),
    (stacked_rows, (V,)),
    (stacked_numbers, (V,)),
    (stacked_blocks, (np.arange(6.0).reshape(2, 3) / 4,)),
    (stacked_matrix_rows, (np.arange(6.0).reshape(2, 3) / 4,)),
    (squares_comprehension, (V,)),
    (appended_in_a_loop, (V,)),
    (hidden_states, (V[:3], W)),
    (generator_with_a_filter, (V, 1.5)),
    (display_extended, (0.7, 1.3)),
    (nested_generators, (V,)),
    (iterated_and_enumerated, (V,)),
    (concatenated_parts, (V,)),
    (appended_in_branches, (V, 0.3)),
    (fresh_list_per_iteration, (V,)),
    (while_loop_growth, (0.8,)),
    (comprehension_over_range_and_rows, (W, V[:3])),
    (comprehension_name_shadows_an_argument, (1.5, V)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_growing_lists(f, args):
    check_grads(f, *args, seed=5)


def test_values_match_python():
    for jit in (False, True):
        df = ad.differentiable(appended_in_branches, jit=jit)
        assert df(V, 0.3) == pytest.approx(appended_in_branches(V, 0.3), rel=1e-12)
        dg = ad.differentiable(comprehension_name_shadows_an_argument, jit=jit)
        assert dg(1.5, V) == pytest.approx(np.sum(V * V) * 1.5, rel=1e-12)


def test_the_gradient_of_a_sum_of_squares_is_twice_the_input():
    # d/dv sum(w^2) = 2 v, on both paths
    for jit in (False, True):
        g = ad.gradient(ad.differentiable(squares_comprehension, jit=jit))(V)
        np.testing.assert_allclose(g, 2 * V, rtol=1e-14)


def test_the_pullback_can_run_twice():
    value, pullback = ad.value_with_pullback(ad.differentiable(hidden_states, jit=True),
                                             V[:3], W)
    first = pullback(1.0)
    second = pullback(1.0)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def helper(values):
    return values[0]


def passed_to_a_function(x):
    values = [x]
    values.append(x)
    return helper(values)


def returned(x):
    values = []
    values.append(x)
    return values


def aliased(x):
    values = []
    values.append(x)
    other = values
    return other[0]


def sliced(x):
    values = [x]
    values.append(x * 2.0)
    return sum(values[1:])


def rebound_to_an_array(x):
    values = [x]
    values.append(x)
    values = np.zeros(3)
    return np.sum(values) * x


def of_tuples(x):
    values = []
    values.append((x, x))
    return values[0][0]


@pytest.mark.parametrize("f, line, message", [
    (passed_to_a_function, 3, "passing the list 'values' to a function"),
    (returned, 3, "the list 'values' can only grow"),
    (aliased, 3, "the list 'values' can only grow"),
    (sliced, 3, "a slice of a list"),
    (rebound_to_an_array, 3, "the list 'values' is bound to another value"),
    (of_tuples, 2, "a list of .* values is not supported"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_other_uses_of_a_list_are_refused_at_their_line(f, line, message):
    first = inspect.getsourcelines(f)[1]
    with pytest.raises(ad.NonDifferentiableError, match=f":{first + line}:.*{message}"):
        ad.gradient(f)(1.5)


def sum_of_arrays_read_while_empty(y, start):
    # fuzzer seed 11, program 15: np.sum of a list of arrays before anything is
    # appended (compiled, rt.list_array read the first item of an empty list)
    rows = []
    before = np.sum(rows)
    k = 0
    while k < 2:
        k += 1
        if start <= 1.0:
            rows.append(np.tanh(y * y + k * 0.5))
    return before + np.sum(np.array(rows)) * start


def test_an_empty_list_of_arrays_as_an_array():
    check_grads(sum_of_arrays_read_while_empty, np.array([-0.89, 0.46, 0.35]), 0.5)


def extends_with_its_own_last_item(y):
    # fuzzer seed 11, program 237: Python builds the tuple before extending, so
    # rows[-1] is the item before the extension (the generated code appended the
    # first elements before reading it, and the primal itself was wrong)
    rows = [np.sin(y), y * y - 2.0]
    for _ in range(2):
        rows.extend((np.tanh(y), np.tanh(rows[-1])))
    return np.sum(rows[-1] * rows[3]) + np.sum(rows[5])


def test_an_extension_that_reads_the_list_sees_it_before_the_extension():
    y = np.array([-1.18, -0.63, 0.89])
    for jit in (False, True):
        assert ad.differentiable(extends_with_its_own_last_item, jit=jit)(y) == pytest.approx(
            extends_with_its_own_last_item(y), rel=1e-14)
    check_grads(extends_with_its_own_last_item, y)


def squares_kept_if(levels, cut):
    total = 0.0
    for step in range(2):  # in a loop, the pullback of np.sum keeps the list's shape
        picked = [levels * step for _ in levels if cut > 1.0]  # empty when cut <= 1
        total = math.tanh(total + np.sum(picked) * np.sum(picked) + cut * np.sum(levels))
    return total


@pytest.mark.parametrize("cut", [0.5, 1.5])
def test_an_empty_comprehension_of_arrays_is_an_array_of_their_dimensions(cut):
    # np.array of an empty list of 1-d arrays was 1-d on the Python path (its pullback
    # read a second dimension: IndexError) and 2-d on Numba; it is (0, 0) on both now
    levels = np.array([0.4, -1.2, 0.9])
    check_grads(squares_kept_if, levels, cut)
    direction = (np.array([1.0, 0.5, -0.5]), 0.0)
    python = ad.hvp(ad.differentiable(squares_kept_if, jit=False), (levels, cut), direction)
    numba = ad.hvp(ad.differentiable(squares_kept_if, jit=True), (levels, cut), direction)
    for got, want in zip(numba, python, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
