"""Several tangent directions in one forward-mode run: each tangent holds one per
direction along a new leading axis (``ad.jacobian`` in forward mode builds blocks of
columns this way).  ``batch_like(value, k)`` is the empty storage of ``k`` values like
``value`` (a number or an array), ``batch_of(value, k)`` holds ``k`` copies of it.

>>> batch_like(np.ones((2, 3), np.float32), 4).shape, batch_of(1.5, 3).tolist()
((4, 2, 3), [1.5, 1.5, 1.5])
"""

from __future__ import annotations

import numpy as np
from numba.core import types

from .axes import numba_impl

__all__ = ["batch_like", "batch_of"]


def batch_like(value, k):
    """An empty array of ``k`` values shaped like ``value``, of its dtype (float64 for
    a number)."""
    value = np.asarray(value)
    dtype = value.dtype if value.dtype.kind == "f" else np.float64
    return np.empty((k,) + value.shape, dtype)


def batch_of(value, k):
    """``k`` copies of ``value`` along a new leading axis (a zero tangent for each
    direction, say)."""
    out = batch_like(value, k)
    out[...] = value
    return out


@numba_impl(batch_like)
def _ol_batch_like(value, k):
    if isinstance(value, types.Array):
        dtype = value.dtype if isinstance(value.dtype, types.Float) else types.float64
        return lambda value, k: np.empty((k,) + value.shape, dtype)
    return lambda value, k: np.empty(k)


@numba_impl(batch_of)
def _ol_batch_of(value, k):
    if isinstance(value, types.Array):
        def impl(value, k):
            out = batch_like(value, k)
            for j in range(k):
                out[j] = value
            return out
        return impl
    return lambda value, k: np.full(k, float(value))
