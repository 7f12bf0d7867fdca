"""The tuples stage: a tuple passed to a NumPy function as its data becomes
``np.array(t)``.

NumPy converts a tuple (or a list display, which parsing turned into a tuple)
argument to an array, so ``np.mean((a, b))`` and ``b = [x, y]; np.sum(b)``
compute on ``np.array(b)``.  The rules of those functions take arrays, so this
stage inserts that conversion explicitly, where a function's first
argument is a tuple holding floats.  Functions that take sequences as such
(``np.array``, ``np.concatenate``, the stacks, ``np.einsum``) and shape or axis
tuples (of ints) are left alone.

>>> import gast
>>> from s2s_ad.compiler.syntax.names import Namer
>>> from s2s_ad.compiler.syntax.annotations import set_callee
>>> import numpy as np
>>> fdef = gast.parse("def f(x):\\n b = (x, x)\\n m = np.mean(b)\\n return m").body[0]
>>> set_callee(fdef.body[1].value, np.mean)
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

from collections.abc import Callable

import gast
import numpy as np

from s2s_ad.compiler.syntax.annotations import callee_of, copy_annos, set_callee
from s2s_ad.compiler.syntax.builders import (
    assignment,
    attribute,
    call_node,
    const,
    load,
    store,
    subscript_of,
    tuple_of,
)
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.errors import Location, NonDifferentiableError
from s2s_ad.kinds import NUMERIC, ArrayKind, Kind, StructKind, carries_derivative
from s2s_ad.rules.stack_rules import STACKS

SEQUENCE_TAKERS = (np.array, np.asarray, np.concatenate, np.stack, *STACKS, np.einsum)
SHAPE_TAKERS = (np.zeros, np.ones, np.empty, np.full)  # np.zeros(()): a 0-d array


# functions whose operands (the items of their sequence argument) NumPy converts to arrays
OPERAND_TAKERS = (np.concatenate, np.stack, *STACKS, np.array, np.asarray)

Locate = Callable[[gast.AST], Location]


def arrays_for_tuples(fdef: gast.FunctionDef, kinds: dict[str, Kind], namer: Namer,
                      locate: Locate | None = None) -> set[str]:
    """Insert ``t_array = np.array(t)`` before each NumPy call whose first argument is
    a float-carrying tuple ``t``, and pass ``t_array``; an operand written as a list
    display (``np.concatenate([v, [x, y]])``) becomes an array the same way (see
    :func:`_operands_as_arrays`).  Return the new names."""
    fresh: set[str] = set()
    _block(fdef.body, kinds, namer, fresh, locate)
    return fresh


def _block(stmts: list[gast.stmt], kinds: dict, namer: Namer, fresh: set[str],
           locate: Locate | None) -> None:
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                _block(getattr(stmt, field), kinds, namer, fresh, locate)
        call = stmt.value if isinstance(stmt, gast.Assign) else None
        before = _operands_as_arrays(stmt, call, kinds, namer, locate)
        if before:
            stmts[i:i] = before
            fresh |= {b.targets[0].id for b in before}
            i += len(before)
        if _converts(call, kinds):
            name = namer.fresh(f"{call.args[0].id}_array")
            convert = call_node(attribute(load("np"), "array"), [load(call.args[0].id)])
            set_callee(convert, np.array)
            stmts.insert(i, copy_annos(stmt, assignment([store(name)], convert)))
            call.args[0] = load(name)
            fresh.add(name)
            i += 1
        i += 1


def _converts(call: gast.expr | None, kinds: dict) -> bool:
    if not (isinstance(call, gast.Call) and call.args and isinstance(call.args[0], gast.Name)):
        return False
    callee = callee_of(call)
    kind = kinds.get(call.args[0].id)
    return (isinstance(kind, tuple) and (carries_derivative(kind) or kind == ())
            and (getattr(callee, "__module__", None) or "").startswith("numpy")
            and not any(callee is s for s in SEQUENCE_TAKERS + SHAPE_TAKERS))


def _operands_as_arrays(stmt: gast.stmt, call: gast.expr | None, kinds: dict, namer: Namer,
                        locate: Locate | None) -> list[gast.stmt]:
    """``np.concatenate((v, t))`` with a tuple ``t`` (of numbers, nested) among the
    operands as ``np.concatenate((v, np.array(t)))``, as NumPy converts each operand:
    the statements to insert before ``stmt`` (the call is changed in place).  A ragged
    operand, and operands of ``np.concatenate``/``np.stack`` of different ranks, are
    refused at the line (NumPy's ValueError)."""
    if not (isinstance(call, gast.Call) and call.args and isinstance(call.args[0], gast.Name)
            and any(callee_of(call) is f for f in OPERAND_TAKERS)):
        return []
    sequence = call.args[0].id
    items = kinds.get(sequence)
    if not isinstance(items, tuple) or isinstance(items, StructKind):
        return []
    callee = callee_of(call)
    name = f"np.{callee.__name__}"
    for k, item in enumerate(items):
        if _ragged(item):
            raise _refusal(locate, stmt, f"{name}: operand {k} is a ragged list "
                           f"(items of different lengths or depths): {item!r}",
                           "give every row the same number of items")
    _check_ranks(callee, name, items, locate, stmt)
    lists = [isinstance(item, tuple) for item in items]
    arrays = [isinstance(item, ArrayKind) for item in items]
    if not any(lists) or (callee in (np.array, np.asarray) and not any(arrays)):
        return []  # no list operand, or numbers in nested lists: np.array's own rule
    out: list[gast.stmt] = []
    elts = []
    for k, item in enumerate(items):
        part = namer.fresh(f"{sequence}_{k}")
        out.append(_assign(stmt, part, subscript_of(load(sequence), const(k))))
        if isinstance(item, tuple):
            array = namer.fresh(f"{part}_array")
            convert = call_node(attribute(load("np"), "array"), [load(part)])
            set_callee(convert, np.array)
            out.append(_assign(stmt, array, convert))
            part = array
        elts.append(load(part))
    operands = namer.fresh(f"{sequence}_arrays")
    out.append(_assign(stmt, operands, tuple_of(elts)))
    call.args[0] = load(operands)
    return out


def _assign(like: gast.stmt, name: str, value: gast.expr) -> gast.Assign:
    return copy_annos(like, assignment([store(name)], value))


def _ragged(kind: Kind) -> bool:
    """Whether ``kind`` is a nesting of tuples of numbers that is not rectangular."""
    if not isinstance(kind, tuple) or isinstance(kind, StructKind):
        return False
    if all(k in NUMERIC for k in kind):
        return False
    if all(isinstance(k, tuple) for k in kind):
        return len({len(k) for k in kind}) > 1 or len({_depth(k) for k in kind}) > 1 or \
            any(map(_ragged, kind))
    return any(k in NUMERIC for k in kind)  # numbers beside lists (or arrays)


def _depth(kind: Kind) -> int | None:
    """The rank of the array a (rectangular) operand of ``kind`` makes (None: unknown)."""
    if isinstance(kind, ArrayKind):
        return kind.ndim
    if isinstance(kind, tuple) and not isinstance(kind, StructKind):
        inner = {_depth(k) for k in kind}
        return None if len(inner) != 1 or None in inner else 1 + inner.pop()
    return 0 if kind in NUMERIC else None


def _check_ranks(callee, name: str, items: tuple, locate: Locate | None,
                 stmt: gast.stmt) -> None:
    """np.concatenate and np.stack need operands of one rank (at least 1 to concatenate)."""
    if callee not in (np.concatenate, np.stack) or _flattens(callee, stmt.value):
        return
    ranks = [_depth(k) for k in items]
    if None in ranks or not ranks:
        return
    if len(set(ranks)) > 1 or (callee is np.concatenate and 0 in ranks):
        raise _refusal(locate, stmt, f"{name}: its operands must be arrays of one number "
                       f"of dimensions (at least 1), but they have {ranks}",
                       "reshape the operands (np.atleast_1d, np.reshape) to one rank")


def _flattens(callee, call: gast.Call) -> bool:
    """``np.concatenate(t, axis=None)``: operands of any rank, flattened."""
    axis = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "axis"), None)
    return callee is np.concatenate and isinstance(axis, gast.Constant) and axis.value is None


def _refusal(locate: Locate | None, stmt: gast.stmt, problem: str,
             hint: str) -> NonDifferentiableError:
    return NonDifferentiableError(problem, locate(stmt) if locate else None, hint)
