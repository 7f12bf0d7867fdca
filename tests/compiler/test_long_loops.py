"""Long loops: a million-iteration while loop through Numba, and loop tapes sized
as SPEC section 8 promises (preallocated to the trip count of a range loop,
growing by doubling for a while loop).
"""

import math
import re
import time

import numpy as np
import pytest

import s2s_ad as ad

MILLION = 1_000_000


def compound(x, n):
    s = 1.0
    i = 0
    while i < n:
        s = s * (1.0 + x * 1e-6)
        i += 1
    return s


def geometric_climb(x):
    s = 1.0
    while s < 3.0:
        s = s * (1.0 + x)
    return s


def stepped_product(x, start, stop, step):
    s = 1.0
    for i in range(start, stop, step):
        s = s * math.sin(x + i)
    return s


def climb_trip_count(x: float) -> int:
    """How many times geometric_climb's loop runs, counted in plain Python."""
    s, k = 1.0, 0
    while s < 3.0:
        s, k = s * (1.0 + x), k + 1
    return k


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def test_a_million_iteration_while_loop_runs_compiled_and_is_exact():
    # s = (1 + x/1e6) ** n, so ds/dx = n * 1e-6 * (1 + x/1e6) ** (n - 1); at
    # n = 1e6 this is s / (1 + x/1e6), close to e at x = 1.
    df = ad.differentiable(compound, jit=True)
    x, n = 1.0, MILLION
    assert ad.explain(df, x, n).path == "numba"  # compiles, outside the timing
    (value, grad), seconds = timed(ad.value_and_gradient(df), x, n)
    expected_value = (1.0 + x * 1e-6) ** n
    assert value == pytest.approx(expected_value, rel=1e-9)
    assert grad == pytest.approx(n * 1e-6 * (1.0 + x * 1e-6) ** (n - 1), rel=1e-9)
    assert value == pytest.approx(compound(x, n), rel=1e-12)
    assert seconds < 10.0


def test_a_while_loop_whose_trip_count_depends_on_x():
    # The loop runs k(x) times, k ~ log(3) / log(1 + x) ~ 1e6 at x = 1.1e-6, and
    # s = (1 + x) ** k.  k is piecewise constant in x, so ds/dx = k (1 + x) ** (k - 1).
    x = 1.1e-6
    k = climb_trip_count(x)
    assert 900_000 < k < 1_100_000
    df = ad.differentiable(geometric_climb, jit=True)
    assert ad.explain(df, x).path == "numba"
    (value, grad), seconds = timed(ad.value_and_gradient(df), x)
    assert value == geometric_climb(x)
    assert grad == pytest.approx(k * (1.0 + x) ** (k - 1), rel=1e-8)
    assert seconds < 10.0


def test_compiled_and_python_while_loops_agree_to_rounding():
    x = 1e-3  # about a thousand iterations: many doublings of the tape
    compiled = ad.value_and_gradient(ad.differentiable(geometric_climb, jit=True))(x)
    python = ad.value_and_gradient(ad.differentiable(geometric_climb, jit=False))(x)
    k = climb_trip_count(x)
    assert python[1] == pytest.approx(k * (1.0 + x) ** (k - 1), rel=1e-10)
    assert compiled[0] == pytest.approx(python[0], rel=1e-14)
    assert compiled[1] == pytest.approx(python[1], rel=1e-12)


# --- tape sizes ----------------------------------------------------------------------


def generated_module(fn, *args) -> dict:
    """The printed module of ``fn``, executed: its functions, callable by name."""
    namespace: dict = {}
    exec(compile(ad.source(fn, *args, stage="module"), "<generated>", "exec"), namespace)
    return namespace


def tapes_of(residuals: tuple) -> list[np.ndarray]:
    return [r for r in residuals if isinstance(r, np.ndarray)]


def test_range_loop_forward_sizes_its_tapes_from_the_trip_count():
    forward = ad.source(stepped_product, 0.3, 2, 11, 3, stage="forward")
    assert "trip_count = len(range(start, stop, step))" in forward
    # s and sin(x + i) are taped; the loop variable i is recomputed as start + k * step
    assert len(re.findall(r"_tape = np\.empty\(trip_count, ", forward)) == 2
    assert "rt.grow" not in forward


@pytest.mark.parametrize(
    ("start", "stop", "step"), [(2, 11, 3), (10, 0, -3), (0, 1, 1), (5, 5, 1), (7, 3, 1)]
)
def test_range_loop_tapes_hold_exactly_the_trip_count(start, stop, step):
    trips = len(range(start, stop, step))
    forward = generated_module(stepped_product, 0.3, start, stop, step)["stepped_product_forward"]
    value, residuals = forward(0.3, start, stop, step)
    assert value == stepped_product(0.3, start, stop, step)
    tapes = tapes_of(residuals)
    assert len(tapes) == 2  # s and sin(x + i); i is recomputed
    assert all(t.shape == (trips,) for t in tapes)


@pytest.mark.parametrize(("start", "stop", "step"), [(2, 11, 3), (10, 0, -3), (5, 5, 1)])
def test_range_loop_gradient_with_any_step(start, stop, step):
    # s = prod sin(x + i) over the range: ds/dx = sum_i cos(x + i) * prod_{j != i} sin(x + j)
    x = 0.3
    points = list(range(start, stop, step))
    expected = sum(
        math.cos(x + i) * math.prod(math.sin(x + j) for j in points if j != i) for i in points
    )
    grad = ad.gradient(ad.differentiable(stepped_product, jit=False))(x, start, stop, step)
    assert grad == pytest.approx(expected, rel=1e-13, abs=1e-15)


def test_while_loop_tape_grows_by_half_when_full():
    x = 1e-2  # 111 iterations
    k = climb_trip_count(x)
    forward = generated_module(geometric_climb, x)["geometric_climb_forward"]
    _, residuals = forward(x)
    tapes = tapes_of(residuals)
    assert tapes, residuals
    sizes = [8]  # room for 8 values, then half as much again each time it is full
    while sizes[-1] < k:
        sizes.append(sizes[-1] + sizes[-1] // 2)
    for tape in tapes:
        assert tape.shape[0] == sizes[-1]  # grown only when full
        assert k <= tape.shape[0] <= 1.5 * k
