"""The steady-state call (s2s_ad.fast_path): after one validated call, ``gradient``,
``value_and_gradient`` and a ``differentiable`` object run a plan that skips the
full path; every change the full path would notice makes the plan miss, so the
next call validates again and gives what a fresh function would.

Each invalidation test calls twice first (the second call runs the plan), changes
one thing, and checks the result against the plain function's derivative and that
the full path ran again exactly once before the plan took over anew.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.api import DifferentiableFunction
from s2s_ad.testing import assert_vjp_matches_fd, check_grads

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


@pytest.fixture
def full_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roles of the calls that took the full path (``DifferentiableFunction.entry``)."""
    seen: list[str] = []
    entry = DifferentiableFunction.entry

    def counting(self, role, *args, **kwargs):
        seen.append(role)
        return entry(self, role, *args, **kwargs)

    monkeypatch.setattr(DifferentiableFunction, "entry", counting)
    return seen


def _space(tmp_path: Path, text: str, space: dict | None = None) -> dict:
    """Run ``text`` (a notebook cell, in its own file) in ``space``."""
    space = {"np": np, "math": math, "ad": ad, "__name__": "cells"} if space is None \
        else space
    path = tmp_path / f"cell{len(list(tmp_path.iterdir()))}.py"
    path.write_text(textwrap.dedent(text))
    exec(compile(path.read_text(), str(path), "exec"), space)
    return space


def softplus_energy(weights, scale):
    total = 0.0
    for i in range(weights.shape[0]):
        total += math.log1p(math.exp(scale * weights[i])) * (i + 1.0)
    return total


@PATHS
def test_steady_calls_skip_the_full_path(full_paths, jit):
    energy = ad.differentiable(softplus_energy, jit=jit)
    grad, vg = ad.gradient(energy), ad.value_and_gradient(energy)
    weights = np.linspace(-1.0, 1.0, 5)
    first = (energy(weights, 0.7), grad(weights, 0.7), vg(weights, 0.7))
    assert full_paths == ["primal", "fused", "fused"]
    for _ in range(3):
        value = energy(weights, 0.7)
        grads = grad(weights, 0.7)
        both = vg(weights, 0.7)
    assert full_paths == ["primal", "fused", "fused"]  # no more validation
    assert value == first[0] == both[0] == pytest.approx(softplus_energy(weights, 0.7))
    for got, want in zip((grads, both[1]), (first[1], first[2][1]), strict=True):
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
    assert type(grads[1]) is float and grads[0].dtype == np.float64
    check_grads(softplus_energy, weights, 0.7)


@PATHS
def test_a_redefined_helper_and_a_rebound_global_are_seen(tmp_path, full_paths, jit):
    space = _space(tmp_path, """
        def squash(v):
            return v * v

        gain = 2.0

        def energy(v):
            return gain * squash(v) + v
    """)
    grad = ad.gradient(ad.differentiable(space["energy"], jit=jit))
    assert grad(3.0) == grad(3.0) == pytest.approx(13.0)
    assert full_paths == ["fused"]
    _space(tmp_path, "gain = 3.0", space)  # a global number: read at every call
    assert grad(3.0) == pytest.approx(19.0)
    assert full_paths == ["fused"]
    _space(tmp_path, """
        def squash(v):
            return v * v * v
    """, space)
    assert grad(3.0) == grad(3.0) == pytest.approx(3.0 * 27.0 + 1.0)
    assert full_paths == ["fused", "fused"]
    _space(tmp_path, "gain = np.float32(0.5)", space)  # a global of another type
    assert grad(3.0) == grad(3.0) == pytest.approx(0.5 * 27.0 + 1.0)
    assert full_paths == ["fused", "fused", "fused"]
    _space(tmp_path, "squash = abs", space)  # a global function rebound
    assert grad(-3.0) == pytest.approx(-0.5 + 1.0)
    assert full_paths[-1] == "fused" and len(full_paths) == 4


def rough(v):
    return v * v


def with_rough(v):
    return rough(v) + v


def test_a_registration_since_the_last_call_is_used(full_paths):
    grad = ad.gradient(ad.differentiable(with_rough, jit=False))
    assert grad(3.0) == grad(3.0) == pytest.approx(7.0)

    @ad.derivative(of=rough)
    def rough_vjp(v):  # deliberately different: the registration must win
        return rough(v), lambda cot: 10.0 * cot

    assert grad(3.0) == grad(3.0) == pytest.approx(11.0)
    assert full_paths == ["fused", "fused"]


def weighted_norm(values, power):
    return np.sum(np.abs(values) ** power)


@PATHS
def test_argument_changes_take_the_full_path(full_paths, jit):
    """dtype, rank, layout, a float turned int and a scalar type: each its own plan,
    whose gradient matches finite differences and has the argument's type."""
    grad = ad.gradient(ad.differentiable(weighted_norm, jit=jit))
    base = np.array([0.5, -1.5, 2.0, 0.25])
    calls = [
        (base, 3.0),
        (base.astype(np.float32), 3.0),  # dtype
        (base.reshape(2, 2), 3.0),  # rank
        (np.tile(base, 2)[::2], 3.0),  # layout: not contiguous
        (base, np.float64(3.0)),  # a NumPy scalar
    ]
    for args in calls:
        for _ in range(2):
            g = grad(*args)
        assert type(g[0]) is np.ndarray and g[0].dtype == args[0].dtype
        assert g[0].shape == args[0].shape and type(g[1]) is type(args[1])
        tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-6
        assert_vjp_matches_fd(weighted_norm, args, 1.0, g, rtol=tolerance)
    assert full_paths == ["fused"] * len(calls)
    with warnings.catch_warnings():  # warned once per transform (the other path's, too)
        warnings.simplefilter("ignore", ad.IntegerArgumentWarning)
        only_values = grad(base, 3)  # the int power is no longer differentiated
    np.testing.assert_allclose(only_values, 3.0 * np.abs(base) ** 2 * np.sign(base))
    assert grad(base, 3.0)[1] == pytest.approx(float(np.sum(np.abs(base) ** 3
                                                              * np.log(np.abs(base)))))


def test_keywords_and_defaults_take_the_full_path(full_paths):
    def shifted(x, shift=1.0):
        return (x - shift) ** 2

    df = ad.differentiable(shifted, jit=False)
    grad = ad.gradient(df)
    assert grad(3.0, 1.0) == grad(3.0, 1.0) == (4.0, -4.0)
    assert full_paths == ["fused"]
    assert grad(3.0) == 4.0 and grad(3.0, shift=2.0) == (2.0, -2.0)
    assert df(3.0) == df(x=3.0) == 4.0
    assert full_paths == ["fused", "fused", "fused", "primal", "primal"]
    with pytest.raises(TypeError, match="shifted"):
        grad(1.0, 2.0, 3.0)


def log_of(x):
    return math.log(x) * x


@PATHS
def test_an_error_in_the_steady_call_names_the_users_line(jit):
    df = ad.differentiable(log_of, jit=jit)
    grad = ad.gradient(df)
    assert grad(2.0) == grad(2.0) == pytest.approx(math.log(2.0) + 1.0)
    assert df(2.0) == df(2.0)
    for call in (grad, df):
        with pytest.raises(ValueError) as info:
            call(-1.0)
        assert any("test_fast_path.py" in note for note in info.value.__notes__)


def written_and_read(target, source):
    target[0] = source[0] * 2.0
    return np.sum(target * source[:2].sum())


@PATHS
def test_overlapping_arguments_are_refused_in_the_steady_call(jit):
    df = ad.differentiable(written_and_read, jit=jit)
    buffer = np.array([1.0, 2.0, 3.0])
    for call in (df, ad.gradient(df)):
        call(buffer.copy(), buffer.copy())
        call(buffer.copy(), buffer.copy())
        with pytest.raises(ad.ArgumentError, match="shares memory"):
            call(buffer, buffer[1:])


def test_the_int_argument_warning_points_at_the_users_call():
    """The full path sits one frame deeper than the entry point: the warning still
    names the line that called ``gradient(f)`` or ``value_and_gradient(f)``."""
    for transform in (ad.gradient, ad.value_and_gradient):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            transform(ad.differentiable(lambda rate, count: rate * count, jit=False))(2.0, 3)
        assert [w.filename for w in caught] == [__file__], transform
