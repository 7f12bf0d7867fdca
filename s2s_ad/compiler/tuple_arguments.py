"""A tuple passed to a NumPy function as its data becomes ``np.array(t)`` (part of
the kinds stage).

NumPy converts a tuple (or a list display, which parsing turned into a tuple)
argument to an array, so ``np.mean((a, b))`` and ``b = [x, y]; np.sum(b)``
compute on ``np.array(b)``.  The rules of those functions take arrays, so the
kinds stage inserts that conversion explicitly, where a function's first
argument is a tuple holding floats.  Functions that take sequences as such
(``np.array``, ``np.concatenate``, the stacks, ``np.einsum``) and shape or axis
tuples (of ints) are left alone.

>>> import gast
>>> from s2s_ad.compiler.syntax.names import Namer
>>> from s2s_ad.compiler.syntax.annotations import set_anno
>>> import numpy as np
>>> fdef = gast.parse("def f(x):\\n b = (x, x)\\n m = np.mean(b)\\n return m").body[0]
>>> set_anno(fdef.body[1].value, "callee", np.mean)
>>> arrays_for_tuples(fdef, {"b": ("float", "float")}, Namer({"x", "b", "m"}))
{'b_array'}
>>> print(gast.unparse(fdef).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x):
    b = (x, x)
    b_array = np.array(b)
    m = np.mean(b_array)
    return m
"""

from __future__ import annotations

import gast
import numpy as np

from s2s_ad.compiler.syntax.annotations import copy_annos, get_anno, set_anno
from s2s_ad.compiler.syntax.builders import load, store
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.kinds import Kind, carries_derivative

SEQUENCE_TAKERS = (np.array, np.asarray, np.concatenate, np.stack, np.vstack, np.hstack,
                   np.column_stack, np.einsum)
SHAPE_TAKERS = (np.zeros, np.ones, np.empty, np.full)  # np.zeros(()): a 0-d array


def arrays_for_tuples(fdef: gast.FunctionDef, kinds: dict[str, Kind], namer: Namer) -> set[str]:
    """Insert ``t_array = np.array(t)`` before each NumPy call whose first argument is
    a float-carrying tuple ``t``, and pass ``t_array``; return the new names."""
    fresh: set[str] = set()
    _block(fdef.body, kinds, namer, fresh)
    return fresh


def _block(stmts: list[gast.stmt], kinds: dict, namer: Namer, fresh: set[str]) -> None:
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                _block(getattr(stmt, field), kinds, namer, fresh)
        call = stmt.value if isinstance(stmt, gast.Assign) else None
        if _converts(call, kinds):
            name = namer.fresh(f"{call.args[0].id}_array")
            convert = gast.Call(func=gast.Attribute(value=load("np"), attr="array",
                                                    ctx=gast.Load()),
                                args=[load(call.args[0].id)], keywords=[])
            set_anno(convert, "callee", np.array)
            stmts.insert(i, copy_annos(stmt, gast.Assign(targets=[store(name)], value=convert,
                                                         type_comment=None)))
            call.args[0] = load(name)
            fresh.add(name)
            i += 1
        i += 1


def _converts(call: gast.expr | None, kinds: dict) -> bool:
    if not (isinstance(call, gast.Call) and call.args and isinstance(call.args[0], gast.Name)):
        return False
    callee = get_anno(call, "callee")
    kind = kinds.get(call.args[0].id)
    return (isinstance(kind, tuple) and (carries_derivative(kind) or kind == ())
            and (getattr(callee, "__module__", None) or "").startswith("numpy")
            and not any(callee is s for s in SEQUENCE_TAKERS + SHAPE_TAKERS))
