"""Writes into argument arrays, with Python's semantics (part of normalization).

``def f(x): x[1] = x[0] * x[2]; ...`` changes the caller's array.  The body
works on a copy instead (``x_local = np.copy(x)``), and the copy's final
contents are written back into the caller's array just before the function
returns (``rt.write_back(x, x_local)``): the caller sees the same change, once
per forward run, and derivatives are with respect to the values the argument
had at the call.  A parameter the body also rebinds is left alone (its writes
go to the new value, and the reverse pass decides about those).

An in-place operator on a parameter (``v *= s``) mutates an array as an item write
does, so it makes a copy too; a number's ``v *= s`` only rebinds it, so once the
argument kinds are known, :func:`keep_number_arguments` undoes the copy of a
parameter that is a number and has no item writes.
"""

from __future__ import annotations

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.syntax.annotations import callee_of, set_callee, set_line
from s2s_ad.compiler.syntax.builders import assign, call, expr_stmt, load
from s2s_ad.compiler.syntax.names import Namer


def written_parameters(body: list[gast.stmt], params: list[str]) -> list[str]:
    """Parameters whose items ``body`` writes (``x[i] = v``, ``x[i] += v``) or that an
    in-place operator changes (``x *= s``), and that it never rebinds."""
    written, rebound, in_place = set(), set(), set()
    for node in (n for s in body for n in gast.walk(s)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            written.add(node.target.id)
            in_place.add(id(node.target))
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            written.add(node.value.id)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                and id(node) not in in_place:
            rebound.add(node.id)
    return [p for p in params if p in written - rebound]


def item_written(body: list[gast.stmt], name: str) -> bool:
    """Whether ``body`` writes items of ``name`` (``name[i] = v``)."""
    return any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
               and isinstance(n.value, gast.Name) and n.value.id == name
               for s in body for n in gast.walk(s))


def localize(body: list[gast.stmt], params: list[str], namer: Namer) -> dict[str, str]:
    """Rename each written parameter in ``body`` (in place) to its local copy's name;
    return ``{parameter: copy}``."""
    copies = {p: namer.fresh(f"{p}_local", source=p) for p in written_parameters(body, params)}
    for node in (n for s in body for n in gast.walk(s)):
        if isinstance(node, gast.Name) and node.id in copies:
            node.id = copies[node.id]
    return copies


def copy_in_and_back(body: list[gast.stmt], copies: dict[str, str], line: int) -> list:
    """The ANF ``body`` with the copies made first and written back before the
    final ``return``."""
    first, last = [], []
    for param, local in copies.items():
        copied = call("np.copy", load(param))
        set_callee(copied, np.copy)
        first.append(assign(local, copied, line))
        back = call("rt.write_back", load(param), load(local))
        set_callee(back, runtime.write_back)
        statement = expr_stmt(back)
        set_line(statement, line)
        last.append(statement)
    return first + body[:-1] + last + body[-1:]


def keep_number_arguments(node: gast.FunctionDef, copies: dict[str, str],
                          number_params: set[str]) -> list[str]:
    """Undo the copy in and back of each parameter in ``number_params`` (arguments
    that are numbers: ``x *= s`` rebinds them) whose items the body never writes
    (``x[()] = v`` is refused later, at its line): ``x_local = x`` and no write-back.
    Returns the parameters still written back."""
    kept = {p: local for p, local in copies.items()
            if p in number_params and not item_written(node.body, local)}
    body = []
    for s in node.body:
        value = getattr(s, "value", None)
        if isinstance(s, gast.Assign) and isinstance(value, gast.Call) \
                and callee_of(value) is np.copy and isinstance(value.args[0], gast.Name) \
                and kept.get(value.args[0].id) == s.targets[0].id:
            s.value = value.args[0]  # x_local = np.copy(x) -> x_local = x
        elif isinstance(s, gast.Expr) and isinstance(value, gast.Call) \
                and callee_of(value) is runtime.write_back \
                and value.args[0].id in kept:
            continue
        body.append(s)
    node.body = body
    return [p for p in copies if p not in kept]
