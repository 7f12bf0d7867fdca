"""Matrix decompositions and functions of matrices, with their VJPs: ``svd``,
``eigh``/``eigvalsh``, ``cholesky``, ``slogdet``, ``pinv``, ``matrix_power`` and the
matrix norms that need singular values (SciPy's functions: :mod:`.scipy_linalg`).

Each helper runs from Python and inside Numba code with the same results.  Most
are ``register_jitable`` (one body, plain NumPy that Numba also compiles); those
of stacks of matrices (``cholesky``, ``slogdet``) and those Numba lacks a keyword
for have a Numba implementation of their own (a loop over the stack).

Conventions where the derivative does not exist (the helpers' VJPs):

- ``svd``: where two singular values are equal, the terms that couple their
  singular vectors (``1 / (s_j**2 - s_i**2)``) are dropped, and where a singular
  value is 0 so is the ``1 / s`` term of a non-square matrix: the result is
  finite (never NaN).  It is the derivative of every loss of the singular values
  alone (``sum(s)``, ``sum(s**2)``...) and of singular vectors whose singular
  values are simple; a loss that reads singular vectors of a repeated singular
  value has in general no derivative there (or a 0/0 limit the VJP cannot know),
  and gets this choice.  The VJP is sign-equivariant: flipping the signs of a
  pair ``U[:, i]``, ``Vt[i]`` (LAPACK's choice, which may differ between NumPy and
  Numba) does not change the VJP of a loss that does not see those signs.
  With ``full_matrices=True`` the columns of ``U`` (rows of ``Vt``) beyond
  ``min(m, n)`` are any basis of a complement, with no derivative: a cotangent
  on them raises ValueError (pass ``full_matrices=False``).
- ``eigh``: likewise, the terms coupling equal eigenvalues are dropped (exact
  for losses of the eigenvalues alone, and of eigenvectors of simple ones), and
  flipping an eigenvector's sign does not change the VJP of a sign-invariant
  loss.  NumPy reads one triangle (``UPLO``) of the matrix, so the VJP is on that
  triangle (the other gets 0): ``tril(G) + tril(G.T, -1)`` of the symmetric
  gradient ``G``.
- ``cholesky`` (lower): on the triangle it reads, as eigh.

>>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> slogdet(A)
(np.float64(1.0), np.float64(2.3978952727983707))
>>> bool(np.allclose(cholesky(A) @ cholesky(A).T, A))
True
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .axes import numba_impl
from .matrices import (
    cholesky_grad,
    inverse_gaps,
    onto_triangle,
    or_zeros,
    reciprocal_or_zero,
    stacked,
    symmetric_from,
)

__all__ = ["cholesky", "cholesky_vjp", "eigh", "eigh_vjp", "eigvalsh", "eigvalsh_vjp",
           "matrix_power_vjp", "nuclear_norm_slope", "pinv_vjp", "singular_outer",
           "singular_values", "singular_values_vjp", "slogdet", "slogdet_vjp", "svd", "svd_vjp"]

_FULL = ("np.linalg.svd: with full_matrices=True the columns of U and rows of Vt beyond "
         "min(m, n) have no derivative: pass full_matrices=False")


# ---- svd ------------------------------------------------------------------------------------
@register_jitable
def svd_vjp(g, z):
    """The cotangent of ``a`` from that of ``z = np.linalg.svd(a, full_matrices)``."""
    u_all, s, vt_all = z
    k = s.shape[0]
    gu = or_zeros(g[0], u_all.shape)
    gs = or_zeros(g[1], s.shape)
    gvt = or_zeros(g[2], vt_all.shape)
    if np.any(gu[:, k:] != 0.0) or np.any(gvt[k:, :] != 0.0):
        raise ValueError(_FULL)
    u = np.ascontiguousarray(u_all[:, :k]).astype(np.float64)
    vt = np.ascontiguousarray(vt_all[:k, :]).astype(np.float64)
    s = s.astype(np.float64)
    gu = np.ascontiguousarray(gu[:, :k])
    gvt = np.ascontiguousarray(gvt[:k, :])
    f = inverse_gaps(s * s)
    utgu = np.dot(u.T, gu)
    vgv = np.dot(vt, gvt.T)
    inner = (f * (utgu - utgu.T)) * s.reshape((1, k)) + np.diag(gs) \
        + s.reshape((k, 1)) * (f * (vgv - vgv.T))
    out = np.dot(np.dot(u, inner), vt)
    m, n = u.shape[0], vt.shape[1]
    inverse = reciprocal_or_zero(s)
    if m > k:
        out += np.dot((gu - np.dot(u, utgu)) * inverse.reshape((1, k)), vt)
    if n > k:
        out += np.dot(u * inverse.reshape((1, k)), gvt - np.dot(vgv.T, vt))
    return out


def svd(a, full_matrices):
    """``np.linalg.svd(a, full_matrices)`` as a tuple ``(U, S, Vt)``."""
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


@numba_impl(svd)
def _ol_svd(a, full_matrices):
    return lambda a, full_matrices: np.linalg.svd(a, full_matrices)


def singular_values(a):
    """``np.linalg.svd(a, compute_uv=False)``."""
    return np.linalg.svd(a, compute_uv=False)


@numba_impl(singular_values)
def _ol_singular_values(a):
    return lambda a: np.linalg.svd(a, False)[1]


@register_jitable
def singular_values_vjp(g, a):
    """The cotangent of ``a`` from that of its singular values: ``U diag(g) Vt``."""
    u, s, vt = np.linalg.svd(a, False)
    return np.dot(u.astype(np.float64) * g, vt.astype(np.float64))


@register_jitable
def singular_outer(a, index):
    """``outer(U[:, index], Vt[index])``: the slope of the singular value ``index``
    (``ord=2``: the largest, LAPACK's first of equal ones; ``ord=-2``: the smallest)."""
    u, s, vt = np.linalg.svd(a, False)
    return np.outer(u[:, index], vt[index]).astype(np.float64)


@register_jitable
def nuclear_norm_slope(a):
    """``U @ Vt``: the slope of the nuclear norm (a subgradient where ``a`` is singular)."""
    u, s, vt = np.linalg.svd(a, False)
    return np.dot(u, vt).astype(np.float64)


# ---- eigh -------------------------------------------------------------------------------------
def eigh(a, upper):
    """``np.linalg.eigh(a, UPLO="U" if upper else "L")`` as a tuple (the same on both
    paths: the symmetric matrix read from that triangle, decomposed reading its lower
    one)."""
    return tuple(np.linalg.eigh(symmetric_from(a, upper)))


@numba_impl(eigh)
def _ol_eigh(a, upper):
    return lambda a, upper: np.linalg.eigh(symmetric_from(a, upper))


@register_jitable
def eigvalsh(a, upper):
    """``np.linalg.eigvalsh(a, UPLO="U" if upper else "L")``."""
    return np.linalg.eigvalsh(symmetric_from(a, upper))


@register_jitable
def eigh_vjp(g, z, upper):
    """The cotangent of ``a`` from that of ``z = (w, v) = eigh(a, upper)``."""
    w, v = z
    v = v.astype(np.float64)
    gw = or_zeros(g[0], w.shape)
    gv = or_zeros(g[1], v.shape)
    inner = np.diag(gw) + inverse_gaps(w.astype(np.float64)) * np.dot(v.T, gv)
    return onto_triangle(np.dot(np.dot(v, inner), v.T), upper)


@register_jitable
def eigvalsh_vjp(g, a, upper):
    """The cotangent of ``a`` from that of ``eigvalsh(a, upper)``: ``V diag(g) V.T``."""
    w, v = np.linalg.eigh(symmetric_from(a, upper))
    return onto_triangle(np.dot(v * g, v.T), upper)


# ---- cholesky, slogdet (stacks of matrices too) -------------------------------------------------
@register_jitable
def _cholesky_vjp_2d(g, low):
    """Of one lower factor ``low`` of ``a``: on the lower triangle NumPy reads."""
    return onto_triangle(cholesky_grad(g, low), False)


def cholesky(a):
    """``np.linalg.cholesky(a)`` of a matrix or a stack of matrices."""
    return np.linalg.cholesky(a)


def cholesky_vjp(g, z):
    """The cotangent of ``a`` from that of ``z = cholesky(a)``."""
    g, z = np.asarray(g, dtype=np.float64), np.asarray(z)
    n = z.shape[-1]
    mats, gs = z.reshape((-1, n, n)), g.reshape((-1, n, n))
    return np.stack([_cholesky_vjp_2d(gs[i], mats[i]) for i in range(len(mats))]
                    ).reshape(z.shape)


@numba_impl(cholesky)
def _ol_cholesky(a):
    if a.ndim == 2:
        return lambda a: np.linalg.cholesky(a)

    def impl(a):
        n = a.shape[-1]
        mats = stacked(a, n, n)
        out = np.empty(mats.shape, dtype=a.dtype)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.cholesky(mats[i])
        return out.reshape(a.shape)

    return impl


@numba_impl(cholesky_vjp)
def _ol_cholesky_vjp(g, z):
    def impl(g, z):
        n = z.shape[-1]
        mats, gs = stacked(z, n, n), stacked(g, n, n)
        out = np.empty(mats.shape)
        for i in range(mats.shape[0]):
            out[i] = _cholesky_vjp_2d(gs[i], mats[i])
        return out.reshape(z.shape)

    return impl


def slogdet(a):
    """``np.linalg.slogdet(a)`` (as a tuple) of a matrix or a stack of matrices."""
    return tuple(np.linalg.slogdet(a))


def slogdet_vjp(g, a):
    """The cotangent of ``a`` from that of ``z = (sign, logabsdet) = slogdet(a)``:
    ``g[1] * inv(a).T`` (the sign is piecewise constant)."""
    glog = np.asarray(g[1], dtype=np.float64)
    if glog.size == 0:
        return np.zeros(np.shape(a))
    return glog[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


@numba_impl(slogdet)
def _ol_slogdet(a):
    if a.ndim == 2:
        return lambda a: np.linalg.slogdet(a)

    def impl(a):
        n = a.shape[-1]
        mats = stacked(a, n, n)
        signs, logs = np.empty(mats.shape[0]), np.empty(mats.shape[0])
        for i in range(mats.shape[0]):
            signs[i], logs[i] = np.linalg.slogdet(mats[i])
        return signs.reshape(a.shape[:-2]), logs.reshape(a.shape[:-2])

    return impl


@numba_impl(slogdet_vjp)
def _ol_slogdet_vjp(g, a):
    if a.ndim == 2:
        return lambda g, a: g[1] * np.linalg.inv(a).T.astype(np.float64)

    def impl(g, a):
        n = a.shape[-1]
        mats = stacked(a, n, n)
        out = np.zeros(mats.shape)
        if g[1].size == 0:
            return out.reshape(a.shape)
        glog = np.ascontiguousarray(g[1]).reshape(-1)
        for i in range(mats.shape[0]):
            out[i] = glog[i] * np.linalg.inv(mats[i]).T
        return out.reshape(a.shape)

    return impl


# ---- pinv, matrix_power ---------------------------------------------------------------------
@register_jitable
def pinv_vjp(g, a, z):
    """The cotangent of ``a`` from that of ``z = pinv(a)`` at constant (full) rank:
    ``-Z.T g Z.T + (I - A Z).T g.T Z Z.T + Z.T Z g.T (I - Z A).T`` (Golub and Pereyra)."""
    a, z = a.astype(np.float64), z.astype(np.float64)
    m, n = a.shape
    gt = np.ascontiguousarray(g.T)
    out = -np.dot(np.dot(z.T, g), z.T)
    out += np.dot(np.dot(np.eye(m) - np.dot(a, z), gt), np.dot(z, z.T))
    out += np.dot(np.dot(z.T, z), np.dot(gt, np.eye(n) - np.dot(z, a)))
    return out


@register_jitable
def matrix_power_vjp(g, a, n):
    """The cotangent of ``a`` from that of ``np.linalg.matrix_power(a, n)``: for
    ``B = a`` (``inv(a)`` when ``n < 0``) and ``m = |n|``, ``sum_k (B.T)^k g (B.T)^(m-1-k)``
    (then ``-B.T @ that @ B.T`` for ``n < 0``); 0 for ``n == 0``."""
    size = a.shape[0]
    g = np.ascontiguousarray(g).astype(np.float64)
    base = np.ascontiguousarray(np.linalg.inv(a) if n < 0 else a).astype(np.float64)
    m = -n if n < 0 else n
    powers = np.empty((max(m, 1), size, size))
    powers[0] = np.eye(size)
    for k in range(1, m):
        powers[k] = np.dot(powers[k - 1], base.T)
    out = np.zeros((size, size))
    for k in range(m):
        out += np.dot(np.dot(np.ascontiguousarray(powers[k]), g),
                      np.ascontiguousarray(powers[m - 1 - k]))
    if n < 0:
        return -np.dot(np.dot(base.T, out), base.T)
    return out
