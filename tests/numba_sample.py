"""Which catalogue cases the default run also checks on the Numba path.

A Numba compile costs about a second per case; the default run (``.ci/run``, twelve
minutes on two cores) compiles one case in ``EVERY``, chosen by a hash of the case's
name, so the same cases run every time. The slow tier (``pytest -m slow``) checks the
Numba path of all the others; every case's Python path runs by default.

>>> numba_marks("einsum_matmul") in ((), (pytest.mark.slow,))
True
"""

import zlib

import pytest

EVERY = 8


def numba_marks(name: str) -> tuple:
    """No marks for a case whose Numba path runs by default, the slow mark otherwise."""
    return () if zlib.crc32(name.encode()) % EVERY == 0 else (pytest.mark.slow,)
