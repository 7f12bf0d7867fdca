"""The steady-state call of ``ad.hvp`` (``s2s_ad.hvp_plan``): after one validated call,
later calls like it run a generated plan that skips binding, preparing and checking;
every change the full path would notice (a redefined helper, a rebound global, other
argument or global types, a tangent it would refuse) makes it miss, and the call takes
the full path (``higher_order._full_hvp``), which gives the same numbers and errors.

Each invalidation test calls twice first (the second call runs the plan), changes one
thing, and checks the result and that the full path ran again.
"""

from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest
from test_forward_fast_path import _space

import s2s_ad as ad
from s2s_ad import higher_order
from s2s_ad.higher_order import value_gradient_and_hvp
from s2s_ad.testing import directional_difference

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
LINK_WEIGHTS = np.array([1.0, 0.5, 2.0, 0.25])  # a global array: the gradient code takes it


@pytest.fixture
def full_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions whose hvp took the full path, in order."""
    seen: list[str] = []
    full = higher_order._full_hvp

    def counting(df, primals, tangents):
        seen.append(df.__name__)
        return full(df, primals, tangents)

    monkeypatch.setattr(higher_order, "_full_hvp", counting)
    return seen


def well(stretch):
    return stretch * stretch * stretch * stretch


def chain_energy(positions, stiffness, rest, count):
    energy = 0.0
    for i in range(count):
        stretch = positions[i + 1] - positions[i] - rest
        energy += LINK_WEIGHTS[i] * (stiffness * stretch * stretch + well(stretch))
    return energy


POINTS = np.array([0.0, 1.3, 2.1, 3.6, 4.2])
MOVE = np.array([0.5, -1.0, 0.25, 2.0, -0.75])


def _difference(df, args: tuple, direction: dict) -> np.ndarray:
    """``H v`` by central differences of the gradient (flattened) along ``direction``."""
    gradient = ad.gradient(df)

    def flat(*values):
        parts = gradient(*values)
        parts = parts if isinstance(parts, tuple) else (parts,)
        return np.concatenate([np.ravel(p) for p in parts])

    return directional_difference(flat, args, direction, 1e-5)[0]


def _flat(parts) -> np.ndarray:
    parts = parts if isinstance(parts, tuple) else (parts,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _same(result, expected) -> None:
    """Two ``(value, gradient, product)`` triples equal to 1e-12."""
    for got, want in zip(result, expected, strict=True):
        np.testing.assert_allclose(_flat(got), _flat(want), rtol=1e-12, atol=1e-12)


@PATHS
def test_steady_hvp_calls_skip_the_full_path_and_agree_with_it(full_paths, jit):
    energy = ad.differentiable(chain_energy, jit=jit)
    args = (POINTS, 1.5, 0.9, 4)
    first = value_gradient_and_hvp(energy, args, (MOVE, 0.3, -0.2, None))
    assert full_paths == ["chain_energy"]
    for tangents in [(MOVE, 0.3, -0.2, None), (MOVE, 0.3, -0.2, 0), [MOVE, 0.3, -0.2, 0.0],
                     (list(MOVE), np.float64(0.3), -0.2, None)]:  # converted as the full path
        _same(value_gradient_and_hvp(energy, args, tangents), first)
        _same(value_gradient_and_hvp(energy, list(args), tangents), first)
    assert full_paths == ["chain_energy"]
    _same(higher_order._full_hvp(energy, args, (MOVE, 0.3, -0.2, None)), first)
    assert first[0] == pytest.approx(chain_energy(*args), rel=1e-14)
    expected = _difference(energy, args, {0: MOVE, 1: 0.3, 2: -0.2})
    np.testing.assert_allclose(_flat(first[2]), expected, rtol=1e-6, atol=1e-6)


@PATHS
def test_a_partial_hvp_carries_zero_tangents_for_the_other_floats(full_paths, jit):
    """wrt="positions": the gradient code still differentiates stiffness, rest and the
    global array; the plan passes their zero tangents as the full path does."""
    energy = ad.differentiable(chain_energy, wrt=["positions"], jit=jit)
    whole = ad.differentiable(chain_energy, jit=jit)
    args = (POINTS, 1.5, 0.9, 4)
    expected = value_gradient_and_hvp(whole, args, (MOVE, None, None, None))
    for tangents in [(MOVE, None, None, None), (MOVE, 0, 0.0, None), (MOVE, None, None, None)]:
        value, gradient, product = value_gradient_and_hvp(energy, args, tangents)
        _same((value, gradient, product), (expected[0], expected[1][0], expected[2][0]))
    assert full_paths == ["chain_energy", "chain_energy"]
    with pytest.raises(ad.ArgumentError, match="'stiffness' of chain_energy is not differ"):
        ad.hvp(energy, args, (MOVE, 0.5, None, None))


@PATHS
def test_argument_changes_take_the_full_path_of_hvp(full_paths, jit):
    """dtype, layout and a scalar type: each validated once (its plan made), each right."""
    energy = ad.differentiable(chain_energy, jit=jit)
    calls = [(POINTS, 1.5), (POINTS.astype(np.float32), 1.5),
             (np.repeat(POINTS, 2)[::2], 1.5), (POINTS, np.float64(1.5))]
    for positions, stiffness in calls:
        args = (positions, stiffness, 0.9, 4)
        results = [ad.hvp(energy, args, (MOVE, 0.3, None, None)) for _ in range(2)]
        _same(results[0], results[1])
        tolerance = 1e-4 if positions.dtype == np.float32 else 1e-6
        as64 = (positions.astype(np.float64), float(stiffness), 0.9, 4)
        np.testing.assert_allclose(_flat(results[0]), _difference(energy, as64, {0: MOVE, 1: 0.3}),
                                   rtol=tolerance, atol=tolerance)
    assert full_paths == ["chain_energy"] * len(calls)


@PATHS
def test_a_redefined_helper_and_a_rebound_global_are_seen_by_hvp(tmp_path, full_paths, jit):
    space = _space(tmp_path, """
        def squash(v):
            return v * v * v

        gain = 2.0

        def energy(v):
            return gain * squash(v) + v
    """)
    energy = ad.differentiable(space["energy"], jit=jit)
    assert ad.hvp(energy, (3.0,), (1.0,)) == ad.hvp(energy, (3.0,), (1.0,)) == 36.0  # 2 * 6v
    assert full_paths == ["energy"]
    _space(tmp_path, "gain = 3.0", space)  # a global number: read at every call
    assert ad.hvp(energy, (3.0,), (1.0,)) == pytest.approx(54.0)
    assert full_paths == ["energy"]
    _space(tmp_path, """
        def squash(v):
            return v * v * v * v
    """, space)
    assert ad.hvp(energy, (3.0,), (1.0,)) == ad.hvp(energy, (3.0,), (1.0,)) == 324.0  # 3 * 12v^2
    assert full_paths == ["energy"] * 2
    _space(tmp_path, "gain = np.float32(0.5)", space)  # a global of another type
    assert ad.hvp(energy, (3.0,), (2.0,)) == pytest.approx(2.0 * 0.5 * 108.0)
    assert full_paths == ["energy"] * 3
    _space(tmp_path, "squash = math.sin", space)  # a global function rebound
    assert ad.hvp(energy, (3.0,), (1.0,)) == pytest.approx(-0.5 * math.sin(3.0))
    assert full_paths == ["energy"] * 4


def _message(call) -> str:
    with pytest.raises(ad.ArgumentError) as info:
        call()
    return str(info.value)


@PATHS
def test_bad_tangents_get_the_full_paths_errors_after_the_plan_is_made(full_paths, jit):
    args = (POINTS, 1.5, 0.9, 4)
    bad = [(np.ones(3), 0.3, None, None), (1.0, 0.3, None, None), (MOVE, 0.3, None, 1),
           (MOVE, np.ones(2), None, None), (MOVE, 0.3, None)]
    fresh = [_message(lambda t=t: ad.hvp(ad.differentiable(chain_energy, jit=jit), args, t))
             for t in bad]  # the full path of a function never called
    energy = ad.differentiable(chain_energy, jit=jit)
    ad.hvp(energy, args, (MOVE, 0.3, None, None))
    ad.hvp(energy, args, (MOVE, 0.3, None, None))
    assert [_message(lambda t=t: ad.hvp(energy, args, t)) for t in bad] == fresh
    assert "the tangent of argument 'positions' of chain_energy has shape (3,)" in fresh[0]
    assert "'count' of chain_energy is not differentiated" in fresh[2]
    assert "must be a number" in fresh[3] and "3 tangents" in fresh[4]


def log_energy(x):
    return math.log(x) * x


@PATHS
def test_an_error_in_the_steady_hvp_is_noted_as_on_the_full_path(jit):
    notes = []
    for steady in (False, True):
        df = ad.differentiable(log_energy, jit=jit)
        if steady:
            assert ad.hvp(df, (2.0,), (1.0,)) == ad.hvp(df, (2.0,), (1.0,)) == 0.5
        with pytest.raises(ValueError) as info:
            ad.hvp(df, (-1.0,), (1.0,))
        notes.append(info.value.__notes__)
    assert notes[0] == notes[1] and notes[0]


def test_the_plan_does_not_keep_the_function_alive():
    def spring(x):
        return x ** 4

    energy = ad.differentiable(spring, jit=False)
    assert ad.hvp(energy, (1.0,), (1.0,)) == ad.hvp(energy, (1.0,), (1.0,)) == 12.0
    held = weakref.ref(energy)
    del energy
    gc.collect()
    assert held() is None


def test_the_gradient_code_compiles_as_the_function_asks(monkeypatch: pytest.MonkeyPatch):
    """The same function with and without Numba shares its gradient code; an hvp of the
    compiled one after one of the other still runs the gradient code with Numba."""
    asked = []
    make = higher_order.differentiable

    def recording(fn, *, jit):
        asked.append(jit)
        return make(fn, jit=jit)

    monkeypatch.setattr(higher_order, "differentiable", recording)

    def quartic(w):
        return w ** 4 + w

    for jit in (False, True, False):
        assert ad.hvp(ad.differentiable(quartic, jit=jit), (2.0,), (1.0,)) == 48.0
    assert asked == [False, True]
