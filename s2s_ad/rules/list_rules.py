"""Rules of growing lists (``items = []``, ``items.append(v)``, ``np.array(items)``).

Their adjoints are not templates: the reverse pass (``reverse/lists.py``) pops,
adds into and unstacks list cotangents with the helpers of ``runtime.lists``.
The templates here only tell activity analysis which operands carry
derivatives.
"""

from __future__ import annotations

from .. import runtime
from ..kinds import ArrayKind, Kind, ListKind, join
from .registry import primitive


def _appended(kinds: list, operands: list) -> Kind:
    items, value = kinds
    return ListKind(join(items.element, value)) if isinstance(items, ListKind) else "unknown"


def _as_array(kinds: list, operands: list) -> Kind | None:
    items = kinds[0]
    if not isinstance(items, ListKind):
        return "unknown"
    element = items.element
    if element is None:
        return None  # no item yet (kinds are still being inferred)
    if isinstance(element, ArrayKind):
        ndim = None if element.ndim is None else element.ndim + 1
        return ArrayKind(ndim, element.floating, element.boolean)
    return ArrayKind(1, element not in ("int", "bool"), element == "bool")


def _merged(kinds: list, operands: list) -> Kind:
    a = kinds[0]
    if isinstance(a, ArrayKind) and a.ndim is None:
        return a
    if not isinstance(a, ArrayKind) or a.ndim < 2:
        raise ValueError("np.concatenate of a list needs items that are arrays")
    return ArrayKind(a.ndim - 1, a.floating, a.boolean)


primitive(runtime.new_list, (), kind=ListKind(), name="List")
primitive(runtime.appended, ("items", "value"), {"items": "g", "value": "g"}, kind=_appended)
primitive(runtime.list_array, ("items",), {"items": "g"}, kind=_as_array)
primitive(runtime.list_position, ("items", "i"), kind="int")
primitive(runtime.merge_leading, ("a",), {"a": "rt.reshape_like(g, a)"}, kind=_merged)
