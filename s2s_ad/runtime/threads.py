"""Parallel loops: ``prange`` and how a pullback splits a loop's iterations.

The reverse of a parallel loop runs its iterations in ``chunk_count(trips)``
chunks, chunk ``c`` taking iterations ``c, c + chunks, c + 2 * chunks, ...``
(interleaved, so a triangular loop such as ``for j in range(i + 1, n)`` inside
shares its work evenly).  Each chunk adds its cotangents into its own row of a
buffer, summed when the loop ends.  The chunks depend only on the trip count
and the number of threads, so the Python path (which runs them one after
another) and Numba (which runs them at once) add in the same order.

>>> chunk_count(1) <= 1 and chunk_count(10 ** 6) >= 1
True
>>> list(prange(3))
[0, 1, 2]
"""

from __future__ import annotations

import numba
from numba.extending import register_jitable

__all__ = ["chunk_count", "prange"]

prange = numba.prange  # Numba's parallel range (``range`` when run by Python)


@register_jitable
def chunk_count(trips):
    """How many chunks the reverse of a loop of ``trips`` iterations runs in: one per
    thread Numba uses now (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``), never
    more than the iterations, at least one."""
    return max(1, min(numba.get_num_threads(), trips))
