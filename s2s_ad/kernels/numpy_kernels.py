"""The NumPy backend's built-in kernels and their gradient kernels.

Vectorised: a convolution is one ``tensordot`` of the input's sliding windows
(im2col by ``sliding_window_view``) with the filter; its input gradient loops
over the filter's taps only, never over pixels.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 4, 4, 1)
>>> conv2d(x, np.ones((2, 2, 1, 1)))[0, :, :, 0]
array([[10., 14., 18.],
       [26., 30., 34.],
       [42., 46., 50.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from s2s_ad.kernels.geometry import check_array, check_padding, check_pair, check_windows

Pair = tuple[int, int]


def _windows(x: np.ndarray, window: Pair, strides: Pair, padding: str, kernel: str,
             fill: float) -> tuple[np.ndarray, list]:
    """The strided windows of the padded NHWC ``x``: ``[N, OH, OW, C, kh, kw]``, and the
    geometry of both axes."""
    geometry = check_windows(kernel, x.shape, window, strides, padding)
    (oh, top, bottom), (ow, left, right) = geometry
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    view = sliding_window_view(padded, window, axis=(1, 2))
    return view[:, ::strides[0], ::strides[1]][:, :oh, :ow], geometry


def _conv_arguments(x: Any, w: Any, strides: Any, padding: Any) -> tuple:
    x = check_array("conv2d", "x", x, 4)
    w = check_array("conv2d", "w", w, 4)
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"conv2d: x has {x.shape[3]} channels but the filter w expects "
                         f"{w.shape[2]} (w is [kh, kw, in, out] = {list(w.shape)})")
    return x, w, check_pair("conv2d", "strides", strides), check_padding("conv2d", padding)


def conv2d(x: np.ndarray, w: np.ndarray, strides: Pair = (1, 1),
           padding: str = "valid") -> np.ndarray:
    """NHWC convolution of ``x`` [N, H, W, C] with ``w`` [kh, kw, C, O]."""
    x, w, strides, padding = _conv_arguments(x, w, strides, padding)
    win, _ = _windows(x, w.shape[:2], strides, padding, "conv2d", 0.0)
    return np.tensordot(win, w, axes=((3, 4, 5), (2, 0, 1)))


def conv2d_grad(dy: np.ndarray, saved: tuple, strides: Pair = (1, 1),
                padding: str = "valid") -> tuple[np.ndarray, np.ndarray]:
    """(dx, dw): the cotangents of ``conv2d``'s input and filter for output cotangent ``dy``."""
    x, w, strides, padding = _conv_arguments(*saved, strides, padding)
    kh, kw = w.shape[:2]
    win, geometry = _windows(x, (kh, kw), strides, padding, "conv2d", 0.0)
    (oh, top, _), (ow, left, _) = geometry
    dw = np.tensordot(win, dy, axes=((0, 1, 2), (0, 1, 2))).transpose(1, 2, 0, 3)
    n, h, width, _ = x.shape
    dx_padded = np.zeros((n, top + h + geometry[0][2], left + width + geometry[1][2],
                          x.shape[3]), dtype=np.result_type(dy, w))
    sh, sw = strides
    for i in range(kh):
        for j in range(kw):
            dx_padded[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :] += \
                dy @ w[i, j].T
    return dx_padded[:, top:top + h, left:left + width, :], dw


def _pool_arguments(x: Any, pool_size: Any, strides: Any, padding: Any) -> tuple:
    return (check_array("max_pool2d", "x", x, 4),
            check_pair("max_pool2d", "pool_size", pool_size),
            check_pair("max_pool2d", "strides", strides), check_padding("max_pool2d", padding))


def max_pool2d(x: np.ndarray, pool_size: Pair = (2, 2), strides: Pair = (2, 2),
               padding: str = "valid") -> np.ndarray:
    """The maximum of each ``pool_size`` window of the NHWC ``x`` (padding never wins)."""
    x, pool_size, strides, padding = _pool_arguments(x, pool_size, strides, padding)
    win, _ = _windows(x, pool_size, strides, padding, "max_pool2d", -np.inf)
    return win.max(axis=(4, 5))


def max_pool2d_grad(dy: np.ndarray, saved: tuple, pool_size: Pair = (2, 2),
                    strides: Pair = (2, 2), padding: str = "valid") -> np.ndarray:
    """dx: each window's cotangent goes to its maximum (the first, row-major, on ties)."""
    x, pool_size, strides, padding = _pool_arguments(saved[0], pool_size, strides, padding)
    where, ((top, bottom), (left, right)) = _pool_argmax(x, pool_size, strides, padding)
    n, h, width, c = x.shape
    dx_padded = np.zeros((n, top + h + bottom, left + width + right, c),
                         dtype=np.result_type(dy, x))
    np.add.at(dx_padded, where, dy)
    return dx_padded[:, top:top + h, left:left + width, :]


def _pool_argmax(x: np.ndarray, pool_size: Pair, strides: Pair, padding: str) -> tuple:
    """The index, in the padded ``x``, of each window's first maximum (row-major), as
    (batch, rows, cols, channel) arrays of the output's shape, and the padding of each
    axis: the one tie convention of the pullback and the tangent."""
    win, geometry = _windows(x, pool_size, strides, padding, "max_pool2d", -np.inf)
    (oh, top, bottom), (ow, left, right) = geometry
    n, _, _, c = x.shape
    best = win.reshape(n, oh, ow, c, -1).argmax(axis=4)
    rows = np.arange(oh)[None, :, None, None] * strides[0] + best // pool_size[1]
    cols = np.arange(ow)[None, None, :, None] * strides[1] + best % pool_size[1]
    batch = np.arange(n)[:, None, None, None]
    channel = np.arange(c)[None, None, None, :]
    return (batch, rows, cols, channel), ((top, bottom), (left, right))


def max_pool2d_tangent(inputs: tuple, tangents: tuple, pool_size: Pair = (2, 2),
                       strides: Pair = (2, 2), padding: str = "valid") -> np.ndarray:
    """The tangent of ``max_pool2d``: the input's tangent at each window's first maximum
    (row-major), where the pullback sends the cotangent, so both modes agree at ties."""
    x, pool_size, strides, padding = _pool_arguments(inputs[0], pool_size, strides, padding)
    where, padded = _pool_argmax(x, pool_size, strides, padding)
    t_padded = np.pad(np.asarray(tangents[0]), ((0, 0), padded[0], padded[1], (0, 0)))
    return t_padded[where]


def _matmul_arguments(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = check_array("matmul", "a", a, 2), check_array("matmul", "b", b, 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a is {a.shape[0]}x{a.shape[1]} but b is "
                         f"{b.shape[0]}x{b.shape[1]}")
    return a, b


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The matrix product of the 2-d arrays ``a`` [M, K] and ``b`` [K, N]."""
    a, b = _matmul_arguments(a, b)
    return a @ b


def matmul_grad(dy: np.ndarray, saved: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(da, db) for ``matmul(a, b)`` with output cotangent ``dy``."""
    a, b = _matmul_arguments(*saved)
    return dy @ b.T, a.T @ dy


def _softmax_arguments(logits: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    logits = check_array("softmax_cross_entropy", "logits", logits, 2)
    labels = check_array("softmax_cross_entropy", "labels", labels, 1)
    if labels.dtype.kind not in "iu" or labels.shape[0] != logits.shape[0]:
        raise ValueError(f"softmax_cross_entropy: labels must be {logits.shape[0]} integer "
                         f"class indices, got {labels.dtype} of shape {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[1]):
        raise ValueError(f"softmax_cross_entropy: labels must lie in [0, {logits.shape[1]})")
    return logits, labels


def softmax_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    """The mean over rows of ``-log softmax(logits[n])[labels[n]]``."""
    logits, labels = _softmax_arguments(logits, labels)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=1))
    return np.mean(log_norm - shifted[np.arange(len(labels)), labels])


def softmax_cross_entropy_grad(dy: float, saved: tuple) -> tuple[np.ndarray, None]:
    """(d_logits, None): ``dy * (softmax(logits) - onehot(labels)) / N``; labels get none."""
    logits, labels = _softmax_arguments(*saved)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    probs[np.arange(len(labels)), labels] -= 1.0
    return probs * (dy / len(labels)), None


def softmax_cross_entropy_tangent(inputs: tuple, tangents: tuple) -> float:
    """The tangent of ``softmax_cross_entropy`` along the logits' tangent: the mean over
    rows of ``<softmax(logits[n]), t[n]> - t[n, labels[n]]`` (labels have none)."""
    logits, labels = _softmax_arguments(*inputs)
    t_logits = np.asarray(tangents[0])
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    rows = np.arange(len(labels))
    return np.mean(np.sum(probs * t_logits, axis=1) - t_logits[rows, labels])
