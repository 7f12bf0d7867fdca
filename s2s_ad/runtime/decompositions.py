"""Matrix decompositions and functions of matrices, with their VJPs: ``svd``,
``eigh``/``eigvalsh``, ``cholesky``, ``slogdet``, ``pinv``, ``matrix_power``, the
matrix norms that need singular values, and SciPy's ``solve_triangular``,
``cho_factor``/``cho_solve``, ``cholesky`` and ``expm``.

Each helper runs from Python and inside Numba code with the same results.  Most
are ``register_jitable`` (one body, plain NumPy that Numba also compiles); those
of stacks of matrices (``cholesky``, ``slogdet``) and those SciPy computes in
Python have a Numba implementation of their own (a loop over the stack; forward
and back substitution; a degree-13 Pade approximant with scaling and squaring).

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
- ``cholesky`` (NumPy: lower; SciPy: ``lower``): on the triangle it reads, as eigh.

>>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> slogdet(A)
(np.float64(1.0), np.float64(2.3978952727983707))
>>> bool(np.allclose(cholesky(A) @ cholesky(A).T, A))
True
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba.extending import register_jitable

from .axes import numba_impl
from .linalg import _stack

__all__ = ["cho_factor", "cho_factor_vjp", "cho_solve", "cho_solve_vjp_b", "cho_solve_vjp_c",
           "cholesky", "cholesky_vjp", "eigh", "eigh_vjp", "eigvalsh", "eigvalsh_vjp", "expm",
           "expm_vjp", "matrix_power_vjp", "nuclear_norm_slope", "pinv_vjp", "scipy_cholesky",
           "scipy_cholesky_vjp", "singular_outer", "singular_values", "singular_values_vjp",
           "slogdet", "slogdet_vjp", "solve_triangular", "solve_triangular_vjp_a",
           "solve_triangular_vjp_b", "svd", "svd_vjp"]

_FULL = ("np.linalg.svd: with full_matrices=True the columns of U and rows of Vt beyond "
         "min(m, n) have no derivative: pass full_matrices=False")


# ---- shared pieces ---------------------------------------------------------------------------
@register_jitable
def _or_zeros(g, shape):
    """A cotangent, or zeros of ``shape`` where it is empty ("no cotangent yet")."""
    if g.size == 0:
        return np.zeros(shape)
    return np.ascontiguousarray(g).astype(np.float64)


@register_jitable
def _inverse_gaps(x):
    """``f[i, j] = 1 / (x[j] - x[i])``, 0 where the two are equal (the diagonal too)."""
    k = x.shape[0]
    f = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if x[j] != x[i]:
                f[i, j] = 1.0 / (x[j] - x[i])
    return f


@register_jitable
def _reciprocal_or_zero(s):
    out = np.zeros(s.shape[0])
    for i in range(s.shape[0]):
        if s[i] != 0.0:
            out[i] = 1.0 / s[i]
    return out


@register_jitable
def _onto_triangle(grad, upper):
    """The cotangent of a matrix of which only one triangle is read (as a symmetric
    matrix) from ``grad``, that of the symmetric matrix."""
    if upper:
        return np.triu(grad) + np.triu(grad.T, 1)
    return np.tril(grad) + np.tril(grad.T, -1)


@register_jitable
def _symmetric_from(a, upper):
    """The symmetric matrix NumPy reads from one triangle of ``a``."""
    a = np.asarray(a).astype(np.float64)
    if upper:
        return np.triu(a) + np.triu(a, 1).T
    return np.tril(a) + np.tril(a, -1).T


# ---- svd ------------------------------------------------------------------------------------
@register_jitable
def svd_vjp(g, z):
    """The cotangent of ``a`` from that of ``z = np.linalg.svd(a, full_matrices)``."""
    u_all, s, vt_all = z
    k = s.shape[0]
    gu = _or_zeros(g[0], u_all.shape)
    gs = _or_zeros(g[1], s.shape)
    gvt = _or_zeros(g[2], vt_all.shape)
    if np.any(gu[:, k:] != 0.0) or np.any(gvt[k:, :] != 0.0):
        raise ValueError(_FULL)
    u = np.ascontiguousarray(u_all[:, :k]).astype(np.float64)
    vt = np.ascontiguousarray(vt_all[:k, :]).astype(np.float64)
    s = s.astype(np.float64)
    gu = np.ascontiguousarray(gu[:, :k])
    gvt = np.ascontiguousarray(gvt[:k, :])
    f = _inverse_gaps(s * s)
    utgu = np.dot(u.T, gu)
    vgv = np.dot(vt, gvt.T)
    inner = (f * (utgu - utgu.T)) * s.reshape((1, k)) + np.diag(gs) \
        + s.reshape((k, 1)) * (f * (vgv - vgv.T))
    out = np.dot(np.dot(u, inner), vt)
    m, n = u.shape[0], vt.shape[1]
    inverse = _reciprocal_or_zero(s)
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
    return tuple(np.linalg.eigh(_symmetric_from(a, upper)))


@numba_impl(eigh)
def _ol_eigh(a, upper):
    return lambda a, upper: np.linalg.eigh(_symmetric_from(a, upper))


@register_jitable
def eigvalsh(a, upper):
    """``np.linalg.eigvalsh(a, UPLO="U" if upper else "L")``."""
    return np.linalg.eigvalsh(_symmetric_from(a, upper))


@register_jitable
def eigh_vjp(g, z, upper):
    """The cotangent of ``a`` from that of ``z = (w, v) = eigh(a, upper)``."""
    w, v = z
    v = v.astype(np.float64)
    gw = _or_zeros(g[0], w.shape)
    gv = _or_zeros(g[1], v.shape)
    inner = np.diag(gw) + _inverse_gaps(w.astype(np.float64)) * np.dot(v.T, gv)
    return _onto_triangle(np.dot(np.dot(v, inner), v.T), upper)


@register_jitable
def eigvalsh_vjp(g, a, upper):
    """The cotangent of ``a`` from that of ``eigvalsh(a, upper)``: ``V diag(g) V.T``."""
    w, v = np.linalg.eigh(_symmetric_from(a, upper))
    return _onto_triangle(np.dot(v * g, v.T), upper)


# ---- cholesky, slogdet (stacks of matrices too) -------------------------------------------------
@register_jitable
def _cholesky_vjp_2d(g, low):
    """Of one lower factor ``low`` of ``a``: on the lower triangle NumPy reads."""
    return _onto_triangle(_cholesky_grad(g, low), False)


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
        mats = _stack(a, n, n)
        out = np.empty(mats.shape, dtype=a.dtype)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.cholesky(mats[i])
        return out.reshape(a.shape)

    return impl


@numba_impl(cholesky_vjp)
def _ol_cholesky_vjp(g, z):
    def impl(g, z):
        n = z.shape[-1]
        mats, gs = _stack(z, n, n), _stack(g, n, n)
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
        mats = _stack(a, n, n)
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
        mats = _stack(a, n, n)
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


# ---- scipy.linalg: solve_triangular, cholesky, cho_factor, cho_solve, expm ----------------------
@register_jitable
def _substituted(a, b, transposed, lower, unit):
    """``op(T) x = b`` for the triangle ``T`` of ``a`` (``op``: transposed or not) and a
    2-D ``b``, by forward or back substitution."""
    n = a.shape[0]
    x = np.ascontiguousarray(b).astype(np.float64)
    forward = lower != transposed  # op(T) is lower triangular
    for step in range(n):
        i = step if forward else n - 1 - step
        for j in range(n):
            if (forward and j < i) or (not forward and j > i):
                x[i] -= (a[j, i] if transposed else a[i, j]) * x[j]
        if not unit:
            if a[i, i] == 0.0:
                raise np.linalg.LinAlgError("singular matrix: a diagonal entry is zero")
            x[i] /= a[i, i]
    return x


def solve_triangular(a, b, trans, lower, unit_diagonal):
    """``scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal)`` (``trans`` 0
    or 1)."""
    return scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                         unit_diagonal=unit_diagonal)


@numba_impl(solve_triangular)
def _ol_solve_triangular(a, b, trans, lower, unit_diagonal):
    if b.ndim == 1:
        return lambda a, b, trans, lower, unit_diagonal: _substituted(
            a, np.ascontiguousarray(b).reshape((b.shape[0], 1)), trans == 1, lower,
            unit_diagonal).reshape(b.shape[0])
    return lambda a, b, trans, lower, unit_diagonal: _substituted(
        a, b, trans == 1, lower, unit_diagonal)


@register_jitable
def _triangle(grad, lower, unit):
    """``grad`` on the triangle solve_triangular reads (without the diagonal if unit)."""
    if lower:
        return np.tril(grad, -1 if unit else 0)
    return np.triu(grad, 1 if unit else 0)


@register_jitable
def solve_triangular_vjp_b(g, a, trans, lower, unit_diagonal):
    """The cotangent of ``b`` from that of ``z = solve_triangular(a, b, ...)``:
    ``op(T)^-T g``."""
    return solve_triangular(a, g, 1 - trans, lower, unit_diagonal)


@register_jitable
def solve_triangular_vjp_a(g, a, z, trans, lower, unit_diagonal):
    """The cotangent of ``a``: ``-G z^T`` (``G = op(T)^-T g``) as that of ``op(T)``,
    transposed back if ``trans``, on the triangle read."""
    solved = solve_triangular(a, g, 1 - trans, lower, unit_diagonal)
    if z.ndim == 1:
        grad = -np.outer(solved, z)
    else:
        grad = -np.dot(solved, z.T)
    if trans == 1:
        grad = np.ascontiguousarray(grad.T)
    return _triangle(grad, lower, unit_diagonal)


@register_jitable
def _cholesky_grad(g, low):
    """The cotangent of the symmetric matrix ``A = L L^T`` from that of its lower factor
    ``L``: ``L^-T Phi(L^T g) L^-1`` (Phi: the lower triangle, its diagonal halved)."""
    low = np.ascontiguousarray(low).astype(np.float64)
    phi = np.tril(np.dot(low.T, np.ascontiguousarray(g).astype(np.float64)))
    for i in range(phi.shape[0]):
        phi[i, i] *= 0.5
    left = np.linalg.solve(low.T, phi)
    return np.linalg.solve(low.T, np.ascontiguousarray(left.T)).T


def scipy_cholesky(a, lower):
    """``scipy.linalg.cholesky(a, lower=lower)`` (upper by default, as SciPy)."""
    return scipy.linalg.cholesky(a, lower=lower)


@numba_impl(scipy_cholesky)
def _ol_scipy_cholesky(a, lower):
    def impl(a, lower):
        low = np.linalg.cholesky(_symmetric_from(a, not lower))
        if lower:
            return low
        return np.ascontiguousarray(low.T)

    return impl


@register_jitable
def scipy_cholesky_vjp(g, z, lower):
    """The cotangent of ``a`` from that of ``z = scipy_cholesky(a, lower)``, on the
    triangle SciPy reads."""
    if lower:
        return _onto_triangle(_cholesky_grad(g, z), False)
    return _onto_triangle(_cholesky_grad(np.ascontiguousarray(g.T), np.ascontiguousarray(z.T)),
                          True)


def cho_factor(a, lower):
    """``scipy.linalg.cho_factor(a, lower)``: ``(c, lower)``, the factor in one triangle
    of ``c`` and ``a``'s own entries in the other (SciPy leaves them there)."""
    c, low = scipy.linalg.cho_factor(a, lower=lower)
    return c, bool(low)


@numba_impl(cho_factor)
def _ol_cho_factor(a, lower):
    def impl(a, lower):
        factor = scipy_cholesky(a, lower)
        c = np.ascontiguousarray(a).astype(np.float64)
        n = c.shape[0]
        for i in range(n):
            for j in range(n):
                if (lower and j <= i) or (not lower and j >= i):
                    c[i, j] = factor[i, j]
        return c, lower

    return impl


@register_jitable
def cho_factor_vjp(g, a, z, lower):
    """The cotangent of ``a`` from that of ``z = (c, lower) = cho_factor(a, lower)``:
    the factor's triangle as cholesky's, the other one passed through."""
    gc = _or_zeros(g[0], a.shape)
    c = z[0]
    factor = np.tril(c) if lower else np.triu(c)
    out = scipy_cholesky_vjp(np.tril(gc) if lower else np.triu(gc), factor, lower)
    return out + (np.triu(gc, 1) if lower else np.tril(gc, -1))


def cho_solve(c_and_lower, b):
    """``scipy.linalg.cho_solve((c, lower), b)``."""
    return scipy.linalg.cho_solve(c_and_lower, b)


@numba_impl(cho_solve)
def _ol_cho_solve(c_and_lower, b):
    def impl(c_and_lower, b):
        c, lower = c_and_lower
        if lower:
            return solve_triangular(c, solve_triangular(c, b, 0, True, False), 1, True, False)
        return solve_triangular(c, solve_triangular(c, b, 1, False, False), 0, False, False)

    return impl


@register_jitable
def cho_solve_vjp_b(g, c_and_lower, b):
    """The cotangent of ``b`` from that of ``cho_solve((c, lower), b)``: ``A^-1 g``."""
    return cho_solve(c_and_lower, g)


@register_jitable
def cho_solve_vjp_c(g, c_and_lower, b, z):
    """The cotangent of ``c``: with ``G = -A^-1 g z^T`` that of ``A``, ``(G + G^T) L``
    for ``A = L L^T`` (``U (G + G^T)`` for ``A = U^T U``) on the factor's triangle."""
    c, lower = c_and_lower
    solved = cho_solve(c_and_lower, g)
    if z.ndim == 1:
        grad = -np.outer(solved, z)
    else:
        grad = -np.dot(solved, z.T)
    sym = grad + grad.T
    if lower:
        return np.tril(np.dot(sym, np.tril(c).astype(np.float64)))
    return np.triu(np.dot(np.triu(c).astype(np.float64), sym))


_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)


@register_jitable
def _expm_pade13(a):
    """``exp(a)`` by the degree-13 Pade approximant with scaling and squaring (Higham
    2005), for the Numba path."""
    a = np.ascontiguousarray(a).astype(np.float64)
    n = a.shape[0]
    norm = np.max(np.sum(np.abs(a), axis=0)) if n else 0.0
    squarings = 0
    if norm > 5.371920351148152:
        squarings = int(np.ceil(np.log2(norm / 5.371920351148152)))
    a = a / 2.0 ** squarings
    b = _PADE13
    eye = np.eye(n)
    a2 = np.dot(a, a)
    a4 = np.dot(a2, a2)
    a6 = np.dot(a4, a2)
    u = np.dot(a, np.dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
               + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = np.dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 \
        + b[2] * a2 + b[0] * eye
    r = np.ascontiguousarray(np.linalg.solve(v - u, v + u))
    for _ in range(squarings):
        r = np.dot(r, r)
    return r


def expm(a):
    """``scipy.linalg.expm(a)`` of a matrix."""
    return scipy.linalg.expm(a)


@numba_impl(expm)
def _ol_expm(a):
    return lambda a: _expm_pade13(a)


@register_jitable
def expm_vjp(g, a):
    """The cotangent of ``a`` from that of ``expm(a)``: the Frechet derivative at ``a.T``
    in the direction ``g``, the upper right block of ``expm([[a.T, g], [0, a.T]])``."""
    n = a.shape[0]
    block = np.zeros((2 * n, 2 * n))
    block[:n, :n] = a.T
    block[:n, n:] = g
    block[n:, n:] = a.T
    return np.ascontiguousarray(expm(block)[:n, n:])
