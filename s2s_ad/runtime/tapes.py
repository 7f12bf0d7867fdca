"""Storage for the reverse pass: growable tapes and array cotangents.

A loop whose trip count is not known ahead pushes the values the pullback
needs onto a *tape*, an array that ``grow`` makes half as long again when full.
Arrays computed in a loop are copied one after another into a *block*, one flat
buffer (``block_push``), and read back as views of it (``block_read``): one
allocation instead of one per iteration, and the loop's temporaries are freed.

An array cotangent starts as an *empty* array of the right rank, meaning "no
cotangent yet", so the forward pass never has to save a shape only for the
pullback: the first contribution takes its place (``accumulate``), and
``materialize`` turns a still-empty cotangent into zeros when a full array is
needed (item updates, the pullback's results).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

__all__ = ["accumulate", "add_in_place", "block_push", "block_read", "grow", "materialize"]


@register_jitable
def grow(tape, position):
    """``tape`` with room for index ``position``: half as long again when full (a
    tape of several columns, as forward mode keeps tangent tapes, grows by rows).

    Growing by half (not doubling) keeps the spare room, which the pullback never
    reads, under half of what the tape holds, at an amortised three copies per
    item instead of two.

    >>> grow(np.zeros(2), 1).shape, grow(np.zeros(2), 2).shape, grow(np.zeros(16), 16).shape
    ((2,), (8,), (24,))
    """
    n = tape.shape[0]
    if position < n:
        return tape
    bigger = np.empty((max(n + n // 2, position + 1, 8),) + tape.shape[1:], tape.dtype)
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
def add_in_place(view, contribution):
    """``view += contribution``, into the memory ``view`` shares (a slice of a
    cotangent), with no copy back.

    >>> cotangent = np.zeros(4)
    >>> add_in_place(cotangent[1:3], np.ones(2))
    >>> cotangent.tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    view += contribution


@register_jitable
def materialize(cotangent, like):
    """The array cotangent, or zeros shaped like ``like`` if there is none yet.

    >>> materialize(np.zeros(0), np.ones(3))
    array([0., 0., 0.])
    """
    if cotangent.size == 0 and like.size != 0:
        return np.zeros(like.shape)
    return cotangent


@register_jitable
def block_push(block, at, value, expected):
    """``block`` with ``value`` copied in at flat offset ``at``: the same buffer if it
    has room, else a larger one. The first push makes room for ``expected`` values
    of its size (the loop's trip count, when known), later growth doubles.

    >>> block = block_push(np.empty(0), 0, np.ones((2, 2)), 3)
    >>> block.shape, block_read(block_push(block, 4, np.full((2, 2), 2.0), 3), 4, (2, 2)).tolist()
    ((12,), [[2.0, 2.0], [2.0, 2.0]])
    """
    n = value.size
    if at + n > block.shape[0]:
        room = n * max(expected, 1) if block.shape[0] == 0 else 2 * block.shape[0]
        bigger = np.empty(max(room, at + n), block.dtype)
        bigger[:at] = block[:at]
        block = bigger
    i = at
    for item in value.flat:  # (no reshape: Numba compiles its error message slowly)
        block[i] = item
        i += 1
    return block


@register_jitable
def block_read(block, at, shape):
    """The array of ``shape`` that ``block_push`` copied in at offset ``at`` (a view).

    >>> block_read(np.arange(6.0), 2, (2, 2)).tolist()
    [[2.0, 3.0], [4.0, 5.0]]
    """
    n = 1
    for d in shape:
        n *= d
    return block[at:at + n].reshape(shape)

