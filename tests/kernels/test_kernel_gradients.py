"""The built-in kernels (SPEC section 7): NumPy and Numba agree, and every gradient is
right (finite differences, the dot-product identity, both paths, both backends)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.kernels import conv2d, matmul, max_pool2d, softmax_cross_entropy
from s2s_ad.kernels import numba_kernels as nb
from s2s_ad.kernels import numpy_kernels as npk
from s2s_ad.testing import check_grads

WINDOWS = [((1, 1), "valid"), ((1, 1), "same"), ((2, 2), "valid"), ((2, 2), "same"),
           ((2, 1), "same"), ((3, 2), "valid")]


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _naive_conv(x, w, strides, padding):
    """A direct sum over TensorFlow's definition, independent of both kernels."""
    n, h, width, _ = x.shape
    kh, kw, _, o = w.shape
    if padding == "same":
        oh, ow = -(-h // strides[0]), -(-width // strides[1])
        top = max((oh - 1) * strides[0] + kh - h, 0) // 2
        left = max((ow - 1) * strides[1] + kw - width, 0) // 2
    else:
        oh, ow = (h - kh) // strides[0] + 1, (width - kw) // strides[1] + 1
        top = left = 0
    y = np.zeros((n, oh, ow, o))
    for p in range(oh):
        for q in range(ow):
            for i in range(kh):
                for j in range(kw):
                    r, s = p * strides[0] + i - top, q * strides[1] + j - left
                    if 0 <= r < h and 0 <= s < width:
                        y[:, p, q, :] += x[:, r, s, :] @ w[i, j]
    return y


@pytest.mark.parametrize("strides,padding", WINDOWS)
def test_conv2d_kernels_agree_with_the_definition_and_each_other(strides, padding):
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(2, 7, 6, 3)), rng.normal(size=(3, 2, 3, 4))
    y = npk.conv2d(x, w, strides, padding)
    _close(y, _naive_conv(x, w, strides, padding))
    _close(nb.conv2d(x, w, strides, padding), y)
    dy = rng.normal(size=y.shape)
    for a, b in zip(npk.conv2d_grad(dy, (x, w), strides, padding),
                    nb.conv2d_grad(dy, (x, w), strides, padding), strict=True):
        _close(a, b)


@pytest.mark.parametrize("strides,padding", WINDOWS)
def test_max_pool2d_kernels_agree(strides, padding):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 7, 6, 3))
    y = npk.max_pool2d(x, (3, 2), strides, padding)
    _close(nb.max_pool2d(x, (3, 2), strides, padding), y)
    dy = rng.normal(size=y.shape)
    _close(nb.max_pool2d_grad(dy, (x,), (3, 2), strides, padding),
           npk.max_pool2d_grad(dy, (x,), (3, 2), strides, padding))


def test_matmul_and_softmax_cross_entropy_kernels_agree():
    rng = np.random.default_rng(3)
    a, b, dy = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(3, 5))
    _close(nb.matmul(a, b), npk.matmul(a, b))
    for u, v in zip(nb.matmul_grad(dy, (a, b)), npk.matmul_grad(dy, (a, b)), strict=True):
        _close(u, v)
    logits, labels = 3.0 * rng.normal(size=(6, 4)), rng.integers(0, 4, size=6)
    _close(nb.softmax_cross_entropy(logits, labels), npk.softmax_cross_entropy(logits, labels))
    _close(nb.softmax_cross_entropy_grad(0.7, (logits, labels))[0],
           npk.softmax_cross_entropy_grad(0.7, (logits, labels))[0])


def conv_loss(x, w, r, strides, padding):
    y = conv2d(x, w, strides=strides, padding=padding)
    return np.sum(y * y * r)


def pool_loss(x, r, strides, padding):
    return np.sum(max_pool2d(x, (3, 2), strides, padding) * r)


def dense_loss(a, b, labels):
    return softmax_cross_entropy(np.tanh(matmul(a, b)), labels)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("strides,padding", WINDOWS[1:4])
def test_conv2d_gradient(backend, strides, padding):
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(2, 5, 6, 2)), rng.normal(size=(3, 2, 2, 3))
    r = rng.normal(size=np.shape(npk.conv2d(x, w, strides, padding)))
    with ad.backend(backend):
        check_grads(conv_loss, x, w, r, strides, padding, wrt=("x", "w"))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("strides,padding", WINDOWS[1:4])
def test_max_pool2d_gradient(backend, strides, padding):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 5, 6, 2))
    r = rng.normal(size=np.shape(npk.max_pool2d(x, (3, 2), strides, padding)))
    with ad.backend(backend):
        check_grads(pool_loss, x, r, strides, padding, wrt=("x",))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_matmul_and_softmax_cross_entropy_gradients(backend):
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(3, 4))
    with ad.backend(backend):
        check_grads(dense_loss, a, b, np.array([0, 3, 1, 1, 2]))


def test_bad_arguments_are_named():
    x = np.zeros((1, 4, 4, 2))
    with pytest.raises(ValueError, match="conv2d: x has 2 channels but the filter w expects 3"):
        npk.conv2d(x, np.zeros((2, 2, 3, 1)))
    with pytest.raises(ValueError, match="conv2d: padding must be 'valid' or 'same', got 'full'"):
        npk.conv2d(x, np.zeros((2, 2, 2, 1)), padding="full")
    with pytest.raises(ValueError, match="max_pool2d: strides must be a tuple of two positive"):
        npk.max_pool2d(x, (2, 2), (0, 1))
    with pytest.raises(ValueError, match=r"conv2d: a 5x5 window does not fit in an input of 4x4"):
        npk.conv2d(x, np.zeros((5, 5, 2, 1)))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        npk.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="softmax_cross_entropy: a label lies outside"):
        nb.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 3]))


def loop_loss(x, w, n):
    for _ in range(n):
        x = np.tanh(conv2d(x, w, padding="same"))
    return np.sum(max_pool2d(x, (2, 2), (1, 1), "same") * x)


def branch_loss(x, w, deeper):
    y = conv2d(x, w)
    if deeper:
        y = conv2d(y, w)
    return np.sum(y * y)


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_kernels_in_loops_and_branches():
    rng = np.random.default_rng(7)
    x, w = rng.normal(size=(1, 4, 4, 2)), 0.5 * rng.normal(size=(3, 3, 2, 2))
    check_grads(loop_loss, x, w, 3)
    x = rng.normal(size=(1, 6, 6, 2))
    check_grads(branch_loss, x, w, True)
    check_grads(branch_loss, x, w, False)  # d_y of the unused call stays empty: skipped


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_float32_inputs_get_float32_gradients_on_both_paths():
    # the compiled gradient kernels multiply a float64 cotangent with float32 windows:
    # np.dot in Numba needs one dtype, so they compute in the input's
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1, 4, 4, 2)).astype(np.float32)
    w = rng.normal(size=(2, 2, 2, 3)).astype(np.float32)
    for jit in (False, True):
        conv = ad.differentiable(lambda x, w: np.sum(conv2d(x, w) * 2.0), jit=jit)
        dx, dw = ad.gradient(conv)(x, w)
        assert dx.dtype == dw.dtype == np.float32
        np.testing.assert_allclose(dw, ad.gradient(conv)(x.astype(float), w.astype(float))[1],
                                   rtol=1e-5)
        product = ad.differentiable(lambda a, b: np.sum(matmul(a, b) * 2.0), jit=jit)
        assert ad.gradient(product)(w[0, 0], w[0, 0].T.copy())[0].dtype == np.float32
