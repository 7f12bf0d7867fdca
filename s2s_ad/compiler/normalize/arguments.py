"""Writes into argument arrays, with Python's semantics (part of normalization).

``def f(x): x[1] = x[0] * x[2]; ...`` changes the caller's array.  The body
works on a copy instead (``x_local = np.copy(x)``), and the copy's final
contents are written back into the caller's array just before the function
returns (``rt.write_back(x, x_local)``): the caller sees the same change, once
per forward run, and derivatives are with respect to the values the argument
had at the call.  A parameter the body also rebinds is left alone (its writes
go to the new value, and the reverse pass decides about those).
"""

from __future__ import annotations

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.syntax.annotations import set_callee, set_line
from s2s_ad.compiler.syntax.builders import assign, call, expr_stmt, load
from s2s_ad.compiler.syntax.names import Namer


def written_parameters(body: list[gast.stmt], params: list[str]) -> list[str]:
    """Parameters whose items ``body`` writes (``x[i] = v``, ``x[i] += v``) and that
    it never rebinds."""
    written, rebound = set(), set()
    for node in (n for s in body for n in gast.walk(s)):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            written.add(node.value.id)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            rebound.add(node.id)
    return [p for p in params if p in written - rebound]


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
