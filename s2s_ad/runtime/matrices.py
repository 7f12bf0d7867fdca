"""Pieces the matrix helpers share (private: ``decompositions``, ``scipy_linalg``), each
usable from Python and from Numba: zeros for an empty cotangent, the cotangent of a
matrix of which one triangle is read, the symmetric matrix read from one triangle, the
gradient through a Cholesky factor, and a stack of matrices as one 3-D array.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable


@register_jitable
def or_zeros(g, shape):
    """A cotangent, or zeros of ``shape`` where it is empty ("no cotangent yet")."""
    if g.size == 0:
        return np.zeros(shape)
    return np.ascontiguousarray(g).astype(np.float64)


@register_jitable
def inverse_gaps(x):
    """``f[i, j] = 1 / (x[j] - x[i])``, 0 where the two are equal (the diagonal too)."""
    k = x.shape[0]
    f = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if x[j] != x[i]:
                f[i, j] = 1.0 / (x[j] - x[i])
    return f


@register_jitable
def reciprocal_or_zero(s):
    out = np.zeros(s.shape[0])
    for i in range(s.shape[0]):
        if s[i] != 0.0:
            out[i] = 1.0 / s[i]
    return out


@register_jitable
def onto_triangle(grad, upper):
    """The cotangent of a matrix of which only one triangle is read (as a symmetric
    matrix) from ``grad``, that of the symmetric matrix."""
    if upper:
        return np.triu(grad) + np.triu(grad.T, 1)
    return np.tril(grad) + np.tril(grad.T, -1)


@register_jitable
def symmetric_from(a, upper):
    """The symmetric matrix NumPy reads from one triangle of ``a``."""
    a = np.asarray(a).astype(np.float64)
    if upper:
        return np.triu(a) + np.triu(a, 1).T
    return np.tril(a) + np.tril(a, -1).T


@register_jitable
def cholesky_grad(g, low):
    """The cotangent of the symmetric matrix ``A = L L^T`` from that of its lower factor
    ``L``: ``L^-T Phi(L^T g) L^-1`` (Phi: the lower triangle, its diagonal halved)."""
    low = np.ascontiguousarray(low).astype(np.float64)
    phi = np.tril(np.dot(low.T, np.ascontiguousarray(g).astype(np.float64)))
    for i in range(phi.shape[0]):
        phi[i, i] *= 0.5
    left = np.linalg.solve(low.T, phi)
    return np.linalg.solve(low.T, np.ascontiguousarray(left.T)).T


@register_jitable
def stacked(a, rows, cols):
    """``a`` as a C-contiguous ``(k, rows, cols)`` array (k: the stack's size)."""
    return np.ascontiguousarray(a).reshape((-1, rows, cols))
