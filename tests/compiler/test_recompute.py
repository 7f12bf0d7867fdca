"""Values the pullback recomputes instead of taping (compiler/reverse/recompute.py),
and saves shared by several reads of one value.

Every program is checked on both paths against finite differences and the
dot-product identity; the structural tests read the generated source to show
what is recomputed, what is still taped, and that one value gets one tape.
"""

import math
import re

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


# ---- programs where recomputing would be wrong, or right only with care --------------------
def reads_last_iterations_value(x):
    # prev is read before it is bound in the iteration: its value comes from the
    # previous iteration (or before the loop), so it must be taped, not recomputed
    prev = 0.5
    s = 0.0
    for i in range(x.shape[0]):
        s += prev * x[i]
        prev = x[i] * 2.0
    return s + prev


def reads_a_written_array(x):
    # y's items change (written in the first loop, then overwritten): never recomputed
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * x[i]
        y[i] = 3.0 * s
    return s + np.sum(y * y)


def start_from_the_outer_loop(x, n):
    # the inner range starts at the outer loop variable and steps by 2
    s = 0.0
    for j in range(n):
        for i in range(j, x.shape[0], 2):
            s += x[i] * x[j] * (i - j)
    return s


def counts_down(x):
    s = 0.0
    for i in range(x.shape[0] - 1, 0, -3):
        s += x[i] * x[i - 1] + math.sin(x[i])
    return s


def rebinds_its_loop_variable(x):
    s = 0.0
    for i in range(x.shape[0]):
        i = (i * 7) % x.shape[0]  # noqa: PLW2901 (the point of the test)
        s += x[i] * x[i]
    return s


def stops_early(x, limit):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - x[0]
        if s > limit:
            break
        s += d * d * x[i]
    return s


def while_with_items(x):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        v = x[i] * 1.5
        s += v * v
        i += 1
    return s


def user_names_like_generated_ones(x, k):
    # a user's k, k_re, i_re and position next to the reverse loop's own names
    k_re = 0.25
    position = 2.0
    s = 0.0
    for i in range(x.shape[0]):
        i_re = x[i] * k
        s += i_re * i_re * k_re + position * x[i]
    return s


def nested_reads_of_the_outer_value(a):
    s = 0.0
    for i in range(a.shape[0]):
        row_scale = a[i, 0] * 2.0
        for j in range(a.shape[1]):
            s += row_scale * a[i, j] * a[i, j]
    return s


def scratch_in_the_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        tmp = np.zeros(2)
        tmp[0] = x[i] * 2.0
        tmp[1] = tmp[0] * x[i]
        s += tmp[1] * x[i]
    return s


def halves_every_step(x):
    # 2 ** -i of ints is a float (Python's 0.5), but Numba's int power gives 0: the
    # recomputed weight must be computed as the forward sweep computes it
    s = 0.0
    for i in range(x.shape[0]):
        weight = 2 ** -i
        s += weight * x[i] * x[i]
    return s


def spring(pos, stiffness, hardness, steps):
    # numbers bound once at the top (a negation, an int power, a comparison, a cheap
    # call): the pullback recomputes them from the parameters
    pull = -stiffness
    halving = 2 ** -steps
    stiff = stiffness > 1.0
    size = abs(pull) * halving
    if stiff:
        return pull * pos + hardness * size * pos * pos
    return size * math.sin(pos) - hardness * pos


def springs_in_a_loop(pos, stiffness, hardness, steps):
    # the helper's recomputed numbers are not among the residuals its caller tapes
    total = 0.0
    for step in range(steps):
        total += spring(pos, stiffness, hardness, step + 1)
        pos = pos + 0.1 * total
    return total


def _vector(n: int = 9, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 1.5, n)


CASES = [
    (reads_last_iterations_value, (_vector(),)),
    (reads_a_written_array, (_vector(),)),
    (start_from_the_outer_loop, (_vector(), 4)),
    (counts_down, (_vector(11),)),
    (rebinds_its_loop_variable, (_vector(),)),
    (stops_early, (_vector(), 2.0)),
    (while_with_items, (_vector(),)),
    (user_names_like_generated_ones, (_vector(), 0.7)),
    (nested_reads_of_the_outer_value, (np.random.default_rng(2).uniform(0.5, 1.5, (4, 5)),)),
    (scratch_in_the_loop, (_vector(),)),
    (halves_every_step, (_vector(),)),
    (spring, (0.7, 1.3, 0.4, 3)),
    (spring, (0.7, 0.6, 0.4, 2)),
    (springs_in_a_loop, (0.7, 1.3, 0.4, 4)),
]


@pytest.mark.filterwarnings("ignore::s2s_ad.IntegerArgumentWarning")  # steps: an int
@pytest.mark.parametrize(("fn", "args"), CASES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_gradients_with_recomputed_values(fn, args):
    check_grads(fn, *args)


def test_top_level_numbers_are_recomputed_as_the_forward_computes_them():
    pullback = ad.source(spring, 0.7, 1.3, 0.4, 3, stage="pullback")
    unpacked = {name.strip() for name in pullback.splitlines()[1].split("=")[0].split(",")}
    assert {"stiffness", "steps"} <= unpacked
    assert not unpacked & {"pull", "neg_steps", "halving", "stiff"}
    assert "halving_re = rt.int_pow(2, neg_steps_re)" in pullback


# ---- what is recomputed, what is taped ---------------------------------------------------------
def stencil(x, lam):
    e = 0.0
    for i in range(1, x.shape[0] - 1):
        d2 = x[i - 1] - 2.0 * x[i] + x[i + 1]
        e += lam * d2 * d2 + math.exp(x[i])
    return e


def test_a_stencil_tapes_only_what_it_cannot_recompute():
    fused = ad.source(stencil, np.ones(6), 0.5, stage="fused")
    # i, its neighbours' items and d2 are recomputed; exp(x[i]) is a transcendental
    # value, taped once
    assert "i_re = 1 + k" in fused
    assert "d2_re = " in fused
    assert "i_tape" not in fused and "d2_tape" not in fused
    assert fused.count("np.empty(trip_count") == 1
    assert "exp_x_item" in fused and "_tape[position]" in fused


def test_a_value_read_twice_is_taped_once():
    def squares_of_sines(x):
        s = 0.0
        for i in range(x.shape[0]):
            v = math.sin(x[i])
            s = s + v * v * v
        return s
    fused = ad.source(squares_of_sines, np.ones(4), stage="fused")
    # v is read three times (twice by v * v, once by (v * v) * v): one tape
    assert re.findall(r"\bv_tape\w* = np\.empty", fused) == ["v_tape = np.empty"]
    check_grads(squares_of_sines, _vector())


def test_a_value_that_is_read_before_it_is_bound_is_still_taped():
    fused = ad.source(reads_last_iterations_value, np.ones(4), stage="fused")
    assert "prev_tape" in fused


def test_items_of_a_written_array_are_restored_not_recomputed():
    fused = ad.source(reads_a_written_array, np.ones(4), stage="fused")
    assert "y_item_re" not in fused and "y_overwritten" in fused


def scale_in_place(v):
    v[0] = v[0] * 2.0
    return 0.0


def calls_a_writer(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    scale_in_place(x)
    return s


def test_a_callee_that_writes_an_argument_is_refused():
    # so an array a recomputed item is read from can never change behind its back
    with pytest.raises(ad.NonDifferentiableError, match="writes into its argument"):
        ad.source(calls_a_writer, np.ones(3), stage="fused")


def test_the_stencil_keeps_one_tape():
    df = ad.differentiable(stencil, jit=False)
    ad.value_with_pullback(df, np.ones(100), 0.5)
    assert list(df.last.generated.tapes.values()) == ["preallocated"]


def writes_an_inactive_array_in_a_branch(x):
    # fuzzer seed 11, program 318: nothing to restore and nothing to differentiate
    # left the branch's adjoint with only its comment (an empty block)
    acc = np.ones(3) * 2.0
    if x > 0.0:
        acc[1] = 5.0
    return x * x + acc[0] + acc[1]


def test_a_branch_whose_only_write_needs_no_adjoint():
    check_grads(writes_an_inactive_array_in_a_branch, 0.5)
    check_grads(writes_an_inactive_array_in_a_branch, -0.5)
