"""Parallel loops: ``prange``, how a pullback splits a loop's iterations, and how a
caller learns that a loop did not finish.

The reverse of a parallel loop runs its iterations in ``chunk_count(trips)``
chunks, chunk ``c`` taking iterations ``c, c + chunks, c + 2 * chunks, ...``
(interleaved, so a triangular loop such as ``for j in range(i + 1, n)`` inside
shares its work evenly).  Each chunk adds its cotangents into its own row of a
buffer, summed when the loop ends.  The chunks depend only on the trip count
and the number of threads, so the Python path (which runs them one after
another) and Numba (which runs them at once) add in the same order.

Numba loses an exception raised in one of its threads (the thread stops its share of
the iterations, and the function returns what the others computed), so every
parallel loop counts what finished: each iteration (or chunk) sets its own flag as
its last statement, and ``check_finished`` raises :class:`LoopNotFinished` after the
loop, outside the threads, when a flag is unset.  The caller then runs the Python
path again, which raises the real error (see ``s2s_ad.compiler.jit``).

>>> chunk_count(1) <= 1 and chunk_count(10 ** 6) >= 1
True
>>> list(prange(3))
[0, 1, 2]
>>> import numpy as np
>>> check_finished(np.ones(3, np.bool_))
>>> try:
...     check_finished(np.array([True, False]))
... except LoopNotFinished as e:
...     print(e)
a parallel loop did not finish
"""

from __future__ import annotations

import numba
from numba.extending import register_jitable

__all__ = ["LoopNotFinished", "check_finished", "chunk_count", "prange"]

prange = numba.prange  # Numba's parallel range (``range`` when run by Python)


class LoopNotFinished(RuntimeError):
    """Some iterations of a parallel loop did not finish: one raised an exception in
    a thread of Numba's, which loses it."""


@register_jitable
def chunk_count(trips):
    """How many chunks the reverse of a loop of ``trips`` iterations runs in: one per
    thread Numba uses now (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``), never
    more than the iterations, at least one."""
    return max(1, min(numba.get_num_threads(), trips))


@register_jitable
def check_finished(finished):
    """Raise :class:`LoopNotFinished` unless every flag of ``finished`` (one per
    iteration or chunk of a parallel loop, set as its last statement) is set."""
    for flag in finished:
        if not flag:
            raise LoopNotFinished("a parallel loop did not finish")
