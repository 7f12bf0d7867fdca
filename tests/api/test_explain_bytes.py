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


# -- what the tapes really hold: each memory block once and whole, typed lists' storage --


def test_views_keep_their_whole_base_once():
    """Three views of one array keep that array alive, once; a row of a matrix keeps
    the whole matrix (a tape of views of a buffer rewritten in place, as the heat
    equation's, is one buffer)."""
    buffer, matrix = np.zeros(100), np.zeros((50, 20))
    assert residual_bytes((buffer[1:], buffer[:-1], buffer[::2]), arguments=()) == 800
    assert residual_bytes((matrix[3],), arguments=()) == matrix.nbytes
    assert residual_bytes((matrix[3], buffer[1:]), arguments=(buffer,)) == matrix.nbytes


def test_a_typed_list_holds_its_item_structs_and_each_block_once():
    """A typed list of 1-d arrays stores a 7-word struct per item (meminfo, parent,
    size, itemsize, data, shape, strides) pointing to the blocks; the same block
    appended twice is held once."""
    from numba.typed import List

    rows, shared = List(), np.ones(10)
    for array in (shared, shared, np.ones(10)):
        rows.append(array)
    assert residual_bytes((rows,), arguments=()) == 3 * 7 * 8 + 2 * 80
    pairs = List()
    for k in range(4):
        pairs.append((np.full(5, k, dtype=float), 0.5 * k))
    # each item: the struct of its array and its float in a row; the floats are
    # not counted again as scalars
    assert residual_bytes((pairs,), arguments=()) == 4 * (7 * 8 + 8) + 4 * 40


def heat(u, k, steps):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def sines_tape(x, n):
    total = 0.0
    for i in range(n):
        x = math.sin(x) + 0.1 * x
        total += x * i
    return total


def bump(row, scale):
    shifted = np.sin(row * scale)
    return np.sum(shifted * shifted)


def per_row(rows, scale):
    total = 0.0
    for i in range(rows.shape[0]):
        total += bump(rows[i], scale)
    return total


def _in_use_bytes() -> int | None:
    """Bytes malloc has handed out and not taken back (glibc's mallinfo2)."""
    import ctypes

    fields = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
              "uordblks", "fordblks", "keepcost")

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in fields]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
    except (OSError, AttributeError):
        return None
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


TAPES = [
    pytest.param(heat, lambda: (np.sin(np.linspace(0.0, 3.0, 1000)), 0.2, 300),
                 id="a-loops-block-of-arrays"),
    pytest.param(sines_tape, lambda: (0.5, 200_000), id="preallocated-array"),
    pytest.param(per_row, lambda: (np.cos(np.arange(300 * 1000.0)).reshape(300, 1000), 0.7),
                 id="callee-residuals-per-row"),
]


@pytest.mark.slow  # ~20 s each: full garbage collections of a worker's heap
@pytest.mark.parametrize("f, make_args", TAPES)
def test_the_reported_bytes_are_what_the_tapes_hold(f, make_args, jit):
    """Against the process: malloc's bytes in use with the forward's residuals alive
    minus after they are dropped.  The report leaves out only the allocator's own
    bookkeeping (a header and alignment per block, ~0.1 KB)."""
    import gc

    if _in_use_bytes() is None:
        pytest.skip("needs glibc's mallinfo2")
    df = ad.differentiable(f, jit=jit)
    reported = ad.explain(df, *make_args(), memory=True).memory
    t = df.last
    args = make_args()
    forward = df.callable_for(t, t.generated.forward.name, args)
    gc.collect()
    residuals = forward(*args)[1]
    gc.collect()
    alive = _in_use_bytes()
    del residuals
    gc.collect()
    held = alive - _in_use_bytes()
    assert reported.residual > 1_000_000
    assert held == pytest.approx(reported.residual, rel=0.03), (held, reported)
