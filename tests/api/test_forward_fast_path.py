"""The steady-state call of forward mode: after one validated call, ``ad.jvp`` runs a
plan (``fast_path.build_jvp_plan``) and ``ad.jacobian(mode="forward")`` one compiled
driver call (``s2s_ad.forward_columns``) that skip binding and preparing; every change
the full path would notice (a redefined helper, a rebound global, other argument or
global types) makes them miss, so the next call validates again.

Each invalidation test calls twice first (the second call runs the plan), changes one
thing, and checks the result and that the full path (``prepare``) ran again.
"""

from __future__ import annotations

import gc
import math
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import forward_mode
from s2s_ad.api import DifferentiableFunction
from s2s_ad.testing import directional_difference, partial_derivatives

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


@pytest.fixture
def preparations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions prepared (the full path), in order."""
    seen: list[str] = []
    prepare = DifferentiableFunction.prepare

    def counting(self, *args, **kwargs):
        seen.append(self.__name__)
        return prepare(self, *args, **kwargs)

    monkeypatch.setattr(DifferentiableFunction, "prepare", counting)
    return seen


def _space(tmp_path: Path, text: str, space: dict | None = None) -> dict:
    """Run ``text`` (a notebook cell, in its own file) in ``space``."""
    space = {"np": np, "math": math, "ad": ad, "__name__": "cells"} if space is None \
        else space
    path = tmp_path / f"cell{len(list(tmp_path.iterdir()))}.py"
    path.write_text(textwrap.dedent(text))
    exec(compile(path.read_text(), str(path), "exec"), space)
    return space


def damped_energy(weights, stiffness, steps):
    total = 0.0
    for i in range(steps):
        total += math.log1p(math.exp(stiffness * weights[i % weights.shape[0]])) / (i + 1.0)
    return total


def _expected(fn, args: tuple, direction: dict) -> float:
    return directional_difference(fn, args, direction, 1e-6)[0]


@PATHS
def test_steady_jvp_calls_skip_the_full_path(preparations, jit):
    energy = ad.differentiable(damped_energy, jit=jit)
    weights, direction = np.linspace(-1.0, 1.0, 4), np.array([0.5, -1.0, 0.25, 2.0])
    first = ad.jvp(energy, (weights, 0.7, 6), (direction, 0.3, None))
    assert preparations == ["damped_energy"]
    for tangents in [(direction, 0.3, None), (direction, 0.3, 0), (list(direction), 0.3, 0.0),
                     (direction, np.float64(0.3), None),  # converted as the full path does
                     [direction, 0.3, None]]:
        value, tangent = ad.jvp(energy, (weights, 0.7, 6), tangents)
        assert value == first[0] and tangent == pytest.approx(first[1], rel=1e-15)
    assert preparations == ["damped_energy"]
    generated = ad.jvp(energy, (a for a in (weights, 0.7, 6)), iter((direction, 0.3, None)))
    assert generated == pytest.approx(first, rel=1e-15)  # any iterable: the full path
    assert first[0] == damped_energy(weights, 0.7, 6)
    assert first[1] == pytest.approx(_expected(damped_energy, (weights, 0.7, 6),
                                               {0: direction, 1: 0.3}), rel=1e-7)


@PATHS
def test_bad_tangents_are_refused_after_the_plan_is_made(jit):
    energy = ad.differentiable(damped_energy, jit=jit)
    weights = np.linspace(-1.0, 1.0, 4)
    ad.jvp(energy, (weights, 0.7, 6), (weights, 1.0, None))
    ad.jvp(energy, (weights, 0.7, 6), (weights, 1.0, None))
    with pytest.raises(ad.ArgumentError, match="tangent of argument 'weights'.*shape"):
        ad.jvp(energy, (weights, 0.7, 6), (np.ones(3), 1.0, None))
    with pytest.raises(ad.ArgumentError, match="'steps' of damped_energy is not differ"):
        ad.jvp(energy, (weights, 0.7, 6), (weights, 1.0, 1))
    with pytest.raises(ad.ArgumentError, match="2 tangents"):
        ad.jvp(energy, (weights, 0.7, 6), (weights, 1.0))


@PATHS
def test_a_redefined_helper_and_a_rebound_global_are_seen_by_jvp(tmp_path, preparations, jit):
    space = _space(tmp_path, """
        def squash(v):
            return v * v

        gain = 2.0

        def energy(v):
            return gain * squash(v) + v
    """)
    energy = ad.differentiable(space["energy"], jit=jit)
    assert ad.jvp(energy, (3.0,), (1.0,)) == ad.jvp(energy, (3.0,), (1.0,)) == (21.0, 13.0)
    assert preparations == ["energy"]
    _space(tmp_path, "gain = 3.0", space)  # a global number: read at every call
    assert ad.jvp(energy, (3.0,), (1.0,))[1] == pytest.approx(19.0)
    assert preparations == ["energy"]
    _space(tmp_path, """
        def squash(v):
            return v * v * v
    """, space)
    assert ad.jvp(energy, (3.0,), (1.0,))[1] == ad.jvp(energy, (3.0,), (1.0,))[1] == 82.0
    assert preparations == ["energy"] * 2
    _space(tmp_path, "gain = np.float32(0.5)", space)  # a global of another type
    assert ad.jvp(energy, (3.0,), (2.0,))[1] == pytest.approx(2.0 * (0.5 * 27.0 + 1.0))
    assert preparations == ["energy"] * 3
    _space(tmp_path, "squash = abs", space)  # a global function rebound
    assert ad.jvp(energy, (-3.0,), (1.0,))[1] == pytest.approx(-0.5 + 1.0)
    assert preparations == ["energy"] * 4


def rough(v):
    return v * v


def with_rough(v):
    return rough(v) + v


def test_a_differential_registered_since_the_last_jvp_is_used(preparations):
    assert ad.jvp(with_rough, (3.0,), (1.0,)) == ad.jvp(with_rough, (3.0,), (1.0,)) == (12.0, 7.0)

    @ad.derivative(of=rough)
    def rough_vjp(v):  # only a pullback: forward mode through it is refused, named
        return rough(v), lambda cot: 10.0 * cot

    with pytest.raises(ad.NonDifferentiableError, match="rough"):
        ad.jvp(with_rough, (3.0,), (1.0,))
    assert preparations == ["with_rough", "with_rough"]


def norm_power(values, power):
    return np.sum(np.abs(values) ** power)


@PATHS
def test_argument_changes_take_the_full_path_of_jvp(preparations, jit):
    """dtype, rank, layout and a scalar type: each validated once, each right."""
    norm = ad.differentiable(norm_power, jit=jit)
    base = np.array([0.5, -1.5, 2.0, 0.25])
    calls = [(base, 3.0), (base.astype(np.float32), 3.0), (base.reshape(2, 2), 3.0),
             (np.tile(base, 2)[::2], 3.0), (base, np.float64(3.0))]
    for args in calls:
        direction = np.linspace(1.0, -1.0, base.size).reshape(args[0].shape)
        for _ in range(2):
            value, tangent = ad.jvp(norm, args, (direction, 0.5))
        tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-7
        assert value == pytest.approx(norm_power(*args), rel=1e-6)
        assert tangent == pytest.approx(_expected(norm_power, args, {0: direction, 1: 0.5}),
                                        rel=tolerance)
    assert preparations == ["norm_power"] * len(calls)


def log_of(x):
    return math.log(x) * x


@PATHS
def test_an_error_in_the_steady_jvp_names_the_users_line(jit):
    df = ad.differentiable(log_of, jit=jit)
    assert ad.jvp(df, (2.0,), (1.0,)) == ad.jvp(df, (2.0,), (1.0,))
    with pytest.raises(ValueError) as info:
        ad.jvp(df, (-1.0,), (1.0,))
    assert any("test_forward_fast_path.py" in note for note in info.value.__notes__)


# ---- Jacobians: all columns in one compiled call -------------------------------------------
def lorenz96(state, forcing):
    n = state.shape[0]
    rate = np.empty(n)
    for i in range(n):
        rate[i] = (state[(i + 1) % n] - state[i - 2]) * state[i - 1] - state[i] + forcing
    return rate


def _fd_jacobian(fn, args, index):
    """The Jacobian's block of argument ``index``, row by row (s2s_ad.testing)."""
    shape = np.shape(fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args]))
    rows = [partial_derivatives(fn, args, index, cotangent=np.eye(int(np.prod(shape)))[i])[0]
            for i in range(int(np.prod(shape)))]
    return np.stack(rows).reshape(shape + np.shape(args[index]))


def test_a_forward_jacobian_is_one_driver_call(preparations, monkeypatch):
    """The first call builds its columns by jvp; the second compiles a driver, which
    the third runs alone: no preparing, no jvp."""
    state = np.linspace(-1.0, 2.0, 7)
    rhs = ad.differentiable(lorenz96, jit=True)
    jacobian = ad.jacobian(rhs, mode="forward")
    compiled: list[object] = []
    compile_driver = forward_mode.compiled_driver
    monkeypatch.setattr(forward_mode, "compiled_driver",
                        lambda *args: compiled.append(compile_driver(*args)) or compiled[-1])
    first = jacobian(state, 8.0)
    assert not compiled
    second = jacobian(state, 8.0)
    assert len(compiled) == 1 and compiled[0] is not None
    count = len(preparations)
    monkeypatch.setattr(forward_mode, "jvp", None)  # no column goes through jvp
    again = jacobian(state, 8.0)
    assert len(preparations) == count and len(compiled) == 1
    monkeypatch.setattr(forward_mode, "jvp", ad.jvp)
    for got, before, want in zip(again, second, first, strict=True):
        np.testing.assert_array_equal(got, before)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    blocks = ad.jacobian(rhs, mode="reverse")(state, 8.0)
    for index, (got, want) in enumerate(zip(first, blocks, strict=True)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(got, _fd_jacobian(lorenz96, (state, 8.0), index),
                                   rtol=1e-6, atol=1e-8)
    assert first[0].shape == (7, 7) and first[1].shape == (7,)
    automatic = ad.jacobian(rhs, wrt="state")  # 7 inputs, 7 outputs: forward mode
    for _ in range(2):
        np.testing.assert_allclose(automatic(state, 8.0), first[0], rtol=1e-15, atol=1e-15)
    count = len(preparations)
    np.testing.assert_array_equal(automatic(state, 8.0), again[0])
    assert len(preparations) == count  # the driver's transform, not prepared again


def test_the_driver_sees_a_redefined_helper_and_a_rebound_global(tmp_path, preparations):
    space = _space(tmp_path, """
        def bend(v):
            return v * v

        scale = 2.0

        def field(points, shift):
            out = np.empty(points.shape[0])
            for i in range(points.shape[0]):
                out[i] = scale * bend(points[i] - shift)
            return out
    """)
    jacobian = ad.jacobian(ad.differentiable(space["field"], jit=True), wrt="points",
                           mode="forward")
    points = np.array([1.0, 2.0, 4.0])
    for _ in range(2):  # the second call compiles the driver
        np.testing.assert_allclose(jacobian(points, 1.0), np.diag([0.0, 4.0, 12.0]))
    count = len(preparations)
    _space(tmp_path, "scale = 3.0", space)  # read at every call: no new driver
    np.testing.assert_allclose(jacobian(points, 1.0), np.diag([0.0, 6.0, 18.0]))
    assert len(preparations) == count
    _space(tmp_path, """
        def bend(v):
            return v * v * v
    """, space)
    for _ in range(2):  # jvp, then a new driver
        np.testing.assert_allclose(jacobian(points, 1.0), np.diag([0.0, 9.0, 81.0]))
    assert len(preparations) > count


def relax_in_place(profile, rate):
    for i in range(1, profile.shape[0]):
        profile[i] = profile[i] + rate * profile[i - 1] * profile[i - 1]
    return profile * 1.0


@PATHS
def test_a_jacobian_of_a_function_writing_into_its_argument(jit):
    """Every column starts from the caller's values, which stay as they were."""
    profile = np.array([0.5, 1.0, -0.5, 2.0])
    original = profile.copy()
    jacobian = ad.jacobian(ad.differentiable(relax_in_place, jit=jit), mode="forward")
    for _ in range(2):  # by jvp, then (Numba) by the driver
        blocks = jacobian(profile, 0.3)
        np.testing.assert_array_equal(profile, original)
        for index, block in enumerate(blocks):
            expected = _fd_jacobian(relax_in_place, (profile, 0.3), index)
            np.testing.assert_allclose(block, expected, rtol=1e-6, atol=1e-8)


def bent_sheet(grid, scale):
    return np.sin(grid) * scale + grid[::-1, :]


def test_a_driver_with_matrices_in_and_out(monkeypatch):
    """A (2, 3) argument and result: the driver's columns in C order of both."""
    grid = np.arange(6.0).reshape(2, 3) / 5.0
    jacobian = ad.jacobian(ad.differentiable(bent_sheet, jit=True), mode="forward")
    jacobian(grid, 1.5)
    first = jacobian(grid, 1.5)  # compiles the driver
    monkeypatch.setattr(forward_mode, "jvp", None)  # the third call: the driver alone
    again = jacobian(grid, 1.5)
    reverse = ad.jacobian(ad.differentiable(bent_sheet, jit=False), mode="reverse")(grid, 1.5)
    assert again[0].shape == (2, 3, 2, 3) and again[1].shape == (2, 3)
    for got, before, want in zip(again, first, reverse, strict=True):
        np.testing.assert_array_equal(got, before)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


@PATHS
def test_forward_mode_keeps_no_function_alive(jit):
    """What jvp and jacobian keep for a function (its plans, its drivers) goes with it."""
    rhs = ad.differentiable(lorenz96, jit=jit)
    state = np.linspace(-1.0, 2.0, 7)
    ad.jvp(rhs, (state, 8.0), (state, 1.0))
    ad.jvp(rhs, (state, 8.0), (state, 1.0))
    for _ in range(2):
        ad.jacobian(rhs, mode="forward")(state, 8.0)
    held = weakref.ref(rhs)
    del rhs
    gc.collect()
    assert held() is None
