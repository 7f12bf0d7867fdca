"""Rules of growing lists (``items = []``, ``items.append(v)``, ``np.array(items)``,
``np.concatenate(items)`` and ``np.hstack``/``np.vstack`` of them).

The pullbacks of ``rt.appended``, ``rt.list_array`` and the joins are not templates: the
reverse pass pops, adds into and unstacks list cotangents with the helpers of
``runtime.lists``.  Their rules say which operands carry a derivative
(``BY_REVERSE_PASS``) and hold the builder of that reverse step in ``reverse``,
which the compiler's ``reverse/lists.py`` sets with ``@reverse_pass(...)`` (rules
do not import the compiler); ``tests/rules/test_rule_model.py`` checks that every
such rule has its builder.
"""

from __future__ import annotations

from .. import runtime
from ..kinds import ArrayKind, Kind, ListKind, join
from .registry import BY_REVERSE_PASS, primitive


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


def _joined(rank: int, name: str):
    """The kind of ``name`` of a list: items promoted to ``rank`` dimensions (numbers to
    ``rank``; 0 for ``np.concatenate``, which refuses numbers), joined."""

    def kind(kinds: list, operands: list) -> Kind | None:
        items = kinds[0]
        if not isinstance(items, ListKind):
            return "unknown"
        element = items.element
        if element is None:
            return None  # no item yet (kinds are still being inferred)
        if isinstance(element, ArrayKind) and element.ndim != 0:
            ndim = None if element.ndim is None else max(element.ndim, rank)
            return ArrayKind(ndim, element.floating, element.boolean)
        if rank == 0 or isinstance(element, ArrayKind):
            raise ValueError(f"np.{name} of a list needs items that are arrays")
        return ArrayKind(rank, element not in ("int", "bool"), element == "bool")

    return kind


primitive(runtime.new_list, (), kind=ListKind(), name="List")
# items.append(value): the pullback pops the item's cotangent (reverse/lists.append_item)
primitive(runtime.appended, ("items", "value"), dict.fromkeys(("items", "value"), BY_REVERSE_PASS),
          kind=_appended)
# np.array(items): each row of the cotangent goes to its item (reverse/lists.as_array)
def _as_array_variant(consts: dict, kinds: dict) -> dict:
    """An empty list of arrays still makes an array of their dimensions and one more."""
    element = getattr(kinds.get("items"), "element", None)
    if isinstance(element, ArrayKind) and element.ndim is not None:
        return {"forward": f"rt.list_array(items, {element.ndim + 1})"}
    return {}


primitive(runtime.list_array, ("items",), {"items": BY_REVERSE_PASS}, kind=_as_array,
          variant=_as_array_variant)
# np.concatenate, np.hstack, np.vstack of a list (items of different lengths too): the
# pullback gives each item its piece of the cotangent (reverse/lists.join_items)
primitive(runtime.list_concatenate, ("items", "axis"), {"items": BY_REVERSE_PASS},
          kind=_joined(0, "concatenate"))
primitive(runtime.list_hstack, ("items",), {"items": BY_REVERSE_PASS}, kind=_joined(1, "hstack"))
primitive(runtime.list_vstack, ("items",), {"items": BY_REVERSE_PASS}, kind=_joined(2, "vstack"))
primitive(runtime.list_position, ("items", "i"), kind="int")
