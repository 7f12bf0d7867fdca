"""``np.linalg.det``, ``inv`` and ``solve`` of stacks of matrices, and their VJPs;
``matrix_power`` of a matrix (compiled: Numba's returns an optional array).

NumPy computes these over leading (stack) dimensions: ``det`` of a
``(k, n, n)`` array is ``(k,)``; ``solve(A, b)`` treats ``b`` as one vector
when it is 1-D, else as ``(..., n, m)`` matrices, broadcast against ``A``'s
stack.  Numba's versions take one matrix, so the Numba implementations here
loop over the stack: ``solve`` there needs a 1-D ``b`` or one with as many
dimensions as ``A`` and the same stack dimensions (other forms are refused
when the call is compiled; the Python path does all that NumPy does).

The VJPs, per matrix: ``det``: ``g * det(A) * inv(A).T``; ``inv``:
``-Z.T @ g @ Z.T`` (``Z = inv(A)``); ``solve`` (``Z = solve(A, b)``): ``b``
gets ``G = solve(A.T, g)``, ``A`` gets ``-G @ Z.T`` (``-outer(G, Z)`` for a
vector), each summed back over the stack dimensions it was broadcast along.

>>> A = np.stack([2.0 * np.eye(2), 4.0 * np.eye(2)])
>>> det(A)
array([ 4., 16.])
>>> solve_vjp_b(np.ones((2, 2)), A, np.ones(2))
array([0.75, 0.75])
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import register_jitable

from .axes import numba_impl
from .broadcasting import unbroadcast_to_shape

__all__ = ["det", "det_vjp", "inv", "inv_vjp", "matrix_power", "solve", "solve_vjp_a",
           "solve_vjp_b"]


def _t(a):
    """The matrices of ``a`` transposed (its last two axes swapped)."""
    return np.swapaxes(a, -1, -2)


def det(A):
    """``np.linalg.det(A)`` of a matrix or a stack of matrices."""
    return np.linalg.det(A)


def det_vjp(g, A, z):
    """The cotangent of ``A`` from that of ``z = det(A)``."""
    return (np.asarray(g) * z)[..., None, None] * _t(np.linalg.inv(A))


def inv(A):
    """``np.linalg.inv(A)`` of a matrix or a stack of matrices."""
    return np.linalg.inv(A)


def inv_vjp(g, z):
    """The cotangent of ``A`` from that of ``z = inv(A)``."""
    return -(_t(z) @ g @ _t(z))


def matrix_power(a, n):
    """``np.linalg.matrix_power(a, n)`` of a matrix.

    Numba's own returns an optional array (its code for ``n < 4`` may fall off its
    end), which no function taking an array accepts; this one returns an array on
    every path."""
    return np.linalg.matrix_power(a, n)


@numba_impl(matrix_power)
def _ol_matrix_power(a, n):
    def impl(a, n):
        size = a.shape[0]
        if a.shape[1] != size:
            raise ValueError("matrix_power: the matrix must be square")
        if n == 0:
            return np.eye(size, dtype=a.dtype)
        if n > 0:
            return _powered(np.ascontiguousarray(a), n)
        return _powered(np.ascontiguousarray(np.linalg.inv(a)), -n)

    return impl


@register_jitable
def _powered(base, m):
    """``base`` to the power ``m >= 1``, multiplied in NumPy's order."""
    if m <= 3:
        out = base.copy()
        for _ in range(m - 1):
            out = np.dot(out, base)
        return out
    out, square, first = base.copy(), base.copy(), True
    while m > 0:  # binary powering: square takes base^(2^k) for bit k of m
        if m & 1:
            out = square.copy() if first else np.dot(out, square)
            first = False
        m >>= 1
        if m > 0:
            square = np.dot(square, square)
    return out


def solve(A, b):
    """``np.linalg.solve(A, b)`` with stacks (NumPy's rules)."""
    return np.linalg.solve(A, b)


def _solved_cotangent(g, A, b):
    """``solve(A.T, g)``, per matrix (before summing over broadcast stack dimensions)."""
    if np.ndim(b) == 1:
        return np.linalg.solve(_t(A), g[..., None])[..., 0]
    return np.linalg.solve(_t(A), g)


def solve_vjp_b(g, A, b):
    """The cotangent of ``b`` from that of ``z = solve(A, b)``."""
    return unbroadcast_to_shape(_solved_cotangent(g, A, b), np.shape(b))


def solve_vjp_a(g, A, b, z):
    """The cotangent of ``A`` from that of ``z = solve(A, b)``."""
    solved = _solved_cotangent(g, A, b)
    if np.ndim(b) == 1:
        grad = -solved[..., :, None] * z[..., None, :]
    else:
        grad = -(solved @ _t(z))
    return unbroadcast_to_shape(grad, np.shape(A))


# ---- Numba: loops over the stack -------------------------------------------------------------
@register_jitable
def _stack(a, rows, cols):
    """``a`` as a C-contiguous ``(k, rows, cols)`` array (k: the stack's size)."""
    return np.ascontiguousarray(a).reshape((-1, rows, cols))


@numba_impl(det)
def _ol_det(A):
    if A.ndim == 2:
        return lambda A: np.linalg.det(A)

    def impl(A):
        n = A.shape[-1]
        mats = _stack(A, n, n)
        out = np.empty(mats.shape[0])
        for i in range(mats.shape[0]):
            out[i] = np.linalg.det(mats[i])
        return out.reshape(A.shape[:-2])

    return impl


@numba_impl(det_vjp)
def _ol_det_vjp(g, A, z):
    if A.ndim == 2:
        return lambda g, A, z: g * z * np.linalg.inv(A).T

    def impl(g, A, z):
        n = A.shape[-1]
        mats = _stack(A, n, n)
        scale = np.ascontiguousarray(g * z).reshape(-1)
        out = np.empty(mats.shape)
        for i in range(mats.shape[0]):
            out[i] = scale[i] * np.linalg.inv(mats[i]).T
        return out.reshape(A.shape)

    return impl


@numba_impl(inv)
def _ol_inv(A):
    if A.ndim == 2:
        return lambda A: np.linalg.inv(A)

    def impl(A):
        n = A.shape[-1]
        mats = _stack(A, n, n)
        out = np.empty(mats.shape)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.inv(mats[i])
        return out.reshape(A.shape)

    return impl


@numba_impl(inv_vjp)
def _ol_inv_vjp(g, z):
    def impl(g, z):
        n = z.shape[-1]
        zs, gs = _stack(z, n, n), _stack(g, n, n)
        out = np.empty(zs.shape)
        for i in range(zs.shape[0]):
            out[i] = -np.dot(np.dot(zs[i].T, gs[i]), zs[i].T)
        return out.reshape(z.shape)

    return impl


_SAME_STACK = "np.linalg.solve: A and b must have the same stack dimensions here"


def _check_solve(A, b) -> None:
    """At typing time: the forms of ``solve(A, b)`` the Numba loops handle."""
    if not (isinstance(A, types.Array) and isinstance(b, types.Array)):
        raise TypingError("s2s_ad: np.linalg.solve: A and b must be arrays")
    if A.ndim > 2 and b.ndim not in (1, A.ndim) or A.ndim == 2 and b.ndim > 2:
        raise TypingError(f"s2s_ad: np.linalg.solve of a {A.ndim}-d A and a {b.ndim}-d b is not "
                          "supported under Numba: b must be 1-d or have as many dimensions "
                          "as A (the same stack); jit=False runs NumPy's")


@numba_impl(solve)
def _ol_solve(A, b):
    _check_solve(A, b)
    if A.ndim == 2:
        return lambda A, b: np.linalg.solve(A, b)
    if b.ndim == 1:
        def vector(A, b):
            n = A.shape[-1]
            mats = _stack(A, n, n)
            out = np.empty((mats.shape[0], n))
            for i in range(mats.shape[0]):
                out[i] = np.linalg.solve(mats[i], b)
            return out.reshape(A.shape[:-1])

        return vector

    def matrices(A, b):
        if A.shape[:-2] != b.shape[:-2]:
            raise ValueError(_SAME_STACK)
        n = A.shape[-1]
        mats, rhs = _stack(A, n, n), _stack(b, n, b.shape[-1])
        out = np.empty(rhs.shape)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.solve(mats[i], rhs[i])
        return out.reshape(b.shape)

    return matrices


@numba_impl(solve_vjp_b)
def _ol_solve_vjp_b(g, A, b):
    _check_solve(A, b)
    if A.ndim == 2:
        return lambda g, A, b: np.linalg.solve(A.T, g)
    if b.ndim == 1:
        def vector(g, A, b):
            n = A.shape[-1]
            mats, gs = _stack(A, n, n), np.ascontiguousarray(g).reshape((-1, n))
            out = np.zeros(n)
            for i in range(mats.shape[0]):
                out += np.linalg.solve(mats[i].T, gs[i])
            return out

        return vector

    def matrices(g, A, b):
        n = A.shape[-1]
        mats, gs = _stack(A, n, n), _stack(g, n, b.shape[-1])
        out = np.empty(gs.shape)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.solve(mats[i].T, gs[i])
        return out.reshape(b.shape)

    return matrices


@numba_impl(solve_vjp_a)
def _ol_solve_vjp_a(g, A, b, z):
    _check_solve(A, b)
    if A.ndim == 2 and b.ndim == 1:
        return lambda g, A, b, z: -np.outer(np.linalg.solve(A.T, g), z)
    if A.ndim == 2:
        return lambda g, A, b, z: -np.dot(np.linalg.solve(A.T, g), z.T)
    if b.ndim == 1:
        def vector(g, A, b, z):
            n = A.shape[-1]
            mats = _stack(A, n, n)
            gs = np.ascontiguousarray(g).reshape((-1, n))
            zs = np.ascontiguousarray(z).reshape((-1, n))
            out = np.empty(mats.shape)
            for i in range(mats.shape[0]):
                out[i] = -np.outer(np.linalg.solve(mats[i].T, gs[i]), zs[i])
            return out.reshape(A.shape)

        return vector

    def matrices(g, A, b, z):
        n, m = A.shape[-1], b.shape[-1]
        mats, gs, zs = _stack(A, n, n), _stack(g, n, m), _stack(z, n, m)
        out = np.empty(mats.shape)
        for i in range(mats.shape[0]):
            out[i] = -np.dot(np.linalg.solve(mats[i].T, gs[i]), zs[i].T)
        return out.reshape(A.shape)

    return matrices
