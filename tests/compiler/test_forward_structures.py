"""Forward mode through structures (issue 24, SPEC section 10): ``ad.jvp`` takes a
structure of tangents for a structure argument (a dataclass, dict or named tuple of
the same kind; ``None`` for zero) and returns a structure of tangents for a structure
result, as JAX does with pytrees. Each tangent is checked against central finite
differences along the same direction, on both paths.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.boundary import leaves
from s2s_ad.errors import ArgumentError
from s2s_ad.testing.differences import central_difference

PATHS = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


@dataclass(frozen=True)
class Layer:
    weight: np.ndarray
    bias: np.ndarray
    activation: Any = ad.no_derivative(default=np.tanh)

    def __call__(self, inputs):
        return self.activation(inputs @ self.weight + self.bias)


class Orbit(NamedTuple):
    radius: float
    phase: float


@dataclass
class State:
    position: np.ndarray
    speed: float


def layer_energy(layer, inputs):
    return np.sum(layer(inputs) ** 2)


def orbit_point(orbit, scale):
    return np.array([orbit.radius * math.cos(orbit.phase),
                     orbit.radius * math.sin(orbit.phase)]) * scale


def step(state, dt):
    return State(state.position + dt * state.speed, state.speed * (1.0 - 0.1 * dt))


def mixture(weights, data):
    return weights["a"] * np.sum(data) + weights["b"] ** 2


def _flat(value) -> np.ndarray:
    parts = leaves(value) if dataclasses.is_dataclass(value) or isinstance(value, dict) \
        else (value,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _moved(value, direction, h):
    if value is None or direction is None:
        return value
    if isinstance(value, dict):
        return {k: _moved(v, direction[k], h) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_moved(v, d, h) for v, d in zip(value, direction, strict=True)))
    if dataclasses.is_dataclass(value):
        changed = {f.name: _moved(getattr(value, f.name), getattr(direction, f.name), h)
                   for f in dataclasses.fields(value) if f.init and
                   isinstance(getattr(value, f.name), float | np.ndarray)}
        return dataclasses.replace(value, **changed)
    return value + h * np.asarray(direction) if isinstance(value, np.ndarray) \
        else value + h * direction


def _check(fn, primals, tangents, jit):
    f = ad.differentiable(fn, jit=jit)
    value, tangent = ad.jvp(f, primals, tangents)
    assert type(tangent) is type(value)

    def along(t):
        return _flat(fn(*(_moved(p, d, t) for p, d in zip(primals, tangents, strict=True))))

    estimate, rounding = central_difference(along, 1e-6)
    np.testing.assert_allclose(_flat(tangent), estimate, rtol=1e-6,
                               atol=1e-8 + 10 * float(np.max(rounding)))
    return value, tangent


@pytest.mark.parametrize("jit", PATHS)
def test_a_dataclass_argument_takes_a_dataclass_of_tangents(jit):
    rng = np.random.default_rng(3)
    layer = Layer(rng.normal(size=(3, 2)), rng.normal(size=2))
    direction = Layer(rng.normal(size=(3, 2)), rng.normal(size=2))
    inputs = rng.normal(size=(4, 3))
    _check(layer_energy, (layer, inputs), (direction, None), jit)


@pytest.mark.parametrize("jit", PATHS)
def test_a_dataclass_result_gives_a_dataclass_of_tangents(jit):
    state = State(np.array([0.5, -1.0]), 2.0)
    _, tangent = _check(step, (state, 0.1), (State(np.array([1.0, 0.0]), 0.5), 0.0), jit)
    assert tangent.speed == pytest.approx(0.5 * (1.0 - 0.01), rel=1e-12)


def test_named_tuples_and_dicts_take_their_own_kind_of_tangent():
    _check(orbit_point, (Orbit(2.0, 0.3), 1.5), (Orbit(0.5, -1.0), 0.25), False)
    _check(mixture, ({"a": 1.5, "b": -0.5}, np.arange(3.0)), ({"a": 1.0, "b": 2.0}, None),
           False)


def test_none_is_a_zero_tangent_for_a_whole_structure():
    _, tangent = ad.jvp(orbit_point, (Orbit(2.0, 0.3), 1.5), (None, 1.0))
    np.testing.assert_allclose(tangent, orbit_point(Orbit(2.0, 0.3), 1.0), rtol=1e-15)


def test_a_tangent_of_another_kind_is_an_argument_error():
    with pytest.raises(ArgumentError, match="tangent of argument 'orbit'"):
        ad.jvp(orbit_point, (Orbit(2.0, 0.3), 1.5), ((0.5, 1.0), 0.0))


@dataclass
class Tempered:
    logits: np.ndarray
    temperature: float = ad.no_derivative(default=2.0)


def tempered_sum(model):
    return np.sum(np.exp(model.logits / model.temperature))


def test_a_field_marked_no_derivative_takes_only_a_zero_tangent():
    model = Tempered(np.array([0.5, -1.0]))
    value, tangent = ad.jvp(tempered_sum, (model,), (Tempered(np.array([1.0, 0.0]), 0.0),))
    assert tangent == pytest.approx(math.exp(0.25) / 2.0, rel=1e-14)
    with pytest.raises(ArgumentError, match="marked no_derivative"):
        ad.jvp(tempered_sum, (model,), (Tempered(np.array([1.0, 0.0]), 1.0),))


def test_a_jacobian_of_a_structure_argument_is_an_argument_error():
    with pytest.raises(ArgumentError, match="argument 'orbit' is a structure"):
        ad.jacobian(orbit_point)(Orbit(2.0, 0.3), 1.5)
