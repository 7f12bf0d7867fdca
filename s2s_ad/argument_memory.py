"""The caller's arrays and the generated code's: no silent sharing.

Two guarantees, checked where values cross into generated code:

* what a forward run keeps for its pullback (``value_with_pullback``) is its own:
  it runs on copies of the caller's arrays (arguments and global arrays; not those
  it writes into, which it copies itself), so changing one in place afterwards
  (reusing a batch buffer) does not change the gradient.  PyTorch instead counts
  versions of each tensor and raises at the backward; plain NumPy arrays carry no
  version counter.  Copying only the kept arrays that share memory with the
  caller's would walk every tape item (typed lists of rows) from Python at every
  call, far slower than one copy of each input.
* an argument the generated code writes into shares no memory with another
  argument: Python would read the new values through the other name, the
  generated code (which writes into a copy until it returns) would read the old
  ones, so the call is refused with an :class:`ArgumentError` naming both.

>>> import numpy as np
>>> buffer = np.arange(3.0)
>>> kept = copied((buffer, (buffer, 2.0)))
>>> buffer[:] = 0.0
>>> kept
(array([0., 1., 2.]), (array([0., 1., 2.]), 2.0))
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from numba.typed import List as TypedList

from .errors import ArgumentError
from .kinds import is_structure
from .structures import leaves

_MAX_WORK = 100_000  # exact overlap tests beyond this much work count as sharing


def arrays_in(values: Sequence[Any]) -> list[np.ndarray]:
    """Every array held by ``values``: themselves, or inside tuples, lists, typed lists
    and structures."""
    found: list[np.ndarray] = []
    for value in values:
        _collect(value, found)
    return found


def _collect(value: Any, found: list[np.ndarray]) -> None:
    if isinstance(value, np.ndarray):
        if value.size:
            found.append(value)
    elif isinstance(value, tuple | list | TypedList):
        for item in value:
            _collect(item, found)
    elif is_structure(value):
        _collect(leaves(value), found)


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` overlap (bounds first, then exactly within a work
    limit; too hard to tell counts as overlapping)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=_MAX_WORK))
    except np.exceptions.TooHardError:
        return True


def copied(values: Sequence[Any], keep: Collection[int] = ()) -> tuple:
    """``values`` with every array copied (also inside tuples), except those at the
    positions in ``keep``: what a forward run keeps of them is then its own."""
    return tuple(value if i in keep else _copy(value) for i, value in enumerate(values))


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) is tuple:
        return tuple(_copy(v) for v in value)
    return value


def refuse_overlaps(name: str, params: Sequence[str], written: Sequence[int],
                    args: Sequence[Any]) -> None:
    """An :class:`ArgumentError` if an argument at a ``written`` position shares memory
    with another argument of ``name``'s call."""
    for w in written:
        target = args[w]
        if not isinstance(target, np.ndarray):
            continue
        for i, other in enumerate(args):
            if i == w:
                continue
            for array in arrays_in((other,)):
                if shares_memory(target, array):
                    raise ArgumentError(
                        f"{name} writes into its argument '{params[w]}', and argument "
                        f"'{params[i]}' shares memory with it: Python would read the new "
                        f"values through '{params[i]}', the differentiated code reads the "
                        f"values at the call; pass a copy ({params[i]}.copy())")
