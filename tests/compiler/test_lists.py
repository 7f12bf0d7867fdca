"""Lists: displays that are only built and read are differentiated as tuples (both
paths, against finite differences and the dot-product identity); a list changed
other than by growing is refused at its line.  Lists that grow (append, extend,
comprehensions) are in ``tests/compiler/test_growing_lists.py``."""

import inspect

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def read_and_iterated(x0, x1):
    pair = [x0 * x1, x1]
    total = 0.0
    for w in [x0, x1 * 2.0]:
        total = total + w * w
    a, b = [x0, x1]
    return total + pair[0] * pair[-1] + a * b + len(pair)


def builtins_of_lists(g, z):
    values = [g * z, g + 1.5, z - g]
    return sum(values) * max(values) - min(values) + sum([g, z])


def lists_of_arrays(u, scale):
    v = np.concatenate([u, u * scale])
    st = np.stack([u, u * scale], axis=1)
    return np.sum(v * v) + np.sum(np.sin(st))


def list_indexed_in_a_loop(a, b):
    coefficients = [a, b, a * b]
    acc = 0.0
    for i in range(3):
        acc = acc + coefficients[i] * coefficients[2 - i]
    for k, c in enumerate(coefficients):
        acc = acc + c * k
    return acc


def lists_in_augmented_assignments(a, b):
    s = a * 1.0
    s *= np.sum(np.concatenate([np.ones(2) * b, np.ones(1)]))
    s += max([a, b * 0.5])
    return s


def nested_lists(a, b):
    grid = [[a, b], [b * b, 1.0]]
    row = grid[1]
    return grid[0][0] * row[0] + sum(grid[0])


@pytest.mark.parametrize("f, args", [
    (read_and_iterated, (0.7, 1.3)),
    (builtins_of_lists, (0.4, 1.9)),
    (lists_of_arrays, (np.array([0.5, -1.0, 2.0]), 0.7)),
    (list_indexed_in_a_loop, (0.3, -1.1)),
    (nested_lists, (0.6, 1.4)),
    (lists_in_augmented_assignments, (0.6, 1.4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_lists_built_once(f, args):
    check_grads(f, *args, seed=3)


def returns_a_list(x):
    return [x * x, x]


def test_a_returned_list_is_a_tuple_of_its_items():
    value, pullback = ad.value_with_pullback(ad.differentiable(returns_a_list, jit=False), 3.0)
    assert value == (9.0, 3.0)
    assert pullback((1.0, 1.0)) == 7.0  # d/dx (x^2 + x) = 2x + 1


def item_written(x):
    values = [x, 2.0]
    values[1] = x * x
    return values[1]


def extended_with_plus_equals(x):
    values = [x]
    values += [x * 2.0]
    return values[0]


def popped(x):
    values = [x, x * 2.0]
    return values.pop()


@pytest.mark.parametrize("f, message", [
    (item_written, "writing an item of a list"),
    (extended_with_plus_equals, "'[+]=' and other in-place operators on a list"),
    (popped, "the list method 'pop'"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_list_changed_other_than_by_growing_is_refused_at_its_line(f, message):
    line = inspect.getsourcelines(f)[1] + 2  # the change is on the second body line
    with pytest.raises(ad.NonDifferentiableError, match=f":{line}:.*{message}"):
        ad.gradient(f)(1.0)


def arrays_from_lists(a, b):
    v = np.array([a * b, 2.0, b])
    m = np.array([[a, b], [b * b, a]])
    counts = np.array([[1, 2], [3, 4]])  # ints: no derivative, a float mean
    return np.sum(v * v) + np.sum(m @ m) + np.sum(np.mean(counts, axis=0) * a)


def test_np_array_of_a_list():
    check_grads(arrays_from_lists, 0.7, -1.3, seed=3)


# ---- fuzzer round 3, findings 12, 13 and 15 -------------------------------------------------
def empty_list_summed(x):
    c = []
    s = 0.0
    for w in c:  # never runs (and is not written: Numba cannot index an empty tuple)
        s += w
    return x + sum(c) + np.sum(c) + s


def numpy_reductions_of_a_display(x):
    b = [x, 2.0 * x]
    return np.mean(b) + np.sum(b) * np.max(b) + np.sum((x, 3.0)) + np.linalg.norm(b)


def display_in_an_item_write(v, x):
    y = np.zeros(3)
    y[np.array([0, 2])] = v[np.array([0, 2])] * x
    y[1] = np.sum(np.array([x, 2.0]))
    return np.sum(y * y)


def display_bound_to_a_written_array(x):
    y = np.array([x, 2.0 * x])
    y[0] = x * x
    return np.sum(y * y)


@pytest.mark.parametrize("f, args", [
    (empty_list_summed, (0.5,)),
    (numpy_reductions_of_a_display, (0.5,)),
    (display_in_an_item_write, (np.array([1.0, -2.0, 3.0]), 0.5)),
    (display_bound_to_a_written_array, (0.7,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_displays_numpy_converts(f, args):
    check_grads(f, *args, seed=3)
