"""s2s_ad.nn: layer values against independent NumPy references, layer and loss
gradients against finite differences and the dot-product identity on both
paths (``check_grads``), optimiser arithmetic against the formulas, and
training a small model.

Shapes are tiny: every distinct layer is compiled by Numba once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import nn
from s2s_ad.testing import check_grads


# ---- references that do not use s2s_ad.nn ----------------------------------------------------
def _same_pads(size: int, window: int, stride: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _windows(x, window, strides, padding, fill):
    pads = [(0, 0), (0, 0)] if padding == "valid" else [
        _same_pads(x.shape[1 + a], window[a], strides[a]) for a in (0, 1)]
    padded = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=fill)
    view = np.lib.stride_tricks.sliding_window_view(padded, window, axis=(1, 2))
    return view[:, ::strides[0], ::strides[1]]  # [n, oh, ow, c, kh, kw]


def reference_conv2d(x, w, strides, padding):
    return np.einsum("nhwcij,ijco->nhwo", _windows(x, w.shape[:2], strides, padding, 0.0), w)


def reference_max_pool(x, pool, strides, padding):
    return _windows(x, pool, strides, padding, -np.inf).max(axis=(4, 5))


def applied(layer, x):
    return layer(x)


RNG = np.random.default_rng(0)


def _images(shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ---- forward values --------------------------------------------------------------------------
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (2, 1)])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_matches_the_reference(strides, padding):
    layer = nn.Conv2D.init((3, 2, 2, 3), strides=strides, padding=padding, seed=1,
                           dtype=np.float64)
    layer = dataclasses.replace(layer, bias=np.array([0.5, -1.0, 2.0]))
    x = _images((2, 5, 6, 2))
    expected = reference_conv2d(x, layer.filter, strides, padding) + layer.bias
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pool, strides, padding", [((2, 2), (2, 2), "valid"),
                                                    ((3, 2), (1, 2), "valid"),
                                                    ((2, 2), (2, 2), "same")])
def test_max_pool_matches_the_reference(pool, strides, padding):
    x = _images((2, 5, 5, 3))
    out = nn.MaxPool2D(pool_size=pool, strides=strides, padding=padding)(x)
    np.testing.assert_array_equal(out, reference_max_pool(x, pool, strides, padding))


def test_dense_and_flatten_values():
    layer = nn.Dense(np.array([[1.0, -1.0], [2.0, 0.5]]), np.array([0.0, -3.0]), nn.relu)
    x = np.array([[1.0, 1.0], [-1.0, 2.0]])
    np.testing.assert_array_equal(layer(x), np.maximum(x @ layer.weight + layer.bias, 0.0))
    assert nn.Flatten()(np.zeros((3, 2, 4, 5))).shape == (3, 40)


def test_losses_match_their_formulas():
    logits = _images((4, 3))
    labels = np.array([2, 0, 1, 2])
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    expected = -np.mean(log_softmax[np.arange(4), labels])
    assert nn.softmax_cross_entropy(logits, labels) == pytest.approx(expected, rel=1e-13)
    big = logits + 1000.0  # the shift keeps exp from overflowing
    assert nn.softmax_cross_entropy(big, labels) == pytest.approx(expected, rel=1e-9)
    p, q = _images((3, 2)), _images((3, 2))
    assert nn.mean_squared_error(p, q) == pytest.approx(np.mean((p - q) ** 2), rel=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_initialisation_is_seeded_glorot_uniform_in_the_dtype(dtype):
    a = nn.Dense.init(30, 20, seed=3, dtype=dtype)
    b = nn.Dense.init(30, 20, seed=3, dtype=dtype)
    c = nn.Dense.init(30, 20, seed=4, dtype=dtype)
    np.testing.assert_array_equal(a.weight, b.weight)
    assert not np.array_equal(a.weight, c.weight)
    assert a.weight.dtype == a.bias.dtype == dtype and not a.bias.any()
    limit = np.sqrt(6.0 / 50.0)
    assert np.abs(a.weight).max() <= limit and np.abs(a.weight).max() > 0.9 * limit
    conv = nn.Conv2D.init((5, 5, 3, 6), seed=0, dtype=dtype)
    assert conv.filter.dtype == dtype
    assert np.abs(conv.filter).max() <= np.sqrt(6.0 / (25 * 3 + 25 * 6))


# ---- gradients of every layer and loss, through the layer structure -------------------------
def test_dense_gradient():
    layer = nn.Dense.init(3, 4, activation=nn.tanh, seed=0, dtype=np.float64)
    layer = dataclasses.replace(layer, bias=np.array([0.1, -0.2, 0.3, 0.0]))
    check_grads(applied, layer, _images((5, 3)))


def test_dense_relu_and_sigmoid_gradients():
    x = _images((4, 3))
    for activation in (nn.relu, nn.sigmoid):
        layer = nn.Dense.init(3, 2, activation=activation, seed=1, dtype=np.float64)
        check_grads(applied, dataclasses.replace(layer, bias=np.array([0.3, -0.1])), x)


@pytest.mark.parametrize("strides, padding", [((1, 1), "valid"), ((2, 2), "valid"),
                                              ((1, 1), "same"), ((2, 2), "same")])
def test_conv2d_gradient(strides, padding):
    layer = nn.Conv2D.init((3, 3, 2, 2), strides=strides, padding=padding, seed=2,
                           dtype=np.float64)
    layer = dataclasses.replace(layer, bias=np.array([0.2, -0.4]))
    check_grads(applied, layer, _images((2, 5, 5, 2)))


def test_max_pool_and_flatten_gradients():
    x = _images((2, 4, 6, 2))  # distinct values: the maximum of each window is unique
    check_grads(applied, nn.MaxPool2D(pool_size=(2, 3), strides=(2, 3)), x)
    check_grads(applied, nn.MaxPool2D(pool_size=(3, 3), strides=(2, 2), padding="same"), x)
    check_grads(applied, nn.Flatten(), x)


def test_loss_gradients():
    logits = _images((4, 3))
    check_grads(nn.softmax_cross_entropy, logits, np.array([2, 0, 1, 2]))
    check_grads(nn.mean_squared_error, _images((3, 2)), _images((3, 2)))


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_float32_layers_give_float32_gradients_close_to_float64_ones():
    model64 = _small_cnn(False)
    model32 = ad.map_leaves(lambda v: v.astype(np.float32), model64)
    images, labels = _images((2, 6, 6, 2)), np.array([0, 2])
    g64 = ad.gradient(cnn_loss, wrt=("model",))(model64, images, labels)
    g32 = ad.gradient(cnn_loss, wrt=("model",))(model32, images.astype(np.float32), labels)
    assert g32.conv.filter.dtype == g32.dense.weight.dtype == np.float32
    np.testing.assert_allclose(g32.conv.filter, g64.conv.filter, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(g32.dense.weight, g64.dense.weight, rtol=1e-3, atol=1e-5)


@dataclasses.dataclass(frozen=True)
class SmallCNN(nn.Layer):
    conv: nn.Layer
    pool: nn.MaxPool2D
    flatten: nn.Flatten
    dense: nn.Dense

    def __call__(self, x):
        return self.dense(self.flatten(self.pool(self.conv(x))))


def cnn_loss(model, images, labels):
    return nn.softmax_cross_entropy(model(images), labels)


def _small_cnn(discarding: bool) -> SmallCNN:
    conv = nn.Conv2D.init((3, 3, 2, 3), activation=nn.relu, seed=0, dtype=np.float64)
    conv = dataclasses.replace(conv, bias=np.array([0.1, 0.0, -0.1]))
    return SmallCNN(conv.discarding_activations() if discarding else conv, nn.MaxPool2D(),
                    nn.Flatten(), nn.Dense.init(12, 3, seed=1, dtype=np.float64))


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_a_whole_model_gradient():
    check_grads(cnn_loss, _small_cnn(False), _images((2, 6, 6, 2)), np.array([0, 2]))


# ---- applied_for_backpropagation and discarding_activations -------------------------------
def test_applied_for_backpropagation_gives_model_and_input_cotangents():
    model = nn.Dense.init(3, 2, activation=nn.tanh, seed=0, dtype=np.float64)
    x = _images((4, 3))
    out, backprop = nn.applied_for_backpropagation(model, x)
    np.testing.assert_allclose(out, model(x), rtol=1e-14)  # Numba may round differently
    d_out = _images((4, 2))
    d_model, d_x = backprop(d_out)
    d_z = d_out * (1.0 - out * out)
    np.testing.assert_allclose(d_model.weight, x.T @ d_z, rtol=1e-12)
    np.testing.assert_allclose(d_model.bias, d_z.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(d_x, d_z @ model.weight.T, rtol=1e-12)
    assert d_model.activation is nn.tanh


def _gradients_and_residual_bytes(loss, model, *args):
    """Value, gradients, and the bytes the forward run keeps for the pullback
    (``ad.explain(..., memory=True)``; argument arrays kept by reference not counted)."""
    value, pullback = ad.value_with_pullback(loss, model, *args)
    return value, pullback(1.0), ad.explain(loss, model, *args, memory=True).memory.residual


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_discarding_activations_keeps_less_and_gives_the_same_gradient():
    images, labels = _images((4, 6, 6, 2)), np.array([0, 1, 2, 1])
    v0, g0, kept0 = _gradients_and_residual_bytes(cnn_loss, _small_cnn(False), images, labels)
    v1, g1, kept1 = _gradients_and_residual_bytes(cnn_loss, _small_cnn(True), images, labels)
    assert v0 == v1
    for name in ("filter", "bias"):
        np.testing.assert_array_equal(getattr(g0[0].conv, name), getattr(g1[0].conv.layer, name))
    np.testing.assert_array_equal(g0[0].dense.weight, g1[0].dense.weight)
    np.testing.assert_array_equal(g0[1], g1[1])
    # without discarding, at least the convolution's pre-activation [4, 4, 4, 3] is kept
    assert kept1 <= kept0 - 4 * 4 * 4 * 3 * 8, (kept0, kept1)


@dataclasses.dataclass(frozen=True)
class TwoDense(nn.Layer):
    first: nn.Layer
    second: nn.Dense

    def __call__(self, x):
        return self.second(self.first(x))


def sum_of_squares(model, x):
    return np.sum(model(x) ** 2)


@pytest.mark.slow  # compiles a model twice (kept and discarded)
def test_discarding_a_dense_layer_keeps_less_and_gives_the_same_gradient():
    first = nn.Dense.init(3, 50, activation=nn.tanh, seed=0, dtype=np.float64)
    second = nn.Dense.init(50, 2, seed=1, dtype=np.float64)
    x = _images((8, 3))
    v0, g0, kept0 = _gradients_and_residual_bytes(sum_of_squares, TwoDense(first, second), x)
    v1, g1, kept1 = _gradients_and_residual_bytes(
        sum_of_squares, TwoDense(first.discarding_activations(), second), x)
    assert v0 == v1
    np.testing.assert_array_equal(g0[0].first.weight, g1[0].first.layer.weight)
    np.testing.assert_array_equal(g0[0].second.weight, g1[0].second.weight)
    np.testing.assert_array_equal(g0[1], g1[1])
    # the plain first layer keeps its pre-activation x @ w + b, [8, 50] floats
    assert kept1 <= kept0 - 8 * 50 * 8, (kept0, kept1)


def test_discarding_activations_checks_against_finite_differences():
    check_grads(cnn_loss, _small_cnn(True), _images((2, 6, 6, 2)), np.array([0, 2]),
                paths=("python",))


# ---- optimisers -----------------------------------------------------------------------------
@dataclasses.dataclass
class Params:
    w: np.ndarray
    scale: float
    name: str = ad.no_derivative(default="p")
    frozen: np.ndarray = ad.no_derivative(default_factory=lambda: np.ones(2))


def test_sgd_with_momentum_follows_the_formula():
    p = Params(np.array([1.0, 2.0]), 3.0)
    opt = nn.SGD(p, learning_rate=0.1, momentum=0.5)
    g = Params(np.array([1.0, -1.0]), 2.0)
    p1 = opt.update(p, along=g)  # v = -0.1 g
    p2 = opt.update(p1, along=g)  # v = 0.5 (-0.1 g) - 0.1 g = -0.15 g
    np.testing.assert_allclose(p2.w, p.w - 0.25 * g.w, rtol=1e-15)
    assert p2.scale == pytest.approx(3.0 - 0.25 * 2.0, rel=1e-15)
    assert p2.name == "p" and np.array_equal(p2.frozen, np.ones(2))
    assert p.w[0] == 1.0  # the model is not changed in place


def test_adam_follows_the_formula_on_a_dict_in_float32():
    params = {"w": np.array([1.0, -2.0], dtype=np.float32)}
    opt = nn.Adam(params, learning_rate=0.1, beta1=0.5, beta2=0.75, epsilon=1e-8)
    g1, g2 = np.array([1.0, 2.0], np.float32), np.array([-1.0, 4.0], np.float32)
    p2 = opt.update(opt.update(params, along={"w": g1}), along={"w": g2})
    m = 0.5 * (0.5 * g1) + 0.5 * g2
    v = 0.75 * (0.25 * g1 ** 2) + 0.25 * g2 ** 2
    step1 = g1 / (np.sqrt(g1 ** 2) + 1e-8)
    step2 = (m / 0.75) / (np.sqrt(v / (1 - 0.75 ** 2)) + 1e-8)
    np.testing.assert_allclose(p2["w"], params["w"] - 0.1 * (step1 + step2), rtol=1e-6)
    assert p2["w"].dtype == np.float32


# ---- training ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Regressor(nn.Layer):
    hidden1: nn.Dense
    hidden2: nn.Dense
    output: nn.Dense

    def __call__(self, x):
        return self.output(self.hidden2(self.hidden1(x)))


def regression_loss(model, x, y):
    return nn.mean_squared_error(model(x), y)


def test_a_three_layer_dense_model_fits_a_smooth_regression():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, (64, 2))
    y = (np.sin(2.0 * x[:, :1]) * x[:, 1:]) + 0.5 * x[:, :1] ** 2
    model = Regressor(nn.Dense.init(2, 16, activation=nn.tanh, seed=0, dtype=np.float64),
                      nn.Dense.init(16, 16, activation=nn.tanh, seed=1, dtype=np.float64),
                      nn.Dense.init(16, 1, seed=2, dtype=np.float64))
    opt = nn.Adam(model, learning_rate=0.02)
    step = ad.value_and_gradient(regression_loss, wrt=("model",))
    first = None
    for _ in range(300):
        loss, grad = step(model, x, y)
        first = loss if first is None else first
        model = opt.update(model, along=grad)
    # The target's variance is about 0.1 (predicting its mean scores that); a tanh
    # network of this size fits this smooth surface to well under a tenth of it.
    assert np.var(y) > 0.05 and first > 0.05
    assert regression_loss(model, x, y) < 0.005
