"""The tangents of the matrix decompositions (forward mode: ``ad.jvp``, and second
derivatives through them), one matrix at a time, each the transpose of its pullback
in ``decompositions`` (so the two modes agree, ties and triangles included):

- ``cholesky_tangent(t, low)``: of ``low = cholesky(a)`` along ``t``, of which NumPy
  reads the lower triangle as it reads ``a``'s: ``low Phi(low^-1 S low^-T)``, ``S``
  the symmetric matrix of that triangle and ``Phi`` the lower triangle with its
  diagonal halved;
- ``eigvalsh_tangent(t, a, upper)``: ``diag(V^T S V)``, ``S`` the symmetric matrix of
  the triangle read;
- ``eigh_tangent(t, z, upper)`` of ``z = (w, V)``: ``(diag(M), V (F * M))`` with
  ``M = V^T S V`` and ``F[i, j] = 1 / (w[j] - w[i])`` (0 on equal eigenvalues, as the
  pullback);
- ``singular_values_tangent(t, a)``: ``u_i^T t v_i`` for each singular value.

Plain NumPy that Numba compiles as written (``register_jitable``).

>>> import numpy as np
>>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> low = np.linalg.cholesky(a)
>>> bool(np.allclose(cholesky_tangent(np.eye(2), low),
...                  (np.linalg.cholesky(a + 1e-7 * np.eye(2)) - low) / 1e-7, atol=1e-6))
True
>>> eigvalsh_tangent(np.eye(2), a, False)
array([1., 1.])
>>> singular_values_tangent(np.eye(2), np.diag([3.0, 2.0]))
array([1., 1.])
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .matrices import inverse_gaps, symmetric_from

__all__ = ["cholesky_tangent", "eigh_tangent", "eigvalsh_tangent", "singular_values_tangent"]


@register_jitable
def cholesky_tangent(t, low):
    """The tangent of ``low = cholesky(a)`` along ``t`` (see the module docstring)."""
    low = np.ascontiguousarray(low).astype(np.float64)
    inner = np.linalg.solve(low, symmetric_from(t, False))
    inner = np.tril(np.linalg.solve(low, np.ascontiguousarray(inner.T)))
    for i in range(inner.shape[0]):
        inner[i, i] *= 0.5
    return np.dot(low, inner)


@register_jitable
def eigvalsh_tangent(t, a, upper):
    """The tangent of ``eigvalsh(a, upper)`` along ``t``: ``diag(V^T S V)``."""
    vectors = np.linalg.eigh(symmetric_from(a, upper))[1].astype(np.float64)
    return np.sum(vectors * np.dot(symmetric_from(t, upper), vectors), axis=0)


@register_jitable
def eigh_tangent(t, z, upper):
    """The tangent of ``z = (w, V) = eigh(a, upper)`` along ``t``, a tuple."""
    w, v = z
    v = v.astype(np.float64)
    m = np.dot(v.T, np.dot(symmetric_from(t, upper), v))
    return np.diag(m).copy(), np.dot(v, inverse_gaps(w.astype(np.float64)) * m)


@register_jitable
def singular_values_tangent(t, a):
    """The tangent of ``np.linalg.svd(a, compute_uv=False)`` along ``t``:
    ``u_i^T t v_i``."""
    u, s, vt = np.linalg.svd(a, False)
    u = np.ascontiguousarray(u).astype(np.float64)
    t = np.ascontiguousarray(t).astype(np.float64)
    return np.sum(u * np.dot(t, np.ascontiguousarray(vt.T).astype(np.float64)), axis=0)
