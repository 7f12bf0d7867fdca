"""The Numba backend's built-in kernels and their gradient kernels: compiled loops.

Each has the signature of its NumPy twin (same parameter names and defaults),
so generated code compiled by Numba calls it with the same keywords.  The
loops run over the NHWC layout with the channel axis innermost, where memory
is contiguous; the convolution's gradient computes dx and dw in one pass.

>>> import numpy as np
>>> float(matmul(np.eye(2), np.full((2, 2), 3.0))[0, 1])
3.0
"""

from __future__ import annotations

import numba
import numpy as np

from s2s_ad.kernels.geometry import window_geometry_compiled as geometry


@numba.njit(cache=True)
def _check_conv(x, w, padding):
    if x.shape[3] != w.shape[2]:
        raise ValueError("conv2d: the channels of x and of the filter w (w[2]) differ")
    if padding != "valid" and padding != "same":
        raise ValueError("conv2d: padding must be 'valid' or 'same'")


@numba.njit(cache=True)
def conv2d(x, w, strides=(1, 1), padding="valid"):
    """NHWC convolution of ``x`` [N, H, W, C] with ``w`` [kh, kw, C, O]."""
    _check_conv(x, w, padding)
    n, h, width, c = x.shape
    kh, kw, _, o = w.shape
    oh, top, _ = geometry(h, kh, strides[0], padding)
    ow, left, _ = geometry(width, kw, strides[1], padding)
    y = np.zeros((n, oh, ow, o), dtype=x.dtype)
    for b in range(n):
        for p in range(oh):
            for q in range(ow):
                out = y[b, p, q]
                for i in range(kh):
                    r = p * strides[0] + i - top
                    if r < 0 or r >= h:
                        continue
                    for j in range(kw):
                        s = q * strides[1] + j - left
                        if s < 0 or s >= width:
                            continue
                        for ch in range(c):
                            xv = x[b, r, s, ch]
                            for k in range(o):
                                out[k] += xv * w[i, j, ch, k]
    return y


@numba.njit(cache=True)
def conv2d_grad(dy, saved, strides=(1, 1), padding="valid"):
    """(dx, dw): the cotangents of ``conv2d``'s input and filter, in one pass."""
    x, w = saved
    _check_conv(x, w, padding)
    n, h, width, c = x.shape
    kh, kw, _, o = w.shape
    oh, top, _ = geometry(h, kh, strides[0], padding)
    ow, left, _ = geometry(width, kw, strides[1], padding)
    dx = np.zeros_like(x)
    dw = np.zeros_like(w)
    for b in range(n):
        for p in range(oh):
            for q in range(ow):
                d = dy[b, p, q]
                for i in range(kh):
                    r = p * strides[0] + i - top
                    if r < 0 or r >= h:
                        continue
                    for j in range(kw):
                        s = q * strides[1] + j - left
                        if s < 0 or s >= width:
                            continue
                        for ch in range(c):
                            xv = x[b, r, s, ch]
                            acc = 0.0
                            for k in range(o):
                                acc += d[k] * w[i, j, ch, k]
                                dw[i, j, ch, k] += xv * d[k]
                            dx[b, r, s, ch] += acc
    return dx, dw


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
                    best, best_r, best_s = -np.inf, -1, -1
                    for i in range(pool_size[0]):
                        r = p * strides[0] + i - top
                        if r < 0 or r >= h:
                            continue
                        for j in range(pool_size[1]):
                            s = q * strides[1] + j - left
                            if s >= 0 and s < width and (best_r < 0 or x[b, r, s, ch] > best):
                                best, best_r, best_s = x[b, r, s, ch], r, s
                    y[b, p, q, ch] = best
                    if dx is not None:
                        dx[b, best_r, best_s, ch] += dy[b, p, q, ch]
    return y if dx is None else dx


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
def _product(a, b, transpose_a, transpose_b):
    """``op(a) @ op(b)`` with ``op`` a transpose where asked, by loops (no BLAS needed)."""
    m = a.shape[1] if transpose_a else a.shape[0]
    inner = a.shape[0] if transpose_a else a.shape[1]
    n = b.shape[0] if transpose_b else b.shape[1]
    if (b.shape[1] if transpose_b else b.shape[0]) != inner:
        raise ValueError("matmul: the inner dimensions of a and b differ")
    out = np.zeros((m, n), dtype=a.dtype)
    for i in range(m):
        for k in range(inner):
            aik = a[k, i] if transpose_a else a[i, k]
            for j in range(n):
                out[i, j] += aik * (b[j, k] if transpose_b else b[k, j])
    return out


@numba.njit(cache=True)
def matmul(a, b):
    """The matrix product of the 2-d arrays ``a`` [M, K] and ``b`` [K, N]."""
    return _product(a, b, False, False)


@numba.njit(cache=True)
def matmul_grad(dy, saved):
    """(da, db) = (dy @ b.T, a.T @ dy)."""
    a, b = saved
    return _product(dy, b, False, True), _product(a, dy, True, False)


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
