"""``ad.explain(f, *args, memory=True)``: the bytes a forward run keeps for the
pullback, and the bytes of them the pullback reads.

Each expected figure is derived here from what the generated code must keep:
one float64 per iteration for a value a reverse loop needs, 8 bytes per scalar,
nothing for an argument array kept by reference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.tape_memory import TapeMemory, read_bytes, residual_bytes


@pytest.fixture(params=[pytest.param(False, id="python"), pytest.param(True, id="numba")])
def jit(request):
    return request.param


def sines(x, n):
    for _ in range(n):
        x = math.sin(x)
    return x


def sines_while(x, m):
    i = 0
    while i < m:
        x = math.sin(x)
        i += 1
    return x


def stencil(x, lam):
    e = 0.0
    for i in range(1, x.shape[0] - 1):
        d2 = x[i - 1] - 2.0 * x[i] + x[i + 1]
        e += lam * d2 * d2
    return e


def memory(f, *args, jit=False):
    return ad.explain(ad.differentiable(f, jit=jit), *args, memory=True).memory


def test_a_loop_that_tapes_one_float_per_iteration_keeps_8_bytes_per_iteration(jit):
    """sin needs its argument in the pullback: one float64 per iteration, plus a
    few scalars (the loop's counters) that do not grow with n."""
    small, large = memory(sines, 0.5, 100, jit=jit), memory(sines, 0.5, 1000, jit=jit)
    assert large.residual - small.residual == 8 * 900
    constant = small.residual - 8 * 100
    assert 0 <= constant <= 4 * 8, small
    assert small.read == small.residual and small.ratio == 1.0   # a range tape is exact
    assert small.arguments == 0


def test_a_growable_tape_keeps_its_spare_room_which_the_pullback_does_not_read(jit):
    """A while loop's tape starts with room for 8 values and grows by half when
    full: after 9 iterations it has room for 12, and the pullback reads 9 of
    them (8 bytes each, plus the same scalars as after 8 iterations)."""
    eight, nine = memory(sines_while, 0.5, 8, jit=jit), memory(sines_while, 0.5, 9, jit=jit)
    assert eight.residual == eight.read
    assert nine.read - eight.read == 8
    assert nine.residual - eight.residual == 8 * (12 - 8)


def test_growable_tapes_keep_at_most_half_again_what_the_pullback_reads(jit):
    for m in (9, 13, 100, 1000, 1025):
        kept = memory(sines_while, 0.5, m, jit=jit)
        assert kept.ratio <= 1.5, (m, kept)


def test_argument_arrays_kept_by_reference_are_reported_apart(jit):
    """The stencil reads x[i] again in the pullback from x itself: nothing is taped,
    and x is kept by reference, not copied."""
    x = np.linspace(0.0, 1.0, 1000)
    kept = memory(stencil, x, 0.5, jit=jit)
    assert kept.arguments == x.nbytes
    assert kept.residual < 64
    assert kept.read == kept.residual


def test_explain_does_not_change_the_callers_arrays():
    def doubles_in_place(x):
        for i in range(x.shape[0]):
            x[i] = 2.0 * x[i]
        return np.sum(x * x)

    x = np.ones(5)
    kept = memory(doubles_in_place, x)
    np.testing.assert_array_equal(x, np.ones(5))
    assert kept.residual >= 8 * 5   # the overwritten items are kept for the pullback


def test_without_memory_explain_runs_nothing():
    calls = []

    def noisy(x):
        calls.append(1)
        return x * x

    explanation = ad.explain(ad.differentiable(noisy, jit=False), 2.0)
    assert explanation.memory is None and calls == []


def test_read_bytes_counts_each_item_read_once_and_every_item_of_a_whole_array_use():
    tape, whole = np.arange(10.0), np.ones(4)

    def pullback(residuals, d_value):
        tape, whole, k = residuals
        return d_value * (tape[k] + tape[k] + tape[k + 1] + np.sum(whole))

    residuals = (tape, whole, 3)
    assert residual_bytes(residuals, arguments=()) == 8 * 10 + 8 * 4 + 8
    assert read_bytes(pullback, residuals, 1.0, arguments=()) == 8 * 2 + 8 * 4 + 8
    assert read_bytes(pullback, residuals, 1.0, arguments=(whole,)) == 8 * 2 + 8


def test_read_bytes_sees_conversions_and_ignores_uses_of_the_shape_alone():
    """The generated pullback reaches NumPy through its module's ``np``: an
    ``np.asarray`` of a kept array reads it, ``np.zeros_like`` does not."""
    import types

    kept, shaped = np.ones(6), np.ones(5)
    scope = {"np": np}
    exec("def pullback(residuals, d_value):\n"
         "    kept, shaped = residuals\n"
         "    return np.asarray(kept).T * d_value, np.zeros_like(shaped), np.shape(shaped)\n",
         scope)
    pullback = scope["pullback"]
    assert isinstance(pullback, types.FunctionType)
    assert read_bytes(pullback, (kept, shaped), 1.0, arguments=()) == 8 * 6


def test_the_report_says_the_bytes_and_the_ratio():
    text = str(TapeMemory(residual=1600, arguments=800, read=800))
    assert text == ("tape: 1,600 bytes kept for the pullback (and 800 bytes of argument "
                    "arrays, by reference); the pullback reads 800 bytes of them (2.00x)")
