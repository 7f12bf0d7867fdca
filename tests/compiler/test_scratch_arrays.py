"""Scratch arrays: an array allocated again on each pass of a loop (or bound twice)
and written item by item.  Both paths, against finite differences and the
dot-product identity."""

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def rows_in_a_scratch_array(x, k):
    total = 0.0
    for i in range(3):
        tmp = np.zeros(k)
        for j in range(k):
            tmp[j] = x[j] * (i + 1.0)
        total = total + np.sum(tmp * tmp) * x[i]
    return total


def read_between_writes(a, g):
    acc = 0.0
    for i in range(a.shape[0]):
        work = np.ones(3)
        work[0] = a[i] * g
        first = np.sum(np.sin(work))  # reads the array before the next write
        work[1] = work[0] * a[i]
        work[2] = first
        acc = acc + np.sum(work * work)
    return acc


def two_dimensional_scratch(z):
    out = 0.0
    for i in range(2):
        block = np.zeros((2, 3))
        block[i, :] = z * (i + 1.0)
        block[:, 0] = block[i, 1] * z[2]
        out = out + np.sum(np.tanh(block))
    return out


def scratch_in_a_while_loop(x):
    n = 0
    s = 0.0
    while n < 3:
        buf = np.empty(2)
        buf[0] = x * n
        buf[1] = buf[0] * x
        s = s + buf[0] * buf[1]
        n += 1
    return s


def bound_twice_at_the_top(x):
    v = np.zeros(2)
    v[0] = x * x
    first = np.sum(v)
    v = np.zeros(2)
    v[1] = x * 3.0
    return first * np.sum(v)


@pytest.mark.parametrize("f, args", [
    (rows_in_a_scratch_array, (np.array([1.0, -2.0, 0.5]), 3)),
    (read_between_writes, (np.array([0.3, -0.8, 1.1]), 0.7)),
    (two_dimensional_scratch, (np.array([0.4, -0.2, 0.9]),)),
    (scratch_in_a_while_loop, (0.6,)),
    (bound_twice_at_the_top, (1.3,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_scratch_arrays(f, args):
    check_grads(f, *args, seed=11)


def view_of_a_scratch_array(x):
    s = 0.0
    for i in range(2):
        tmp = np.zeros(3)
        head = tmp[:2]
        tmp[0] = x * i
        s = s + np.sum(head)
    return s


def test_a_view_of_a_scratch_array_is_refused_at_the_write():
    with pytest.raises(ad.NonDifferentiableError, match="'head' views or aliases"):
        ad.gradient(view_of_a_scratch_array)(0.5)
