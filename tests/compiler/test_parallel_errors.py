"""Errors in parallel (``prange``) loops are never lost, and an iteration that builds
an array read in an inner loop gets its gradient (issue 34, item 5).

Numba loses an exception raised in one of its threads: the thread stops its share of
the iterations and the function returns what the others computed (or a
``SystemError``).  Every parallel loop the compiler writes sets a flag per iteration
(forward) or chunk (pullback) as its last statement; ``rt.check_finished`` raises
after the loop when one is unset, and the compiled callable runs the Python path
again, which raises the real error at the user's line (``ParallelLoopWarning`` says
why).  Each error test runs on both paths and would fail without the check: the
compiled path returned garbage (a gradient of 1e19, all zeros) instead of raising.

The programs below build an array in each iteration and read it in an inner loop.
Numba's parallel array analysis takes a loop-carried array's shape from its
definition before the loop; a cotangent made full inside the inner loop (from an
empty placeholder) then failed Numba's size assertion in a thread (an all-zero
gradient, or ``SystemError``).  An iteration's own arrays now get full cotangents
when the iteration starts.  Their gradients are checked against finite differences
on both paths, with the warning an error: the compiled code itself must be right.
"""

import warnings

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def squares_of_scaled_rows(v, data):
    total = 0.0
    for i in numba.prange(data.shape[0]):
        tmp = v * data[i]
        s = 0.0
        for j in range(tmp.shape[0]):
            s += tmp[j] * tmp[j]
        total += s
    return total


def segment_energies(scale, values, starts):
    total = 0.0
    for i in numba.prange(starts.shape[0] - 1):
        segment = values[starts[i]:starts[i + 1]] * scale[0]
        energy = 0.0
        for j in range(segment.shape[0]):
            energy += segment[j] * segment[j]
        total += energy
    return total


def outer_products(weights, points):
    total = 0.0
    for i in numba.prange(points.shape[0]):
        outer = np.outer(points[i], weights)
        for a in range(outer.shape[0]):
            for b in range(outer.shape[1]):
                total += outer[a, b] ** 2
    return total


def weighted_exponentials(theta, data):
    total = 0.0
    for i in numba.prange(data.shape[0]):
        logits = theta * data[i]
        rates = np.exp(logits)
        s = 0.0
        for j in range(logits.shape[0]):
            s += logits[j] * rates[j]
        total += s
    return total


def smoothed_then_parallel(theta, data):
    smooth = np.zeros(theta.shape[0])
    for k in range(3):
        smooth = smooth + theta * k
    total = 0.0
    for i in numba.prange(data.shape[0]):
        row = smooth * data[i]
        for j in range(row.shape[0]):
            total += row[j] * theta[j]
    return total


def _rng():
    return np.random.default_rng(34)


PROGRAMS = {
    "squares_of_scaled_rows": (squares_of_scaled_rows,
                               lambda r: (r.normal(size=4), r.normal(size=(6, 4)))),
    "segment_energies": (segment_energies, lambda r: (
        r.normal(size=1), r.normal(size=10), np.array([0, 3, 3, 7, 10]))),
    "outer_products": (outer_products, lambda r: (r.normal(size=3), r.normal(size=(5, 2)))),
    "weighted_exponentials": (weighted_exponentials,
                              lambda r: (r.normal(size=4), r.normal(size=(6, 4)) * 0.3)),
    "smoothed_then_parallel": (smoothed_then_parallel,
                               lambda r: (r.normal(size=4), r.normal(size=(6, 4)))),
}
COMPILED_BY_DEFAULT = {"squares_of_scaled_rows", "segment_energies"}  # the rest: slow tier


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in COMPILED_BY_DEFAULT
                                               else pytest.mark.slow) for n in PROGRAMS])
def test_an_iteration_building_an_array_read_in_an_inner_loop_has_its_gradient(name):
    fn, make = PROGRAMS[name]
    args = make(_rng())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ParallelLoopWarning)  # no rerun on Python
        check_grads(fn, *args, parallel=True)
    compiled = ad.differentiable(fn, parallel=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ParallelLoopWarning)
        value, grads = ad.value_and_gradient(compiled)(*args)
    assert compiled.status[f"{fn.__name__}_value_and_grad"][0] == "numba"
    python = ad.value_and_gradient(ad.differentiable(fn, jit=False, parallel=True))(*args)
    np.testing.assert_allclose(value, python[0], rtol=1e-12)
    for mine, theirs in zip(grads, python[1], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)


def rows_against_weights(weights, data):
    total = 0.0
    for i in numba.prange(data.shape[0]):
        r = data[i] * weights  # rows of another length: a ValueError
        total += np.sum(r * r)
    return total


def sizes_along(scale, data, axes):
    total = 0.0
    for i in numba.prange(axes.shape[0]):
        total += scale * data.shape[axes[i]]  # an axis out of range: an IndexError
    return total


def shifted_products(signal, lag):
    total = 0.0
    for i in numba.prange(signal.shape[0]):
        total += signal[i] * signal[lag + i]  # past the end for the last iterations
    return total


ERRORS = {
    "value_error": (rows_against_weights, lambda: (np.ones(3), np.ones((8, 4))),
                    ValueError, "broadcast"),
    "index_error": (sizes_along, lambda: (1.5, np.ones((2, 3)), np.array([0, 1, 2, 0])),
                    IndexError, "out of range"),
    # the bounds check of an item read (compiler/bounds_checks.py), raised in a thread
    "item_out_of_bounds": (shifted_products, lambda: (np.ones(4), 2), IndexError,
                           r"test_parallel_errors.py:\d+:\d+: index 4 is out of bounds for "
                           r"axis 0 with size 4 \(in shifted_products\)"),
}


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("entry", ["call", "value_and_gradient"])
@pytest.mark.parametrize("error", list(ERRORS))
def test_an_error_in_a_prange_body_reaches_the_user(error, entry, jit):
    fn, make, kind, text = ERRORS[error]
    f = ad.differentiable(fn, wrt=fn.__code__.co_varnames[0], jit=jit, parallel=True)
    run = f if entry == "call" else ad.value_and_gradient(f)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(kind, match=text):
            run(*make())
    reruns = [w for w in seen if issubclass(w.category, ad.ParallelLoopWarning)]
    if jit:  # Numba ran it, lost the error, and the Python path raised it
        assert f.status[next(iter(f.status))][0] == "numba"
        assert len(reruns) == 1
        message = str(reruns[0].message)
        assert message.startswith(f"{fn.__name__}: a parallel loop did not finish")
        assert reruns[0].filename == __file__
    else:
        assert not reruns


def test_every_parallel_loop_checks_that_it_finished():
    fn, make = PROGRAMS["squares_of_scaled_rows"]
    args = make(_rng())
    df = ad.differentiable(fn, parallel=True)
    for stage in ("forward", "pullback"):
        text = ad.source(df, *args, stage=stage)
        assert text.count("rt.prange(") == text.count("rt.check_finished(") == 1, stage
