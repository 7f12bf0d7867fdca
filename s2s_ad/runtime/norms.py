"""The slope of a vector p-norm, for ``np.linalg.norm(x, ord=p)`` with ``p`` other
than 1, 2 and infinity (whose VJPs are those of sum, norm, max and min)."""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import register_jitable

from .axes import check_array, numba_impl

__all__ = ["norm_p_slope"]


def norm_p_slope(x, z, p):
    """``d norm / dx = sign(x) * (|x| / z) ** (p - 1)`` where ``z`` is the p-norm,
    broadcast against ``x`` (a scalar, or shaped to broadcast); 0 where ``x`` or ``z``
    is 0 (a subgradient at the norm's kink; for p < 1 the slope is unbounded there).

    >>> norm_p_slope(np.array([3.0, -4.0, 0.0]), 5.0, 2.0)
    array([ 0.6, -0.8,  0. ])
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.broadcast_to(np.asarray(z, dtype=np.float64), x.shape)
    out = np.zeros(x.shape)
    where = (x != 0) & (z > 0)
    out[where] = np.sign(x[where]) * (np.abs(x[where]) / z[where]) ** (p - 1.0)
    return out


@numba_impl(norm_p_slope)
def _ol_norm_p_slope(x, z, p):
    check_array(x, "x")
    if isinstance(z, types.Array):
        def impl(x, z, p):
            return _slope(np.ascontiguousarray(x).ravel(),
                          np.ascontiguousarray(np.broadcast_to(z, x.shape)).ravel(),
                          p).reshape(x.shape)
        return impl

    def impl(x, z, p):
        return _slope(np.ascontiguousarray(x).ravel(), np.full(x.size, z), p).reshape(x.shape)

    return impl


@register_jitable
def _slope(xf, zf, p):
    out = np.zeros(xf.size)
    for i in range(xf.size):
        if xf[i] != 0 and zf[i] > 0:
            out[i] = np.sign(xf[i]) * (abs(xf[i]) / zf[i]) ** (p - 1.0)
    return out
