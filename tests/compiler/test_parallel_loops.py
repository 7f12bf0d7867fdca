"""Parallel (``prange``) loops with ``parallel=True`` (compiler/independence.py and
compiler/reverse/parallel.py).

Each program of ``parallel_programs`` (sums over points, per-observation helpers on
gathered rows, pairwise energies with ``i < j`` as a parallel outer loop, rows
written at the loop's index, a strided loop) is checked:

* Python path, parallel: against finite differences and the dot-product identity;
* against the serial gradient (``parallel=False``) to 1e-12 relative: the only
  difference is the order the iterations' terms are added in;
* Numba, parallel: against the Python path to 1e-12.  Both add the chunks' sums in
  the same order (one chunk per thread, the same chunks on both paths), so only
  the forward sweep's sum (Numba's parallel reduction) is added in another order.

Dependent iterations are refused at their line, with the reason.
"""

import math
import re

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads
from tests.compiler import parallel_programs

PROGRAMS = parallel_programs.programs(np.random.default_rng(7))
NAMES = [p[0] for p in PROGRAMS]
COMPILED_BY_DEFAULT = {"normal_loglik"}  # the rest: slow tier


def _close(a, b, rtol=1e-12):
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,),
                    strict=True):
        u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
        assert u.shape == v.shape
        scale = max(1.0, float(np.max(np.abs(v))) if v.size else 1.0)
        assert np.max(np.abs(u - v), initial=0.0) <= rtol * scale, (u, v)


@pytest.mark.parametrize("name", NAMES)
def test_parallel_gradient_is_right_on_the_python_path(name):
    _, fn, args = PROGRAMS[NAMES.index(name)]
    check_grads(fn, *args, paths=("python",), parallel=True)
    serial = ad.value_and_gradient(ad.differentiable(fn, jit=False))(*args)
    parallel = ad.value_and_gradient(ad.differentiable(fn, jit=False, parallel=True))(*args)
    _close(parallel[0], serial[0])
    _close(parallel[1], serial[1])


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in COMPILED_BY_DEFAULT
                                               else pytest.mark.slow) for n in NAMES])
def test_numba_runs_the_loops_in_parallel_with_the_python_paths_numbers(name):
    _, fn, args = PROGRAMS[NAMES.index(name)]
    compiled = ad.differentiable(fn, jit=True, parallel=True)
    value, grads = ad.value_and_gradient(compiled)(*args)
    assert compiled.status[f"{fn.__name__}_value_and_grad"][0] == "numba"
    python = ad.value_and_gradient(ad.differentiable(fn, jit=False, parallel=True))(*args)
    _close(value, python[0])
    _close(grads, python[1])
    source = ad.source(compiled, *args)
    assert "rt.prange(" in source and "rt.chunk_count(" in source


def test_the_generated_pullback_reads_as_the_docstring_says():
    _, fn, args = PROGRAMS[NAMES.index("normal_loglik")]
    text = ad.source(ad.differentiable(fn, parallel=True), *args, stage="pullback")
    assert "# adjoint of the parallel loop of line" in text
    assert "d_mu_parts = np.zeros(chunks)" in text  # one sum per chunk for a shared number
    assert "d_mu_parts[chunk] = d_mu_chunk" in text  # once per chunk
    assert "d_total_here = d_total" in text  # the sum's cotangent, read by every iteration
    assert "total = total +" not in text.split("adjoint of the parallel loop")[1]
    # its iterations' numbers (the helper's residuals) are taped at the iteration's index
    assert "each reading its values from tapes" in text
    # with an inner loop, the pullback recomputes each iteration instead
    _, fn, args = PROGRAMS[NAMES.index("gmm_loglik")]
    text = ad.source(ad.differentiable(fn, parallel=True), *args, stage="pullback")
    assert "each recomputing its values" in text


def test_user_names_like_the_generated_ones_are_not_captured():
    # gmm_loglik's loop variable is `chunk`, its locals `trips` and `parts`, its inner `k`
    _, fn, args = PROGRAMS[NAMES.index("gmm_loglik")]
    text = ad.source(ad.differentiable(fn, parallel=True), *args, stage="pullback")
    chunk, chunks = re.search(r"for (\w+) in rt\.prange\((\w+)\):", text).groups()
    trips = re.search(r"(\w+) = len\(range\(points_shape_0\)\)", text).group(1)
    assert chunk != "chunk" and trips != "trips" and chunks not in ("chunk", "trips", "k")
    assert re.search(rf"for (\w+) in range\({chunk}, {trips}, {chunks}\):", text).group(1) != "k"


def test_parallel_false_runs_a_prange_loop_as_a_range_loop():
    _, fn, args = PROGRAMS[NAMES.index("normal_loglik")]
    text = ad.source(ad.differentiable(fn), *args)
    assert "prange" not in text.replace("numba.prange(", "")
    _close(ad.gradient(fn)(*args),
           ad.gradient(ad.differentiable(fn, jit=False, parallel=True))(*args))


def test_entry_points_take_parallel():
    _, fn, args = PROGRAMS[NAMES.index("normal_loglik")]
    python = ad.differentiable(fn, jit=False)  # the entry points keep its jit=False
    expected = ad.gradient(python)(*args)
    _close(ad.gradient(python, parallel=True)(*args), expected)
    _close(ad.value_and_gradient(python, wrt=(0, 1), parallel=True)(*args)[1], expected[:2])
    parallel_mu = ad.differentiable(fn, wrt="mu", jit=False, parallel=True)
    _close(ad.gradient(parallel_mu)(*args), expected[0])
    assert "rt.prange(" in ad.source(parallel_mu, *args)
    value, pullback = ad.value_with_pullback(python, *args, parallel=True)
    _close(pullback(1.0), expected)
    _close(ad.pullback(python, *args, wrt="mu", parallel=True)(2.0), 2.0 * expected[0])


def test_forward_mode_and_second_derivatives_of_a_parallel_function_run_serially():
    _, fn, args = PROGRAMS[NAMES.index("normal_loglik")]
    serial = ad.differentiable(fn, wrt=(0, 1), jit=False)
    parallel = ad.differentiable(fn, wrt=(0, 1), jit=False, parallel=True)
    direction = (1.0, -0.5, None)
    _close(ad.jvp(parallel, args, direction), ad.jvp(serial, args, direction))
    _close(ad.hvp(parallel, args, direction), ad.hvp(serial, args, direction))
    python = ad.differentiable(fn, jit=False)
    for mode in ("forward", "reverse"):
        _close(ad.jacobian(python, wrt=(0, 1), mode=mode, parallel=True)(*args),
               ad.jacobian(serial, mode=mode)(*args))


def test_the_thread_count_changes_only_the_order_of_the_sums():
    _, fn, args = PROGRAMS[NAMES.index("pair_energy")]
    g = ad.value_and_gradient(ad.differentiable(fn, jit=False, parallel=True))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = g(*args)
    finally:
        numba.set_num_threads(before)
    _close(g(*args)[1], one[1])


# ---- refusals: iterations that are not independent ----------------------------------------
def carries_a_number(x):
    prev = 0.0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += prev * x[i]
        prev = x[i]
    return total


def writes_another_item(x):
    out = np.zeros(x.shape[0] + 1)
    for i in numba.prange(x.shape[0]):
        out[i + 1] = x[i] * 2.0
    return np.sum(out)


def reads_what_it_writes(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * 2.0
        if i > 0:
            out[i] = out[i] + out[i - 1]
    return np.sum(out)


def reads_a_private_after(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        last = x[i] * x[i]
        total += last
    return total + last


def multiplies(x):
    product = 1.0
    for i in numba.prange(x.shape[0]):
        product = product * x[i]
    return product


def breaks(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        if x[i] > 1.0:
            break
        total += x[i]
    return total


def nested_in_a_time_loop(x):
    total = 0.0
    for step in range(3):
        for i in numba.prange(x.shape[0]):
            total += math.sin(x[i] * step)
    return total


def sums_an_array(x):
    acc = np.zeros(2)
    for i in numba.prange(x.shape[0]):
        acc = acc + x[i]
    return np.sum(acc)


def written_before(x):
    out = x * 2.0
    first = np.sum(out)
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * x[i]
    return first + np.sum(out)


REFUSED = [
    (carries_a_number, "'prev' is read before this iteration binds it", 4),
    (writes_another_item, "writes an item of 'out' that another iteration may", 3),
    (reads_what_it_writes, "writes items of 'out' and reads it", 2),
    (reads_a_private_after, "'last' is bound in every iteration and read after the loop", 2),
    (multiplies, "'product' is read before this iteration binds it", 3),
    (breaks, "break or return cannot leave a parallel loop", 2),
    (nested_in_a_time_loop, "inside another loop or a branch cannot run in parallel", 3),
    (sums_an_array, "'acc' is summed over the iterations but is a", 2),
    (written_before, "the loop writes items of 'out', which is read before it", 3),
]


@pytest.mark.parametrize("fn, message, offset", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_dependent_iterations_are_refused_at_their_line(fn, message, offset):
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(ad.differentiable(fn, jit=False, parallel=True))(x)
    text = str(info.value)
    assert message in text
    assert f"{__file__}:{fn.__code__.co_firstlineno + offset}:" in text
    ad.gradient(ad.differentiable(fn, jit=False))(x)  # serially it differentiates


# ---- errors in an iteration ----------------------------------------------------------------
@pytest.mark.parametrize("jit", [False, True])
def test_a_domain_error_in_an_iteration_raises_at_the_users_line(jit):
    # Numba loses an exception raised in a parallel loop's thread (its results are then
    # garbage): parallel modules and their callees compile without raising, and a
    # result that is not finite is computed again on the Python path, which raises
    _, fn, args = PROGRAMS[NAMES.index("normal_loglik")]
    g = ad.value_and_gradient(ad.differentiable(fn, jit=jit, parallel=True))
    g(*args)
    with pytest.raises(ValueError, match="math domain error") as info:
        g(args[0], -1.0, args[2])  # log(sigma) in the helper the loop calls
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "parallel_programs.py:" in note and "math.log(sigma)" in note


# ---- found by tests/fuzz/parallel_fuzz.py ---------------------------------------------------
def rebinds_the_index(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        value = x[i] * x[i]
        i = 0
        out[i] = value
    return np.sum(out * out)


def test_a_write_at_the_index_after_the_index_is_rebound_is_refused():
    # out[i] with i = 0: every iteration writes item 0, which the last one keeps; it was
    # accepted as a write at the loop's index (a wrong gradient on the Python path, a race
    # with Numba)
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(ad.NonDifferentiableError, match="rebinds the loop's index 'i'") as info:
        ad.gradient(ad.differentiable(rebinds_the_index, jit=False, parallel=True))(x)
    assert f"{__file__}:{rebinds_the_index.__code__.co_firstlineno + 5}:" in str(info.value)
    check_grads(rebinds_the_index, x, paths=("python",))  # serially it differentiates


def two_loops_over_i(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i])
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += out[(i + 1) % x.shape[0]] * x[i]
    for i in range(2):
        total = total * x[i]
    return total


def test_a_later_loop_over_the_same_name_does_not_read_the_index():
    # each later loop binds i before reading it: the prange loops' i was taken for a value
    # read after them, and both were refused
    x = np.linspace(0.1, 0.9, 5)
    check_grads(two_loops_over_i, x, paths=("python",), parallel=True)
    _close(ad.gradient(ad.differentiable(two_loops_over_i, jit=False, parallel=True))(x),
           ad.gradient(two_loops_over_i)(x))


def writes_through_an_alias(x):
    shifted = np.zeros(x.shape[0])
    out = shifted
    for i in numba.prange(1, x.shape[0]):
        out[i] = x[i] * shifted[i - 1]
    return np.sum(out)


def test_a_write_into_memory_another_name_reads_is_refused():
    # out and shifted are one array: iteration i writes the item iteration i + 1 reads
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(ad.NonDifferentiableError, match="may share memory with 'shifted'"):
        ad.gradient(ad.differentiable(writes_through_an_alias, jit=False, parallel=True))(x)


def masked_in_a_branch(scale, weights):
    total = 0.0
    for _repeat in numba.prange(2):
        kept = 0.0
        if scale <= 1.5:
            big = weights[weights >= 0.5] * scale
            kept = np.sum(big) * big.shape[0]
        total += kept
    return total


def test_boolean_masks_in_a_parallel_loop_are_refused():
    # Numba 0.68 (parallel=True) reads 0 for a shape bound after a masked read in a
    # branch of a prange body (the pullback saves such shapes): found by the parallel
    # fuzzer, seed 12; refused rather than risk a wrong gradient
    weights = np.array([0.2, 0.7, 0.9])
    with pytest.raises(ad.NonDifferentiableError, match="boolean mask indexes an array") as e:
        ad.gradient(ad.differentiable(masked_in_a_branch, jit=False, parallel=True))(
            1.0, weights)
    assert e.value.location.lineno == masked_in_a_branch.__code__.co_firstlineno + 5
    serial = ad.gradient(ad.differentiable(masked_in_a_branch, jit=False))(1.0, weights)
    assert serial[0] == pytest.approx(2 * 2 * (0.7 + 0.9))
