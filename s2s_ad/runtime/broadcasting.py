"""Broadcasting's VJP: sum a cotangent back down to an operand's shape.

NumPy and Numba broadcast operands of ``+``, ``*``, ufuncs...; the cotangent
of a broadcast operand is the result's cotangent summed over the broadcast
dimensions, which Numba has no primitive for.  ``unbroadcast`` does it in both
paths (in Numba with one pass over the cotangent, for any ndim).
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import register_jitable

from .axes import check_array, numba_impl

__all__ = ["accumulate_to_shape", "broadcast_tangent", "unbroadcast", "unbroadcast_scalar",
           "unbroadcast_to_shape"]


@register_jitable
def _unbroadcast_flat(cf, cs, ls):
    """Sum flat C-order ``cf`` of shape ``cs`` down to shape ``ls`` (int arrays)."""
    nc = cs.shape[0]
    nl = ls.shape[0]
    lead = nc - nl
    if lead < 0:
        raise ValueError("cannot unbroadcast to a shape with more dimensions")
    step = np.zeros(nc, np.intp)
    stride = 1
    for j in range(nl - 1, -1, -1):
        d = lead + j
        if ls[j] == cs[d]:
            step[d] = stride
        elif ls[j] != 1:
            raise ValueError("cotangent shape does not broadcast to the operand's shape")
        stride *= ls[j]
    out = np.zeros(stride, cf.dtype)
    if cf.shape[0] == 0:
        return out
    idx = np.zeros(nc, np.intp)
    pos = 0
    for f in range(cf.shape[0]):
        out[pos] += cf[f]
        d = nc - 1
        while d >= 0:
            idx[d] += 1
            pos += step[d]
            if idx[d] < cs[d]:
                break
            pos -= step[d] * cs[d]
            idx[d] = 0
            d -= 1
    return out


def unbroadcast_to_shape(c, shape):
    """Sum ``c`` down to ``shape``: the reverse of broadcasting to ``c.shape``.

    Leading extra dimensions are summed away; dimensions where ``shape`` has 1
    and ``c`` more are summed with keepdims. Always a new array of ``c``'s dtype.

    >>> unbroadcast_to_shape(np.ones((2, 3, 4)), (3, 1))
    array([[8.], [8.], [8.]])
    """
    c = np.asarray(c)
    shape = tuple(shape)
    lead = c.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot unbroadcast shape {c.shape} to {shape}")
    axes = list(range(lead))
    for j, s in enumerate(shape):
        if s == 1 and c.shape[lead + j] != 1:
            axes.append(lead + j)
        elif s != c.shape[lead + j]:
            raise ValueError(f"cannot unbroadcast shape {c.shape} to {shape}")
    if not axes:
        return c.copy()
    return np.sum(c, axis=tuple(axes), keepdims=True).reshape(shape)


@numba_impl(unbroadcast_to_shape)
def _ol_unbroadcast_to_shape(c, shape):
    check_array(c, "c")
    nl = len(shape)
    if nl > c.ndim:
        raise TypingError("array_runtime.unbroadcast: target has more dimensions")

    if nl == c.ndim:  # the common case, no broadcasting: a copy
        def same_ndim(c, shape):
            if c.shape == shape:
                return c.copy()
            return _unbroadcast_to(c, shape)

        return same_ndim
    return _unbroadcast_to


@register_jitable
def _unbroadcast_to(c, shape):
    """Numba: sum ``c`` down to ``shape`` in one pass (see ``unbroadcast_to_shape``)."""
    cs = np.empty(c.ndim, np.intp)
    for d in range(c.ndim):
        cs[d] = c.shape[d]
    ls = np.empty(len(shape), np.intp)
    for d in range(len(shape)):
        ls[d] = shape[d]
    flat = _unbroadcast_flat(np.ascontiguousarray(c).reshape(-1), cs, ls)
    return flat.reshape(shape)


def unbroadcast(c, like):
    """Sum cotangent ``c`` down to the shape of array ``like``.

    See ``unbroadcast_to_shape``; ``like`` is only used for its shape.

    >>> unbroadcast(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
    """
    return unbroadcast_to_shape(c, np.shape(like))


@numba_impl(unbroadcast)
def _ol_unbroadcast(c, like):
    check_array(like, "like")
    return lambda c, like: unbroadcast_to_shape(c, like.shape)


@register_jitable
def unbroadcast_scalar(c):
    """The cotangent of a scalar operand broadcast to ``c``'s shape: ``c.sum()``.

    >>> float(unbroadcast_scalar(np.ones((2, 3))))
    6.0
    """
    return np.sum(c)


def accumulate_to_shape(cotangent, contribution, shape):
    """``accumulate(cotangent, unbroadcast_to_shape(contribution, shape))`` without
    its temporaries: added in place when ``cotangent`` is already an array (and the
    shapes match), one new float64 array when it is still empty (no cotangent yet).

    >>> accumulate_to_shape(np.zeros(0), np.ones((2, 3)), (3,))
    array([2., 2., 2.])
    >>> accumulate_to_shape(np.ones(3), np.ones(3), (3,))
    array([2., 2., 2.])
    """
    contribution = np.asarray(contribution)
    if contribution.size == 0:
        return cotangent
    if cotangent.size == 0:
        return unbroadcast_to_shape(contribution, shape).astype(np.float64, copy=False)
    if contribution.shape == tuple(shape):
        cotangent += contribution
    else:
        cotangent += unbroadcast_to_shape(contribution, shape)
    return cotangent


@numba_impl(accumulate_to_shape)
def _ol_accumulate_to_shape(cotangent, contribution, shape):
    check_array(contribution, "contribution")
    fresh_float = contribution.dtype == types.float64

    def impl(cotangent, contribution, shape):
        if contribution.size == 0:
            return cotangent
        if cotangent.size == 0:
            summed = unbroadcast_to_shape(contribution, shape)  # a new array
            return summed if fresh_float else summed.astype(np.float64)
        if contribution.shape == shape:
            cotangent += contribution
        else:
            cotangent += unbroadcast_to_shape(contribution, shape)
        return cotangent

    return impl



def broadcast_tangent(tangent, like):
    """The tangent of an element-wise result ``like``: ``tangent`` (a number, or an
    array that broadcasts to ``like``'s shape) as a new array of that shape and of
    ``like``'s dtype (a float32 result has a float32 tangent).

    >>> broadcast_tangent(np.ones(3), np.zeros((2, 3)))
    array([[1., 1., 1.],
           [1., 1., 1.]])
    >>> broadcast_tangent(2.0, np.zeros(2, np.float32)).dtype
    dtype('float32')
    """
    return np.array(np.broadcast_to(tangent, np.shape(like)), dtype=like.dtype)


@numba_impl(broadcast_tangent)
def _ol_broadcast_tangent(tangent, like):
    check_array(like, "like")
    if isinstance(tangent, types.Array):
        return lambda tangent, like: np.broadcast_to(tangent, like.shape).astype(like.dtype)
    return lambda tangent, like: np.full(like.shape, tangent, like.dtype)
