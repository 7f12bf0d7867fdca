"""Storage for the reverse pass: growable tapes and array cotangents.

A loop whose trip count is not known ahead pushes the values the pullback
needs onto a *tape*, an array that ``grow`` makes half as long again when full.

An array cotangent starts as an *empty* array of the right rank, meaning "no
cotangent yet", so the forward pass never has to save a shape only for the
pullback: the first contribution takes its place (``accumulate``), and
``materialize`` turns a still-empty cotangent into zeros when a full array is
needed (item updates, the pullback's results).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

__all__ = ["accumulate", "grow", "materialize"]


@register_jitable
def grow(tape, position):
    """``tape`` with room for index ``position``: half as long again when full.

    Growing by half (not doubling) keeps the spare room, which the pullback never
    reads, under half of what the tape holds, at an amortised three copies per
    item instead of two.

    >>> grow(np.zeros(2), 1).shape, grow(np.zeros(2), 2).shape, grow(np.zeros(16), 16).shape
    ((2,), (8,), (24,))
    """
    n = tape.shape[0]
    if position < n:
        return tape
    bigger = np.empty(max(n + n // 2, position + 1, 8), tape.dtype)
    bigger[:n] = tape
    return bigger


@register_jitable
def accumulate(cotangent, contribution):
    """``cotangent + contribution`` for array cotangents, in place when it can.

    An empty ``cotangent`` means "none yet": the contribution (as float64) takes
    its place, so a cotangent's shape comes from its first contribution.  An empty
    contribution (a cotangent that never received one) adds nothing.

    >>> accumulate(np.zeros((0, 0)), np.ones((2, 2), dtype=int))
    array([[1., 1.], [1., 1.]])
    """
    if cotangent.size == 0:
        return contribution.astype(np.float64)
    if contribution.size == 0:
        return cotangent
    cotangent += contribution
    return cotangent


@register_jitable
def materialize(cotangent, like):
    """The array cotangent, or zeros shaped like ``like`` if there is none yet.

    >>> materialize(np.zeros(0), np.ones(3))
    array([0., 0., 0.])
    """
    if cotangent.size == 0 and like.size != 0:
        return np.zeros(like.shape)
    return cotangent
