"""What the forward sweep saves for the pullback (compiler/reverse/saving.py): arrays
computed in a loop are copied into one block per loop and read back as views; an
operand that broadcasting's adjoint needs only for its shape keeps only its
dimensions; a value is saved once per block. Each shape of loop (range, nested,
while), each dtype and each size pattern is checked against finite differences on
both paths."""

import math

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


def rod_energy(temperature, conductivity, steps):
    rod = temperature.copy()
    for _ in range(steps):
        rod[1:-1] = rod[1:-1] + conductivity * (rod[2:] - 2 * rod[1:-1] + rod[:-2])
    return np.sum(rod * rod)


def growing_prefix(signal, rate):
    total = 0.0
    for i in range(1, signal.shape[0]):
        head = np.sin(signal[:i] * rate)  # a different length on every iteration
        total = total + np.sum(head * head)
    return total


def until_small(weights, shrink):
    level = weights * 1.0
    total = 0.0
    while np.sum(level * level) > 0.05:  # no trip count: the block grows
        level = np.tanh(level) * shrink
        total = total + np.sum(np.exp(level))
    return total


def nested_planes(grid, gain):
    total = 0.0
    for row in range(grid.shape[0]):
        for col in range(grid.shape[1]):
            patch = np.cos(grid[row] * gain + col)  # 1-d, in the inner loop
            total = total + np.sum(patch * grid[row])
    return total


def masked_matrix_steps(field, bias):
    state = field * 1.0
    for _ in range(3):
        mask = state > 0.0  # a boolean array saved for the pullback
        state = np.where(mask, state * bias, np.sin(state)) @ field
    return np.sum(state)


def broadcast_rows(table, weights, steps):
    acc = table * 0.0
    for _ in range(steps):
        acc = acc + np.tanh(table * weights)  # weights (n,) against table (m, n)
    return np.sum(acc * acc)


def reread_after_write(values, scale):
    buffer = np.zeros(values.shape[0])
    total = 0.0
    for i in range(values.shape[0]):
        total = total + np.sum(np.sin(buffer * scale))  # saved here...
        buffer[i] = values[i] * scale
        total = total + np.sum(np.cos(buffer))  # ...and saved again: it changed
    return total


RNG = np.random.default_rng(5)
CASES = {
    "rod_energy": (rod_energy, (np.sin(np.linspace(0.0, 3.0, 12)), 0.2, 6)),
    "growing_prefix": (growing_prefix, (RNG.standard_normal(7), 0.7)),
    "until_small": (until_small, (RNG.standard_normal(5), 0.8)),
    "nested_planes": (nested_planes, (RNG.standard_normal((3, 4)), 0.6)),
    "masked_matrix_steps": (masked_matrix_steps, (0.5 * RNG.standard_normal((3, 3)), 0.9)),
    "reread_after_write": (reread_after_write, (RNG.standard_normal(4), 0.7)),
    "broadcast_rows": (broadcast_rows, (RNG.standard_normal((3, 4)), RNG.standard_normal(4),
                                        4)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_through_arrays_saved_in_loops(name):
    fn, args = CASES[name]
    check_grads(fn, *args)


def test_a_loops_arrays_go_to_one_block_and_shapes_alone_stay_numbers():
    source = ad.source(rod_energy, *CASES["rod_energy"][1], stage="fused")
    assert "List()" not in source  # no typed list of arrays
    assert source.count("np.empty(0, np.float64)") == 1  # one block for the loop
    # the one array the adjoints read (the sum scaled by conductivity) and the
    # overwritten slice; the adjoints of +, - and 2 * need shapes only
    assert source.count("rt.block_push(") == 2
    assert "rt.accumulate_to_shape(" in source and "rt.unbroadcast(" not in source


def test_an_operands_dimensions_are_saved_once_per_value():
    source = ad.source(broadcast_rows, *CASES["broadcast_rows"][1], stage="fused")
    # table is read by name (never rebound); acc is rebound each step: its
    # dimensions are saved once per version, not once per statement reading them
    assert source.count("acc_dim0 = acc.shape[0]") == 1


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_second_pullback_call_reads_the_same_blocks(jit):
    """The pullback reads blocks through views and restores overwritten slices from
    them: it must leave them as the forward filled them."""
    temperature, conductivity, steps = CASES["rod_energy"][1]
    _, pullback = ad.value_with_pullback(ad.differentiable(rod_energy, jit=jit),
                                         temperature.copy(), conductivity, steps)
    first, second = pullback(1.0), pullback(1.0)
    assert np.array_equal(first[0], second[0]) and first[1] == second[1]
    assert np.abs(first[0]).max() > 0.0


# ---- a statement that overwrites an operand its adjoint reads beside the result --------
def radius_rebound(angle, radius):
    radius = math.hypot(angle, radius)  # d/dradius reads the old radius and the new one
    return 2.0 * radius


def power_rebound(exponent, base):
    base = base ** exponent
    return base * exponent


def spread_rebound(shift, widths):
    widths = np.hypot(shift, widths)
    return np.sum(widths * widths)


def angle_rebound(north, east):
    east = math.atan2(north, east) + math.hypot(east, north)
    return east * north


@pytest.mark.parametrize("fn, args", [
    (radius_rebound, (0.566731, 1.268511)),
    (radius_rebound, (0.566731, -1.268511)),
    (power_rebound, (0.7, 1.3)),
    (spread_rebound, (0.4, np.array([0.5, -1.5, 2.0]))),
    (angle_rebound, (0.3, -0.8)),
], ids=["hypot", "hypot-negative", "pow", "np.hypot", "atan2-hypot"])
def test_an_operand_overwritten_by_the_result_is_saved_before_it(fn, args):
    # the fuzzer's forward mode found hypot's d/dy read the new y for the old one
    check_grads(fn, *args)


def idle_branches(gain, level):
    if gain > 0:
        pass
    else:
        level = level * 2.0
    for _ in range(2):
        pass
    while False:
        pass
    return gain * level


@pytest.mark.parametrize("gain", [1.0, -1.0])
def test_a_branch_or_loop_left_empty_still_makes_a_block(gain):
    # `if x: pass` printed `if x:` and nothing after it (an IndentationError when loaded)
    check_grads(idle_branches, gain, 2.0)
    _, tangent = ad.jvp(idle_branches, (gain, 2.0), (1.0, 0.0))
    assert tangent == pytest.approx(2.0 if gain > 0 else 4.0)


# ---- a helper's residuals that are the caller's unchanging arguments -------------------
def damped_force(pos, vel, stiffness, damping, hardness):
    return -stiffness * pos - damping * vel - hardness * pos * pos * pos


def damped_path(stiffness, damping, hardness, steps):
    pos, vel, cost = 1.0, 0.0, 0.0
    for _ in range(steps):
        accel = damped_force(pos, vel, stiffness, damping, hardness)
        pos = pos + 0.01 * vel
        vel = vel + 0.01 * accel
        cost = cost + pos * pos
    return cost


def weighted_misfit(weights, data):
    return np.sum(np.sin(weights * data))


def misfits_over_rows(weights, samples, rounds):
    total = 0.0
    for r in range(rounds):
        total = total + weighted_misfit(weights, samples) * (r + 1.0)
    return total


def misfits_after_writes(weights, samples, rounds):
    scratch = samples * 1.0
    total = 0.0
    for r in range(rounds):
        total = total + weighted_misfit(weights, scratch)
        scratch[r % scratch.shape[0]] = weights[0] * r  # the argument changes in place
    return total


def misfits_of_rebound(weights, samples, rounds):
    current = samples
    total = 0.0
    for _ in range(rounds):
        total = total + weighted_misfit(weights, current)
        current = np.cos(current)  # a new array each iteration: saved each iteration
    return total


SAMPLES = RNG.standard_normal(6)
PASSED = {
    "numbers": (damped_path, (1.3, 0.2, 0.5, 40)),
    "arrays": (misfits_over_rows, (RNG.standard_normal(6), SAMPLES, 4)),
    "written in place": (misfits_after_writes, (RNG.standard_normal(6), SAMPLES, 9)),
    "rebound": (misfits_of_rebound, (RNG.standard_normal(6), SAMPLES, 4)),
}


@pytest.mark.parametrize("name, jit", [
    (name, jit) if not jit or name in ("numbers", "written in place")
    else pytest.param(name, jit, marks=pytest.mark.slow)  # a compile each: the slow tier
    for name in PASSED for jit in (False, True)])
def test_a_helpers_residuals_that_are_its_arguments(name, jit):
    fn, args = PASSED[name]
    check_grads(ad.differentiable(fn, jit=jit), *args)


def test_arguments_unchanged_in_a_loop_are_not_taped_for_a_helper():
    source = ad.source(damped_path, *PASSED["numbers"][1], stage="forward")
    # the helper keeps its parameters: -stiffness and the products of hardness and
    # pos are recomputed by its pullback (recompute.py), not saved.  The caller's
    # stiffness, damping and hardness never change, so its pullback reads them by
    # name; pos and vel go on tapes
    assert source.count("np.empty(trip_count, np.float64)") == 2 + 1  # and pos, for cost
    assert "(cost, (stiffness, pos_tape, damping, vel_tape, hardness, " in source
    # the helper keeps weights, data and two arrays it computes: only the computed
    # ones are copied into the loop's block, weights and samples are read by name
    rows = ad.source(misfits_over_rows, *PASSED["arrays"][1], stage="forward")
    assert rows.count("rt.block_push(") == 2
    assert "(total, (weights, samples, tape_block" in rows
    rebound = ad.source(misfits_of_rebound, *PASSED["rebound"][1], stage="forward")
    assert rebound.count("rt.block_push(") == 3  # and current, once for both reads


def rows_read_whole_and_by_item(table):
    total = 0.0
    for row in table:
        total += np.sum(row * row) * row[0]
    return total


def test_an_arrays_shape_is_read_from_its_copy_in_the_block():
    # row[0]'s adjoint needs row's shape: it reads row's copy in the loop's block
    # (a typed list of rows beside it kept every row twice, and forward mode over the
    # gradient code could not go through the list)
    table = RNG.standard_normal((3, 4))
    source = ad.source(rows_read_whole_and_by_item, table, stage="fused")
    assert "List()" not in source and source.count("rt.block_push(") == 2
    check_grads(rows_read_whole_and_by_item, table)
