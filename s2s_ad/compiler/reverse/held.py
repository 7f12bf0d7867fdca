"""Stage 5 (reverse), part: arrays a growing list holds, written afterwards.

``items.append(v)`` stores ``v`` itself, as Python does: a later write into ``v``
(``v[0] = y``, ``v *= 3.0``) changes what the list holds too, and so does a write into an array
read back from the list (``w = items[0]; w[1] = y``).  The list's adjoints treat
each appended item as the value it had when appended, so such a write is refused at
its line.  A write into a fresh array appended afterwards (``buf = np.zeros(n)``,
``buf[0] = y``, ``items.append(buf)`` in a loop) is fine and not refused.

The analysis follows the statements in order: which names may hold memory a list
holds, joined over branches and iterated over loops to a fixed point.
"""

from __future__ import annotations

import gast

from s2s_ad import runtime
from s2s_ad.compiler.reverse.aliasing import is_view, sharing
from s2s_ad.compiler.reverse.context import Context
from s2s_ad.compiler.syntax.annotations import callee_of, is_in_place
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, ListKind


def refuse_write_into_held(cx: Context, s: gast.Assign) -> None:
    """Raise if the item write or in-place operator ``s`` may change an array a growing
    list holds."""
    if not any(isinstance(k, ListKind) and _holds_array(k.element) for k in cx.kinds.values()):
        return  # no list holds arrays
    found: dict[int, str] = {}
    _block(cx, cx.norm.node.body, {}, found)
    if id(s) in found:
        target = s.targets[0]
        name = target.value.id if isinstance(target, gast.Subscript) else target.id
        raise NonDifferentiableError(
            f"writing into '{name}', which the list '{found[id(s)]}' holds (append stores "
            "the array itself, so the list would change too), is not supported",
            cx.norm.parsed.location(s),
            f"append a copy (items.append(np.copy({name}))), or write before appending "
            "into an array allocated afresh for each append")


Held = dict[str, str]  # a name that may be memory a list holds -> that list


def _block(cx: Context, stmts: list[gast.stmt], held: Held, found: dict) -> Held:
    """``held`` after ``stmts``; the writes into held memory recorded in ``found``."""
    held = dict(held)
    for s in stmts:
        if isinstance(s, gast.If):
            held = {**_block(cx, s.body, held, found), **_block(cx, s.orelse, held, found)}
        elif isinstance(s, gast.For | gast.While):
            while True:  # a later pass sees what the earlier one left
                after = {**held, **_block(cx, s.body, held, found)}
                if after == held:
                    break
                held = after
        elif isinstance(s, gast.Assign):
            _assign(cx, s, held, found)
    return held


def _assign(cx: Context, s: gast.Assign, held: Held, found: dict) -> None:
    target, value = s.targets[0], s.value
    if isinstance(target, gast.Subscript):
        if isinstance(target.value, gast.Name) and target.value.id in held:
            found[id(s)] = held[target.value.id]
        return
    if not isinstance(target, gast.Name):
        return
    name = target.id
    if is_in_place(s) and name in held:  # y *= 3.0 mutates what the list holds
        found[id(s)] = held[name]
        return
    if isinstance(value, gast.Call) and callee_of(value) is runtime.appended:
        item = value.args[1]
        if isinstance(item, gast.Name) and _holds_array(cx.kinds.get(item.id)):
            held.update(dict.fromkeys([item.id, *sharing(cx, item.id)], name))
        return
    held.pop(name, None)  # a new binding: held again only if it is memory a list holds
    if _holds_array(cx.kinds.get(name)):
        holder = _held_by(cx, value, held)
        if holder is not None:
            held[name] = holder


def _held_by(cx: Context, value: gast.expr, held: Held) -> str | None:
    """The list whose memory ``value`` may be: an item read from it, or a view of held
    memory."""
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            isinstance(cx.kinds.get(value.value.id), ListKind):
        return value.value.id
    return next((held[of] for of in held if is_view(value, of)), None)


def _holds_array(kind) -> bool:
    if isinstance(kind, tuple):
        return any(map(_holds_array, kind))
    return isinstance(kind, ArrayKind)
