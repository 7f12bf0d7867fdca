"""Differentiable structures (SPEC section 4): dataclasses, dicts, named tuples.

Every gradient is checked by ``check_grads`` (central finite differences, the
dot-product identity, and the Python and Numba paths agreeing), leaf by leaf.
Names are the ones users pick (``params``, ``layer``, ``self``, ``state``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads


@dataclass
class Point:
    x: float
    y: float

    def norm(self):
        return math.hypot(self.x, self.y)

    def scaled(self, factor):
        return Point(self.x * factor, self.y * factor)

    @property
    def area(self):
        return self.x * self.y


@dataclass(frozen=True)
class Affine:
    weight: np.ndarray
    bias: np.ndarray
    activation: Any = ad.no_derivative(default=np.tanh)
    name: str = ad.no_derivative(default="affine")

    def __call__(self, inputs):
        return self.activation(inputs @ self.weight + self.bias)


@dataclass
class Stack:
    first: Affine
    second: Affine
    temperature: float = ad.no_derivative(default=2.0)

    def __call__(self, inputs):
        return self.second(self.first(inputs)) / self.temperature


class Pair(NamedTuple):
    left: float
    right: np.ndarray


def relu(z):
    return np.maximum(z, 0.0)


def _stack(seed: int = 0) -> Stack:
    rng = np.random.default_rng(seed)
    return Stack(Affine(rng.normal(size=(3, 4)), rng.normal(size=4), relu),
                 Affine(rng.normal(size=(4, 2)), rng.normal(size=2)))


def test_the_spec_example_gives_a_point():
    grad = ad.gradient(lambda p: math.hypot(p.x, p.y))(Point(3.0, 4.0))
    assert grad == Point(x=0.6, y=0.8)  # x / r and y / r with r = 5


def test_attribute_reads_methods_properties_and_constructions():
    def energy(p, factor):
        q = p.scaled(factor)
        r = dataclasses.replace(q, y=q.y * 2.0)
        return r.norm() + p.area * factor

    check_grads(energy, Point(3.0, 4.0), 1.5)


def test_a_nested_model_with_static_and_cut_fields():
    def loss(model, inputs):
        return np.sum(model(inputs) ** 2)

    model, inputs = _stack(), np.random.default_rng(1).normal(size=(5, 3))
    check_grads(loss, model, inputs)
    grad = ad.gradient(loss, wrt="model")(model, inputs)
    assert type(grad) is Stack and type(grad.first) is Affine
    assert grad.first.activation is relu and grad.second.name == "affine"
    assert grad.temperature == 2.0  # a no_derivative field is copied, not differentiated
    assert grad.first.weight.shape == (3, 4)


def test_a_method_differentiated_with_respect_to_self_and_its_argument():
    layer = _stack().first
    check_grads(lambda layer, inputs: np.sum(layer(inputs)), layer,
                np.random.default_rng(2).normal(size=(2, 3)))


def test_a_dict_of_parameters():
    def predict(params, inputs):
        return np.sum(np.tanh(inputs @ params["w"] + params["b"]))

    rng = np.random.default_rng(3)
    params = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    check_grads(predict, params, rng.normal(size=(4, 3)))
    grad = ad.gradient(predict, wrt="params")(params, rng.normal(size=(4, 3)))
    assert list(grad) == ["w", "b"] and grad["w"].shape == (3, 2)


def test_a_dict_built_inside_the_function():
    def f(a, b):
        state = {"u": a, "v": b * 2.0}
        return state["u"] * state["v"]

    assert ad.gradient(f)(2.0, 3.0) == (6.0, 4.0)  # d(2ab)/da = 2b, d/db = 2a
    check_grads(f, 2.0, 3.0)


def test_a_named_tuple():
    check_grads(lambda pair: pair.left * np.sum(pair.right ** 2), Pair(1.5, np.arange(3.0)))
    grad = ad.gradient(lambda pair: pair.left * pair.right[1])(Pair(2.0, np.ones(2)))
    assert type(grad) is Pair


def test_a_structure_as_the_result():
    def moved(p, step):
        return Point(p.x + step, p.y * step)

    value, pullback = ad.value_with_pullback(moved, Point(1.0, 2.0), 3.0)
    assert value == Point(4.0, 6.0)
    d_point, d_step = pullback(Point(1.0, 1.0))
    assert d_point == Point(1.0, 3.0) and d_step == 1.0 + 2.0
    check_grads(moved, Point(1.0, 2.0), 3.0)


def test_structures_in_a_loop():
    def walk(p, n):
        total = 0.0
        for i in range(n):
            p = Point(p.y, p.x * 0.5 + i)
            total += p.norm()
        return total

    check_grads(walk, Point(1.0, 2.0), 4)


def test_float32_leaves_keep_their_dtype():
    params = {"w": np.ones(3, dtype=np.float32)}
    grad = ad.gradient(lambda params: np.sum(params["w"] * 2.0))(params)
    assert grad["w"].dtype == np.float32


def test_zero_tangent_and_move():
    model = _stack()
    zero = ad.zero_tangent(model)
    assert np.all(zero.first.weight == 0.0) and zero.first.activation is relu
    moved = ad.move(model, by=model, scale=-1.0)
    assert np.all(moved.second.bias == 0.0) and moved.temperature == 2.0
    with pytest.raises(ValueError, match="not shaped like"):
        ad.move(Point(1.0, 2.0), by={"x": 1.0})


def test_reading_a_missing_field_is_located():
    def bad(p):
        return p.z * 2.0

    with pytest.raises(ad.NonDifferentiableError, match="Point has no field 'z'") as info:
        ad.gradient(bad)(Point(1.0, 2.0))
    assert info.value.location.lineno == bad.__code__.co_firstlineno + 1


@dataclass
class Box:
    size: float
    T: float
    shape: np.ndarray

    def sum(self):
        return self.size + self.T + np.sum(self.shape)

    def copy(self):
        return Box(self.size * 2.0, self.T, self.shape)


def test_fields_and_methods_named_like_array_attributes_are_the_structures():
    def f(box):
        twin = box.copy()
        return box.size * box.T + twin.sum() + box.shape.sum() + np.sum(box.shape.T)

    box = Box(2.0, 3.0, np.arange(3.0))
    assert f(box) == ad.value_and_gradient(f)(box)[0] == 22.0
    # d/dsize = T + 2, d/dT = size + 1, d/dshape = 1 (twin.sum) + 1 + 1
    assert ad.gradient(f)(box).size == 5.0 and ad.gradient(f)(box).T == 3.0
    check_grads(f, box)


@dataclass
class Tape:
    residuals: float
    d_value: np.ndarray
    result: float = ad.no_derivative(default=0.5)


def test_names_the_generated_code_uses_are_the_users_own():
    def pullback(residuals, d_value):
        tape = Tape(residuals.residuals * d_value, residuals.d_value)
        return np.sum(tape.d_value * tape.residuals) + tape.result * residuals.result

    check_grads(pullback, Tape(1.5, np.arange(1.0, 4.0)), 0.7)


@dataclass
class Linear:
    weight: np.ndarray

    def __call__(self, inputs):
        return inputs @ self.weight


captured = Linear(np.ones((3, 2)))


def test_a_captured_structure_is_read_at_every_call():
    def f(inputs):
        return np.sum(captured(inputs) ** 2)

    global captured
    inputs = np.arange(3.0)
    # sum((x W)^2) has gradient 2 W (x W): with W = ones, x W = (3, 3) -> 12 each
    np.testing.assert_array_equal(ad.gradient(f)(inputs), [12.0, 12.0, 12.0])
    captured = Linear(2.0 * np.ones((3, 2)))  # x W = (6, 6) -> 2 * 2 * (6 + 6) = 48
    np.testing.assert_array_equal(ad.gradient(f)(inputs), [48.0, 48.0, 48.0])
    check_grads(f, inputs)


@dataclass
class Counted:
    value: float
    count: int
    active: bool = True


def test_int_and_bool_fields_are_carried_with_zero_cotangents():
    def f(c):
        return c.value * c.count if c.active else c.value

    grad = ad.gradient(f)(Counted(2.0, 3))
    assert grad == Counted(3.0, 0, False)  # d(value * count)/dvalue = count
    assert type(grad.count) is int and type(grad.active) is bool
    assert ad.gradient(f)(Counted(2.0, 3, False)).value == 1.0
    check_grads(f, Counted(2.0, 3))


def test_an_unbound_method_differentiated_with_respect_to_self():
    assert ad.gradient(Point.norm)(Point(3.0, 4.0)) == Point(0.6, 0.8)


@dataclass
class Listed:
    weights: list


def test_a_list_field_is_refused_at_its_read():
    def f(model, x):
        return x * model.weights[0]

    with pytest.raises(ad.NonDifferentiableError, match="'weights' of Listed holds a list"):
        ad.gradient(f, wrt="x")(Listed([1.0, 2.0]), 3.0)


@dataclass
class Tanh:
    weight: np.ndarray

    def __call__(self, inputs):
        return np.tanh(inputs @ self.weight)


@dataclass
class Sequence:
    layers: tuple

    def __call__(self, inputs):
        for layer in self.layers:
            inputs = layer(inputs)
        return inputs


def test_a_loop_over_a_tuple_of_layers():
    rng = np.random.default_rng(4)
    model = Sequence((Tanh(rng.normal(size=(3, 3))), Tanh(rng.normal(size=(3, 3)))))
    check_grads(lambda model, inputs: np.sum(model(inputs)), model, rng.normal(size=(2, 3)))


def test_nested_tuples_indexed_in_a_loop_add_item_by_item():
    # the cotangent of pairs[i] used to be joined onto the tuple (t + v) instead of
    # added into its item, so d/d(pairs) came back zero: a silent wrong gradient
    def f(pairs, n):
        total = 0.0
        for i in range(n):
            total += pairs[i][0] * pairs[i][1]
        return total

    assert ad.gradient(f)(((1.0, 2.0), (3.0, 4.0)), 2) == ((2.0, 1.0), (4.0, 3.0))
    check_grads(f, ((1.0, 2.0), (3.0, 4.0)), 2)


# -- found by the structure fuzzer (tests/fuzz, round 4) ----------------------------------
def test_an_array_field_no_cotangent_reaches_is_a_zero_array():
    def f(pair, scale):  # pair.right gets no cotangent
        return pair.left * scale

    grad = ad.gradient(f)(Pair(1.5, np.ones(3)), 2.0)
    assert grad == (Pair(2.0, grad[0].right), 1.5)
    np.testing.assert_array_equal(grad[0].right, np.zeros(3))
    check_grads(lambda t, s: t[0] * s, (1.0, np.ones(2)), 3.0)  # a tuple argument too


@dataclass
class Weights:
    scale: float
    w: np.ndarray

    def energy(self, x):
        return self.scale * x + np.sum(self.w)


weights = Weights(1.0, np.array([1.0, 2.0]))


def test_fields_and_methods_of_a_global_structure_are_read_at_every_call():
    def f(x):
        return weights.scale * x + np.sum(weights.w * x) + weights.energy(x)

    global weights
    df = ad.differentiable(f, jit=False)
    assert df(2.0) == 2.0 + 6.0 + 5.0
    weights = Weights(3.0, np.array([10.0, 20.0]))
    assert df(2.0) == f(2.0) == 6.0 + 60.0 + 36.0
    assert ad.gradient(df)(2.0) == 3.0 + 30.0 + 3.0
    weights = Weights(1.0, np.array([1.0, 2.0]))


def test_nothing_flows_back_through_a_no_derivative_field_of_the_result():
    def moved(p):
        return Stack(p.first, p.second, temperature=np.sum(p.first.bias) * 3.0)

    model = _stack()
    _, pullback = ad.value_with_pullback(moved, model)
    cotangent = ad.zero_tangent(model)
    cotangent.temperature = 5.0  # a cotangent for a no_derivative field: ignored
    np.testing.assert_array_equal(pullback(cotangent).first.bias, np.zeros(4))
    check_grads(moved, model)


@dataclass
class Spring:
    k: float

    def energy(self, x):
        return 0.5 * self.k * x * x


def energy(spring, x):  # named like the method it calls
    return spring.energy(x) * x


def test_a_method_named_like_the_function_calling_it():
    assert ad.gradient(energy)(Spring(2.0), 3.0) == (Spring(13.5), 27.0)  # k x^3 / 2
    check_grads(energy, Spring(2.0), 3.0)


@dataclass
class Clock:
    t: float

    @property
    def rt(self):  # named like the runtime module generated code calls
        return self.t * 2.0

    def np(self, x):
        return self.t * x


def test_methods_named_like_the_modules_generated_code_uses():
    def f(clock, x):
        ticks = clock.rt  # noqa: F841 - unused: a call made for its value only
        return clock.np(x) * x

    check_grads(f, Clock(1.5), 0.3)


def test_a_dict_display_of_a_method_result():
    def f(p, scale):
        found = p.norm() * scale  # its kind is known only once the call is lowered
        state = {"found": found, "again": {"x": p.scaled(scale).x}}
        return state["found"] + state["again"]["x"]

    check_grads(f, Point(3.0, 4.0), 1.5)


@dataclass(frozen=True)
class Activated:
    x: float
    activation: Any = ad.no_derivative(default=np.cos)


def test_a_structure_rebound_to_one_with_other_static_fields():
    def rebound(p, q):
        p = Activated(q.x * 2.0 + p.x)  # p's activation was np.sin, now np.cos
        return p

    def either(p, q):
        if q.x > 0.0:
            p = q
        return p

    def either_in_a_dict(p, q):
        held = {"p": p}
        if q.x > 0.0:
            held = {"p": q}
        return held["p"].x

    p, q = Activated(1.0, np.sin), Activated(2.0)
    assert ad.differentiable(rebound, jit=False)(p, q) == rebound(p, q) == Activated(5.0)
    check_grads(rebound, p, q)
    for fn in (either, either_in_a_dict):
        with pytest.raises(ad.NonDifferentiableError, match="other static fields") as info:
            ad.differentiable(fn, jit=False)(p, q)
        first = fn.__code__.co_firstlineno  # at one of the bindings
        assert info.value.location.lineno in (first + 1, first + 2, first + 3)


def test_writing_a_key_of_a_dict_built_here_is_refused_at_its_line():
    def f(params, y):
        state = {"w": params["w"] * y, "b": y}
        state["w"] = y * 2.0
        return state["w"] + state["b"]

    with pytest.raises(ad.NonDifferentiableError, match="writing a key") as info:
        ad.gradient(f)({"w": 1.0}, 2.0)
    assert info.value.location.lineno == f.__code__.co_firstlineno + 2


def test_replace_may_set_a_static_field():
    def f(p, k):
        same = dataclasses.replace(p, x=p.x * k, activation=p.activation)
        return same.activation(same.x) + p.activation(p.x)

    p = Activated(0.5, np.sin)
    assert ad.differentiable(f, jit=False)(p, 2.0) == f(p, 2.0)
    check_grads(f, p, 2.0)


def test_a_function_passed_to_a_construction_is_a_static_field():
    def f(layer, inputs):
        built = Affine(layer.weight, layer.bias, np.sin)
        swapped = dataclasses.replace(layer, activation=relu)
        return np.sum(built(inputs) + swapped(inputs))

    def passed_on(layer, inputs):
        return np.sum(np.apply_along_axis(np.sin, 0, inputs @ layer.weight))

    def returned(layer):
        return np.tanh

    layer, inputs = _stack().first, np.random.default_rng(4).normal(size=(2, 3))
    check_grads(f, layer, inputs)
    for fn, args in ((passed_on, (layer, inputs)), (returned, (layer,))):
        with pytest.raises(ad.NonDifferentiableError) as info:
            ad.gradient(fn)(*args)
        assert info.value.location.lineno == fn.__code__.co_firstlineno + 1


class Wave(NamedTuple):
    amplitude: float
    phase: np.ndarray
    real: float = 0.5  # named like the array attribute x.real

    def transpose(self, k):  # named like an array method
        return Wave(self.amplitude * math.tanh(k), self.phase * k + 0.5)


def _make_shifter(carrier):
    def shifter(wave, t):
        out = wave.transpose(carrier.amplitude - wave.amplitude)
        for _ in range(2):  # rebound from the captured structure's method
            out = carrier.transpose(math.tanh(wave.phase[1]))
        return out.transpose(0.5).real * t + out.amplitude * wave.real

    return shifter


def test_a_field_of_an_array_named_methods_result_read_before_its_kind_is_known():
    shifter = _make_shifter(Wave(-0.3, np.array([0.2, 0.6]), 1.4))
    check_grads(shifter, Wave(0.9, np.array([-1.1, 1.2]), -0.4), -1.3)
