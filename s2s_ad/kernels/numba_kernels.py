"""The Numba backend's built-in kernels and their gradient kernels: compiled loops, and BLAS.

Each has the signature of its NumPy twin (same parameter names and defaults),
so generated code compiled by Numba calls it with the same keywords.  The
convolution gathers one image's windows at a time into a small matrix
(im2col, a compiled loop) and multiplies it with the filter through BLAS
(``np.dot``, which Numba compiles against SciPy's BLAS): a few times faster
than a direct loop nest, which cannot keep its accumulators in registers.

>>> import numpy as np
>>> float(matmul(np.eye(2), np.full((2, 2), 3.0))[0, 1])
3.0
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
from numba.core.errors import NumbaWarning

from s2s_ad.kernels.geometry import window_geometry_compiled as geometry

# Built with NUMBA_OPT=0, a compiled function that calls another cannot be cached ("dynamic
# globals"): Numba compiles it in each process all the same. Not the user's concern, and
# only for the functions of this module.
warnings.filterwarnings("ignore", "Cannot cache compiled function", NumbaWarning,
                        module=r".*s2s_ad.kernels.numba_kernels")


@numba.njit(cache=True)
def _check_conv(x, w, padding):
    if x.shape[3] != w.shape[2]:
        raise ValueError("conv2d: the channels of x and of the filter w (w[2]) differ")
    if padding != "valid" and padding != "same":
        raise ValueError("conv2d: padding must be 'valid' or 'same'")


@numba.njit(cache=True)
def _im2col(x, b, kh, kw, strides, geometry_hw, cols):
    """Fill ``cols`` [OH * OW, kh * kw * C] with the windows of image ``b`` (0 in padding)."""
    _, h, width, c = x.shape
    (oh, top), (ow, left) = geometry_hw
    for p in range(oh):
        for q in range(ow):
            t = 0
            for i in range(kh):
                r = p * strides[0] + i - top
                for j in range(kw):
                    s = q * strides[1] + j - left
                    inside = r >= 0 and r < h and s >= 0 and s < width
                    for ch in range(c):
                        cols[p * ow + q, t] = x[b, r, s, ch] if inside else 0.0
                        t += 1


@numba.njit(cache=True)
def _col2im(dcols, dx, b, kh, kw, strides, geometry_hw):
    """Add the window cotangents ``dcols`` back into image ``b`` of ``dx``."""
    _, h, width, c = dx.shape
    (oh, top), (ow, left) = geometry_hw
    for p in range(oh):
        for q in range(ow):
            for i in range(kh):
                r = p * strides[0] + i - top
                if r < 0 or r >= h:
                    continue
                for j in range(kw):
                    s = q * strides[1] + j - left
                    if s < 0 or s >= width:
                        continue
                    t = (i * kw + j) * c
                    for ch in range(c):
                        dx[b, r, s, ch] += dcols[p * ow + q, t + ch]


@numba.njit(cache=True)
def _conv_geometry(x, w, strides, padding):
    _check_conv(x, w, padding)
    oh, top, _ = geometry(x.shape[1], w.shape[0], strides[0], padding)
    ow, left, _ = geometry(x.shape[2], w.shape[1], strides[1], padding)
    return (oh, top), (ow, left)


@numba.njit(cache=True)
def conv2d(x, w, strides=(1, 1), padding="valid"):
    """NHWC convolution of ``x`` [N, H, W, C] with ``w`` [kh, kw, C, O]: image by
    image, the windows (im2col) times the filter as a matrix (BLAS)."""
    geometry_hw = _conv_geometry(x, w, strides, padding)
    (oh, _), (ow, _) = geometry_hw
    kh, kw, c, o = w.shape
    filters = np.ascontiguousarray(w).reshape(kh * kw * c, o).astype(x.dtype)
    cols = np.empty((oh * ow, kh * kw * c), dtype=x.dtype)
    y = np.empty((x.shape[0], oh, ow, o), dtype=x.dtype)
    for b in range(x.shape[0]):
        _im2col(x, b, kh, kw, strides, geometry_hw, cols)
        y[b] = np.dot(cols, filters).reshape(oh, ow, o)
    return y


@numba.njit(cache=True)
def conv2d_grad(dy, saved, strides=(1, 1), padding="valid"):
    """(dx, dw): the cotangents of ``conv2d``'s input and filter, image by image:
    dw += windows^T dy, and dx gets dy filter^T added back at each window."""
    x, w = saved
    geometry_hw = _conv_geometry(x, w, strides, padding)
    (oh, _), (ow, _) = geometry_hw
    kh, kw, c, o = w.shape
    filters_t = np.ascontiguousarray(w).reshape(kh * kw * c, o).T.astype(x.dtype)
    cols = np.empty((oh * ow, kh * kw * c), dtype=x.dtype)
    dx = np.zeros_like(x)
    dw = np.zeros((kh * kw * c, o), dtype=x.dtype)
    for b in range(x.shape[0]):
        _im2col(x, b, kh, kw, strides, geometry_hw, cols)
        dy_b = np.ascontiguousarray(dy[b]).reshape(oh * ow, o).astype(x.dtype)
        dw += np.dot(cols.T, dy_b)
        _col2im(np.dot(dy_b, filters_t), dx, b, kh, kw, strides, geometry_hw)
    return dx, dw.reshape(kh, kw, c, o)


@numba.njit(cache=True)
def _window_max(x, b, p, q, ch, pool_size, strides, top, left):
    """(maximum, row, column) of one window: its first maximum, row-major (padding never
    wins): the one tie convention of the pullback and the tangent."""
    _, h, width, _ = x.shape
    best, best_r, best_s = -np.inf, -1, -1
    for i in range(pool_size[0]):
        r = p * strides[0] + i - top
        if r < 0 or r >= h:
            continue
        for j in range(pool_size[1]):
            s = q * strides[1] + j - left
            if s >= 0 and s < width and (best_r < 0 or x[b, r, s, ch] > best):
                best, best_r, best_s = x[b, r, s, ch], r, s
    return best, best_r, best_s


@numba.njit(cache=True)
def _pool_windows(x, pool_size, strides, padding, dy, dx):
    """Max pooling when ``dx`` is None (returns y); else adds ``dy`` into ``dx`` at each
    window's first maximum (row-major) and returns ``dx``."""
    n, h, width, c = x.shape
    oh, top, _ = geometry(h, pool_size[0], strides[0], padding)
    ow, left, _ = geometry(width, pool_size[1], strides[1], padding)
    y = np.empty((n, oh, ow, c), dtype=x.dtype)
    for b in range(n):
        for p in range(oh):
            for q in range(ow):
                for ch in range(c):
                    best, best_r, best_s = _window_max(x, b, p, q, ch, pool_size, strides,
                                                       top, left)
                    y[b, p, q, ch] = best
                    if dx is not None:
                        dx[b, best_r, best_s, ch] += dy[b, p, q, ch]
    return y if dx is None else dx


@numba.njit(cache=True)
def _pool_tangent(x, t_x, pool_size, strides, padding):
    """``t_x`` at each window's first maximum of ``x`` (row-major)."""
    n, h, width, c = x.shape
    oh, top, _ = geometry(h, pool_size[0], strides[0], padding)
    ow, left, _ = geometry(width, pool_size[1], strides[1], padding)
    t_y = np.empty((n, oh, ow, c), dtype=t_x.dtype)
    for b in range(n):
        for p in range(oh):
            for q in range(ow):
                for ch in range(c):
                    _, best_r, best_s = _window_max(x, b, p, q, ch, pool_size, strides,
                                                    top, left)
                    t_y[b, p, q, ch] = t_x[b, best_r, best_s, ch]
    return t_y


@numba.njit(cache=True)
def max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding="valid"):
    """The maximum of each ``pool_size`` window of the NHWC ``x`` (padding never wins)."""
    if padding != "valid" and padding != "same":
        raise ValueError("max_pool2d: padding must be 'valid' or 'same'")
    return _pool_windows(x, pool_size, strides, padding, x, None)


@numba.njit(cache=True)
def max_pool2d_grad(dy, saved, pool_size=(2, 2), strides=(2, 2), padding="valid"):
    """dx: each window's cotangent goes to its maximum (the first, row-major, on ties)."""
    x = saved[0]
    if padding != "valid" and padding != "same":
        raise ValueError("max_pool2d: padding must be 'valid' or 'same'")
    return _pool_windows(x, pool_size, strides, padding, dy, np.zeros_like(x))


@numba.njit(cache=True)
def max_pool2d_tangent(inputs, tangents, pool_size=(2, 2), strides=(2, 2), padding="valid"):
    """The tangent of ``max_pool2d``: the input's tangent at each window's first maximum
    (row-major), where the pullback sends the cotangent, so both modes agree at ties."""
    if padding != "valid" and padding != "same":
        raise ValueError("max_pool2d: padding must be 'valid' or 'same'")
    x, t_x = inputs[0], tangents[0]
    if t_x.shape != x.shape:
        raise ValueError("max_pool2d: the tangent's shape differs from the input's")
    return _pool_tangent(x, t_x, pool_size, strides, padding)


@numba.njit(cache=True)
def matmul(a, b):
    """The matrix product of the 2-d arrays ``a`` [M, K] and ``b`` [K, N] (BLAS)."""
    if a.shape[1] != b.shape[0]:
        raise ValueError("matmul: the inner dimensions of a and b differ")
    return np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b).astype(a.dtype))


@numba.njit(cache=True)
def matmul_grad(dy, saved):
    """(da, db) = (dy @ b.T, a.T @ dy)."""
    a, b = saved
    dy = np.ascontiguousarray(dy).astype(a.dtype)  # the cotangent may be float64
    b = np.ascontiguousarray(b).astype(a.dtype)
    return np.dot(dy, b.T), np.dot(np.ascontiguousarray(a).T, dy)


@numba.njit(cache=True)
def _softmax_row(logits, labels, row):
    """(log of the softmax normaliser minus the max, the max) of one row, labels checked."""
    if labels[row] < 0 or labels[row] >= logits.shape[1]:
        raise ValueError("softmax_cross_entropy: a label lies outside [0, number of classes)")
    top = logits[row, 0]
    for k in range(1, logits.shape[1]):
        top = max(top, logits[row, k])
    total = 0.0
    for k in range(logits.shape[1]):
        total += np.exp(logits[row, k] - top)
    return np.log(total), top


@numba.njit(cache=True)
def softmax_cross_entropy(logits, labels):
    """The mean over rows of ``-log softmax(logits[n])[labels[n]]``."""
    if labels.shape[0] != logits.shape[0]:
        raise ValueError("softmax_cross_entropy: one label per row of logits is needed")
    loss = 0.0
    for row in range(logits.shape[0]):
        log_norm, top = _softmax_row(logits, labels, row)
        loss += log_norm - (logits[row, labels[row]] - top)
    return loss / logits.shape[0]


@numba.njit(cache=True)
def softmax_cross_entropy_grad(dy, saved):
    """(d_logits, None): ``dy * (softmax(logits) - onehot(labels)) / N``."""
    logits, labels = saved
    n = logits.shape[0]
    d_logits = np.empty_like(logits)
    for row in range(n):
        log_norm, top = _softmax_row(logits, labels, row)
        for k in range(logits.shape[1]):
            d_logits[row, k] = np.exp(logits[row, k] - top - log_norm) * (dy / n)
        d_logits[row, labels[row]] -= dy / n
    return d_logits, None


@numba.njit(cache=True)
def softmax_cross_entropy_tangent(inputs, tangents):
    """The mean over rows of ``<softmax(logits[n]), t[n]> - t[n, labels[n]]``."""
    logits, labels = inputs
    t_logits = tangents[0]
    n = logits.shape[0]
    total = 0.0
    for row in range(n):
        log_norm, top = _softmax_row(logits, labels, row)
        for k in range(logits.shape[1]):
            total += np.exp(logits[row, k] - top - log_norm) * t_logits[row, k]
        total -= t_logits[row, labels[row]]
    return total / n
