"""Stage 3, kinds: what sort of value every variable holds.

Annotations only: returns a map from variable to kind and does not change the
tree.  A kind is ``"float"``, ``"int"``, ``"bool"``, ``"str"``, ``"none"``,
``"unknown"``, or a tuple of kinds for a tuple value.  The reverse pass uses
kinds to type loop tapes (numbers go in preallocated NumPy arrays, anything
else in typed lists) and to build zero cotangents of tuples.

>>> join("int", "float"), join(("float",), ("int",))
('float', ('float',))
"""

from __future__ import annotations

import ctypes
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .rules.classify import classify

Kind = str | tuple
NUMERIC = ("float", "int", "bool")


def join(a: Kind | None, b: Kind | None) -> Kind | None:
    """The least kind holding both ``a`` and ``b`` (``None`` is 'no value yet')."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(join(x, y) for x, y in zip(a, b, strict=True))
    if {a, b} <= {"int", "bool"}:
        return "int"
    if {a, b} <= set(NUMERIC):
        return "float"
    return "unknown"


def kind_of_value(value: Any) -> Kind:
    """The kind of a Python value (an argument or a constant)."""
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return tuple(kind_of_value(v) for v in value)
    return "unknown"


def foreign_kind(fn: Any) -> Kind:
    """The result kind of a callable without source (a C function's ``restype``)."""
    restype = getattr(fn, "restype", None)
    if restype in (ctypes.c_double, ctypes.c_float, ctypes.c_longdouble):
        return "float"
    if restype in (ctypes.c_int, ctypes.c_long, ctypes.c_longlong, ctypes.c_short,
                   ctypes.c_int64, ctypes.c_int32, ctypes.c_size_t):
        return "int"
    return "unknown"


def carries_derivative(kind: Kind | None) -> bool:
    """Whether a value of this kind can have a nonzero cotangent."""
    if isinstance(kind, tuple):
        return any(carries_derivative(k) for k in kind)
    return kind in ("float", "unknown")


def _arith(kind: Kind | None) -> Kind | None:
    return "int" if kind == "bool" else kind


CalleeKind = Callable[[Any, list, gast.expr], Kind]


class _Kinds:
    def __init__(self, env: dict[str, Kind], callee_kind: CalleeKind):
        self.env = env
        self.callee_kind = callee_kind

    def atom(self, node: gast.expr) -> Kind | None:
        if isinstance(node, gast.Constant):
            return kind_of_value(node.value)
        if isinstance(node, gast.Name):
            return self.env.get(node.id)
        return "unknown"

    def op(self, op: gast.expr) -> Kind | None:
        prim = classify(op)
        kinds = [self.atom(a) for a in prim.operands]
        if prim.what == "copy":
            return kinds[0]
        if prim.what == "tuple":
            return None if None in kinds else tuple(kinds)
        if prim.what == "index":
            base = kinds[0]
            if isinstance(base, tuple):
                return base[op.slice.value]
            return None if base is None else "unknown"
        if isinstance(op, gast.Compare):
            return "bool"
        if isinstance(op, gast.JoinedStr):
            return "str"
        if isinstance(op, gast.Constant):
            return kind_of_value(op.value)
        if prim.what in ("hook", "cut"):
            return kinds[0]
        if prim.what == "function":
            return None if None in kinds else self.callee_kind(prim.callee, kinds, op)
        if prim.what == "custom":
            if None in kinds:
                return None
            if isinstance(prim.callee, types.FunctionType):
                return self.callee_kind(prim.callee, kinds, op)
            return foreign_kind(prim.callee)
        if prim.what == "unknown":
            return foreign_kind(prim.callee)
        if prim.what == "rule":
            return self.rule_kind(prim, kinds, op)
        return "unknown"

    def rule_kind(self, prim, kinds: list, op: gast.expr) -> Kind | None:
        kind = prim.rule.kind
        if kind == "join":
            out = None
            for k in kinds:
                out = join(out, _arith(k))
            return out
        if kind == "pow":
            a, b = kinds
            exponent = prim.operands[1]
            int_exp = isinstance(exponent, gast.Constant) and isinstance(exponent.value, int) \
                and exponent.value >= 0
            if a in ("int", "bool") and int_exp:
                return "int"
            return None if None in kinds else ("float" if set(kinds) <= set(NUMERIC)
                                               else "unknown")
        return kind

    def stmts(self, stmts: list[gast.stmt]) -> bool:
        changed = False
        for s in stmts:
            if isinstance(s, gast.Assign):
                name = s.targets[0].id
                new = join(self.env.get(name), self.op(s.value))
                if new != self.env.get(name):
                    self.env[name], changed = new, True
            elif isinstance(s, gast.For):
                if self.env.get(s.target.id) not in ("int",):
                    self.env[s.target.id] = join(self.env.get(s.target.id), "int")
                    changed = True
                changed |= self.stmts(s.body)
            elif isinstance(s, gast.If | gast.While):
                changed |= self.stmts(s.body)
                changed |= self.stmts(getattr(s, "orelse", []))
        return changed


def infer_kinds(fdef: gast.FunctionDef, arg_kinds: dict[str, Kind],
                callee_kind: CalleeKind) -> dict[str, Kind]:
    """Kinds of all variables of the ANF function ``fdef`` given its arguments' kinds.

    ``callee_kind(function, argument_kinds, call)`` gives the result kind of a call to
    a Python function (the pipeline transforms the callee to find it).
    """
    state = _Kinds(dict(arg_kinds), callee_kind)
    for _ in range(50):
        if not state.stmts(fdef.body):
            break
    return state.env


def result_kind(fdef: gast.FunctionDef, kinds: dict[str, Kind]) -> Kind:
    """The kind of what the function returns."""
    ret = fdef.body[-1].value
    if isinstance(ret, gast.Constant):
        return kind_of_value(ret.value)
    return kinds.get(ret.id, "unknown")
