"""The caller's arrays and the generated code's: no silent sharing.

Two guarantees, checked where values cross into generated code:

* what a forward run keeps for its pullback (``value_with_pullback``) is its own:
  a kept array that shares memory with an array the caller passed is copied, so
  changing the argument in place afterwards (reusing a batch buffer) does not
  change the gradient.  (PyTorch instead counts versions of each tensor and raises
  at the backward; plain NumPy arrays carry no version counter, and the copy
  happens only for the arrays that do share memory.)
* an argument the generated code writes into shares no memory with another
  argument: Python would read the new values through the other name, the
  generated code (which writes into a copy until it returns) would read the old
  ones, so the call is refused with an :class:`ArgumentError` naming both.

>>> import numpy as np
>>> buffer = np.arange(3.0)
>>> kept = detached((buffer[1:], 2.0), (buffer,))
>>> buffer[:] = 0.0
>>> kept
(array([1., 2.]), 2.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba.typed import List as TypedList

from .errors import ArgumentError
from .kinds import is_structure
from .structures import leaves

_MAX_WORK = 100_000  # exact overlap tests beyond this much work count as sharing


def arrays_in(values: Sequence[Any], lists: set[int] | None = None) -> list[np.ndarray]:
    """Every array held by ``values``: themselves, or inside tuples, lists, typed lists
    and structures (the ids of the lists met are added to ``lists``)."""
    found: list[np.ndarray] = []
    for value in values:
        _collect(value, found, lists if lists is not None else set())
    return found


def _collect(value: Any, found: list[np.ndarray], lists: set[int]) -> None:
    if isinstance(value, np.ndarray):
        if value.size:
            found.append(value)
    elif isinstance(value, tuple | list | TypedList):
        if not isinstance(value, tuple):
            lists.add(id(value))
        for item in value:
            _collect(item, found, lists)
    elif is_structure(value):
        _collect(leaves(value), found, lists)


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` overlap (bounds first, then exactly within a work
    limit; too hard to tell counts as overlapping)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=_MAX_WORK))
    except np.exceptions.TooHardError:
        return True


def detached(kept: Any, passed: Sequence[Any]) -> Any:
    """``kept`` with every array that may share memory with an array of ``passed``
    copied, and every list of ``passed`` copied (containers rebuilt around the
    copies; the rest returned as it is)."""
    lists: set[int] = set()
    sources = arrays_in(passed, lists)
    if not sources and not lists:
        return kept
    return _detach(kept, sources, lists)


def _detach(value: Any, sources: list[np.ndarray], lists: set[int]) -> Any:
    if isinstance(value, np.ndarray):
        if any(np.may_share_memory(value, s) for s in sources):
            return value.copy()
        return value
    if isinstance(value, tuple):
        items = [_detach(v, sources, lists) for v in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return tuple(items) if changed else value
    if isinstance(value, TypedList) and id(value) not in lists and \
            "array" not in str(value._dtype):
        return value  # numbers only: nothing to walk (item reads from Python are slow)
    if isinstance(value, list | TypedList):
        items = [_detach(v, sources, lists) for v in value]
        if isinstance(value, list):  # a new list: the caller may change its own later
            return items
        if id(value) not in lists and all(
                new is old for new, old in zip(items, value, strict=True)):
            return value
        fresh = TypedList.empty_list(value._dtype)
        for item in items:
            fresh.append(item)
        return fresh
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
