"""The one registry mechanism: every table of derivative knowledge, one generation.

The built-in rules (:mod:`s2s_ad.rules`), ``@derivative`` and
``differentiable_function`` (:mod:`s2s_ad.markers`), kernels, kernel gradients
and ``custom_grad`` (:mod:`s2s_ad.kernels`) each keep a :class:`Table`.  A table
maps keys to entries: an object (a function, a ufunc) is keyed by identity, so a
function redefined in a notebook is a new key and a dead function's reused
``id`` never finds its entry; names, numbers and tuples of them (a kernel's
``(name, backend)``, a rule's ``(callee, nargs)``) by equality, item by item.
Every change to any table bumps one generation (:func:`generation`), which the
compiled dependency check of every transform reads: a transform built before a
registration, a replacement or a removal is rebuilt after it.

>>> table = Table("example")
>>> def cube(x):
...     return x ** 3
>>> before = generation()
>>> table[cube, 1] = "rule for cube(x)"
>>> table.get((cube, 1)), generation() - before
('rule for cube(x)', 1)
>>> def cube(x):  # redefined: a new object, not the registered one
...     return x * x * x
>>> table.get((cube, 1)) is None
True
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

#: The generation of every table, in a list so that compiled checks can hold it and
#: read ``GENERATION[0]`` (see :mod:`s2s_ad.compiler.dependencies`).
GENERATION = [0]

_BY_VALUE = (str, int, float, bool, type(None))


def generation() -> int:
    """How many registrations, replacements and removals there have been so far."""
    return GENERATION[0]


def _slot(key: Any) -> Hashable:
    """The dict key standing for ``key``: values by equality, objects by identity."""
    if isinstance(key, tuple):
        return tuple(_slot(k) for k in key)
    if isinstance(key, _BY_VALUE):
        return key
    return ("object", id(key))


def _same(stored: Any, key: Any) -> bool:
    if isinstance(key, tuple):
        return isinstance(stored, tuple) and len(stored) == len(key) and all(
            _same(s, k) for s, k in zip(stored, key, strict=True))
    return stored == key if isinstance(key, _BY_VALUE) else stored is key


class Table:
    """One table of the registry: ``table[key] = entry``, ``table.get(key)``,
    ``del table[key]``; iteration gives ``(key, entry)`` pairs in registration order.
    It keeps its keys alive, so an object's identity stays its own while registered."""

    def __init__(self, name: str):
        self.name = name
        self._entries: dict[Hashable, tuple[Any, Any]] = {}

    def __setitem__(self, key: Any, entry: Any) -> None:
        self._entries[_slot(key)] = (key, entry)
        GENERATION[0] += 1

    def __delitem__(self, key: Any) -> None:
        if key not in self:
            raise KeyError(key)
        del self._entries[_slot(key)]
        GENERATION[0] += 1

    def get(self, key: Any, default: Any = None) -> Any:
        """The entry of ``key`` (``default`` when there is none)."""
        stored = self._entries.get(_slot(key))
        return stored[1] if stored is not None and _same(stored[0], key) else default

    def __contains__(self, key: Any) -> bool:
        stored = self._entries.get(_slot(key))
        return stored is not None and _same(stored[0], key)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<registry table {self.name!r}: {len(self)} entries>"
