"""Keep freed memory in the process, so tapes do not page-fault on every call.

A gradient of a loop allocates its tapes afresh on every call (``np.empty`` in
compiled code, which is ``malloc``).  glibc returns large freed blocks to the
operating system (``munmap``, heap trimming), so the next call's tapes are new
pages, and the first write to each page is a page fault: measured on this
project's benchmark machine, the ADBench GMM gradient's forward sweep took
59 ms with glibc's defaults and 18 ms with freed memory kept (its primal: 2.7
ms).  JAX and PyTorch keep memory pools for the same reason.

:func:`keep_freed_memory` raises glibc's mmap and trim thresholds (``mallopt``)
once, the first time s2s_ad compiles a function with Numba.  The cost: memory a
gradient freed stays mapped in the process (up to the largest gradient's peak)
instead of going back to the system.  Set ``S2S_AD_KEEP_MEMORY=0`` to keep
glibc's defaults.  Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_THRESHOLD = 1 << 30  # blocks up to 1 GiB come from (and go back to) the heap

_done = False
_state = False


def keep_freed_memory() -> bool:
    """Raise glibc's thresholds (once); whether they are raised."""
    global _done
    if _done:
        return _state
    _done = True
    if os.environ.get("S2S_AD_KEEP_MEMORY", "1") == "0":
        return _set(False)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return _set(False)
    ok = mallopt(_M_MMAP_THRESHOLD, _THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD,
                                                                 _THRESHOLD) == 1
    return _set(ok)


def _set(value: bool) -> bool:
    global _state
    _state = value
    return value
