"""SciPy's ``solve_triangular``, ``cholesky``, ``cho_factor``/``cho_solve`` and ``expm``,
with their VJPs: SciPy's functions on the Python path, implementations of their own
under Numba (forward and back substitution; a degree-13 Pade approximant with scaling
and squaring), and the derivatives on the entries SciPy reads (a triangular solve's
triangle, without the diagonal when ``unit_diagonal``; the triangle a Cholesky
factorization reads).  ``expm``'s VJP is the Frechet derivative at ``a.T``: the upper
right block of ``expm([[a.T, g], [0, a.T]])``.

>>> A = np.array([[2.0, 0.0], [1.0, 1.0]])
>>> solve_triangular(A, np.array([2.0, 2.0]), 0, True, False)
array([1., 1.])
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba.extending import register_jitable

from .axes import numba_impl
from .matrices import cholesky_grad, onto_triangle, or_zeros, symmetric_from

__all__ = ["cho_factor", "cho_factor_vjp", "cho_solve", "cho_solve_vjp_b", "cho_solve_vjp_c",
           "expm", "expm_vjp", "scipy_cholesky", "scipy_cholesky_vjp", "solve_triangular",
           "solve_triangular_vjp_a", "solve_triangular_vjp_b"]


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


def scipy_cholesky(a, lower):
    """``scipy.linalg.cholesky(a, lower=lower)`` (upper by default, as SciPy)."""
    return scipy.linalg.cholesky(a, lower=lower)


@numba_impl(scipy_cholesky)
def _ol_scipy_cholesky(a, lower):
    def impl(a, lower):
        low = np.linalg.cholesky(symmetric_from(a, not lower))
        if lower:
            return low
        return np.ascontiguousarray(low.T)

    return impl


@register_jitable
def scipy_cholesky_vjp(g, z, lower):
    """The cotangent of ``a`` from that of ``z = scipy_cholesky(a, lower)``, on the
    triangle SciPy reads."""
    if lower:
        return onto_triangle(cholesky_grad(g, z), False)
    return onto_triangle(cholesky_grad(np.ascontiguousarray(g.T), np.ascontiguousarray(z.T)),
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
    gc = or_zeros(g[0], a.shape)
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
