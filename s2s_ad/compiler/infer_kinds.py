"""The kinds stage: what sort of value every variable holds.

Annotations only: returns a map from variable to kind and does not change the
tree.  A kind is ``"float"``, ``"int"``, ``"bool"``, ``"str"``, ``"none"``,
``"unknown"``, or a tuple of kinds for a tuple value.  The reverse pass uses
kinds to type loop tapes (numbers go in preallocated NumPy arrays, anything
else in typed lists) and to build zero cotangents of tuples.

>>> from s2s_ad.compiler.transforms import transform
>>> def f(x, n):
...     k = n * 2
...     return x * k
>>> sorted(transform(f, ["float", "int"], [0]).kinds.items())
[('k', 'int'), ('n', 'int'), ('result', 'float'), ('x', 'float')]
>>> import s2s_ad as ad
>>> print(ad.source(f, 2.0, 3, stage="kinds"))  # the tree, unchanged, under its kinds
# k: int
# n: int
# result: float
# x: float
def f(x, n):
    # line 2: k = n * 2
    k = n * 2
    # line 3: return x * k
    result = x * k
    return result

"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import gast

from s2s_ad.compiler.custom import split_of
from s2s_ad.compiler.kernel_ops import kernel_result_kind
from s2s_ad.compiler.primitives import (
    Copy,
    CustomCall,
    FunctionCall,
    Index,
    KernelCall,
    Primitive,
    RuleOp,
    TupleDisplay,
    UnknownCall,
    classify,
)
from s2s_ad.compiler.structure_access import argument_kind
from s2s_ad.compiler.structure_layout import MARKERS, builds_structure, constructed, field_kind
from s2s_ad.compiler.syntax.annotations import attribute_of, callee_of, method_of, structure_of
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kernels.gradients import CustomGradFunction
from s2s_ad.kinds import (  # noqa: F401  (re-exported for the stages)
    NUMERIC,
    ArrayKind,
    Kind,
    ListKind,
    StructKind,
    broadcast,
    carries_derivative,
    compared,
    foreign_kind,
    indexed,
    join,
    join_all,
    kind_of_value,
)
from s2s_ad.rules.registry import arities, refusal

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
        structure = self.structure_op(op)
        if structure is not _NOT_STRUCTURAL:
            return structure
        prim = classify(op)
        kinds = [self.atom(a) for a in prim.operands]
        if isinstance(prim, Copy):
            return kinds[0]
        if isinstance(prim, TupleDisplay):
            return None if None in kinds else tuple(kinds)
        if isinstance(prim, Index):
            base = kinds[0]
            if isinstance(base, tuple | ListKind) and isinstance(self.atom(op.slice), ArrayKind):
                return "unknown"  # t[[0, 1]] of a tuple or list: Python's TypeError
            if isinstance(base, tuple):
                return tuple_item_kind(base, op.slice)
            if isinstance(base, ArrayKind):
                return indexed(base, op.slice, self.atom)
            if isinstance(base, ListKind):
                return base.element
            if base in NUMERIC and _whole(op.slice):
                return base  # a[()] of a 0-d array argument (which computes as a number)
            return None if base is None else "unknown"
        if isinstance(op, gast.Compare):
            return compared([self.atom(op.left), self.atom(op.comparators[0])])
        if isinstance(op, gast.JoinedStr):
            return "str"
        if isinstance(op, gast.Constant):
            return kind_of_value(op.value)
        if prim.identity:
            return kinds[0]
        if isinstance(prim, FunctionCall):
            return None if None in kinds else self.callee_kind(prim.callee, kinds, op)
        if isinstance(prim, CustomCall):
            if None in kinds:
                return None
            if isinstance(prim.callee, types.FunctionType):
                return self.callee_kind(prim.callee, kinds, op)
            if isinstance(prim.callee, CustomGradFunction):
                return kinds[0] if kinds else "unknown"
            return self.derivative_value_kind(prim, kinds, op)
        if isinstance(prim, UnknownCall):
            return foreign_kind(prim.callee)
        if isinstance(prim, KernelCall):
            return None if None in kinds else kernel_result_kind(op, kinds)
        if isinstance(prim, RuleOp) and isinstance(op, gast.BinOp) and isinstance(op.op, gast.Add) \
                and any(isinstance(k, tuple) for k in kinds):
            if None in kinds:
                return None  # t + (v,) with v not known yet
            if all(isinstance(k, tuple) for k in kinds):
                return kinds[0] + kinds[1]  # tuple concatenation
        if isinstance(prim, RuleOp):
            return self.rule_kind(prim, kinds, op)
        return "unknown"

    def derivative_value_kind(self, prim, kinds: list, op: gast.expr) -> Kind:
        """The value kind of a function known only by its registered derivative (a C
        function's ``restype``, or the value its split forward part returns)."""
        split = split_of(prim.registered)
        if split is None:
            return foreign_kind(prim.callee)
        try:
            pair = self.callee_kind(split[0], kinds, op)
        except NonDifferentiableError:
            return foreign_kind(prim.callee)
        return pair[0] if isinstance(pair, tuple) and len(pair) == 2 else "unknown"

    def structure_op(self, op: gast.expr) -> Any:
        """The kind of an operation on structures (see structure_access), None while
        not known, or ``_NOT_STRUCTURAL``."""
        if isinstance(op, gast.Attribute):
            return field_kind(self.atom(op.value), op.attr)
        if isinstance(op, gast.Subscript) and isinstance(op.slice, gast.Constant) and \
                isinstance(op.slice.value, str):
            return field_kind(self.atom(op.value), op.slice.value)
        if isinstance(op, gast.Tuple) and structure_of(op) is not None:
            kinds = [self.atom(a) for a in op.elts]
            return None if None in kinds else structure_of(op).with_items(kinds)
        if not isinstance(op, gast.Call):
            return _NOT_STRUCTURAL
        callee = callee_of(op)
        if any(callee is m for m in MARKERS):
            return None  # lowered to a direct call once the object's kind is known
        if op.args and isinstance(self.atom(op.args[0]), StructKind):
            if attribute_of(op) is not None:  # p.size of a structure: a field
                return field_kind(self.atom(op.args[0]), attribute_of(op))
            if method_of(op) is not None:
                return None
        if not builds_structure(callee):
            return _NOT_STRUCTURAL
        atoms = list(op.args) + [k.value for k in op.keywords]
        try:
            return constructed(callee, [argument_kind(self.atom(a), a) for a in atoms],
                               [k.arg for k in op.keywords])
        except ValueError:
            return "unknown"  # lowering reports it at its line

    def rule_kind(self, prim, kinds: list, op: gast.expr) -> Kind | None:
        return prim.rule.result_kind(kinds, prim.operands)

    def stmts(self, stmts: list[gast.stmt]) -> bool:
        changed = False
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
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


_NOT_STRUCTURAL = object()


def _whole(index: gast.expr) -> bool:
    """Whether ``index`` is ``()``: the one item of a 0-d array."""
    return isinstance(index, gast.Tuple) and not index.elts


def tuple_item_kind(base: tuple, index: gast.expr) -> Kind:
    """The kind of ``t[index]`` for a tuple ``t`` of kinds ``base``: an item for a
    constant index, a tuple for a constant slice, the join of the items for an
    index known at run time."""
    if isinstance(index, gast.Constant) and isinstance(index.value, int):
        if not -len(base) <= index.value < len(base):
            return "unknown"  # Python raises IndexError here when it runs
        return base[index.value]
    if isinstance(index, gast.Slice):
        bounds = static_slice(index)
        return "unknown" if bounds is None else base[bounds]
    return join_all(list(base)) if base else "unknown"


def static_slice(index: gast.Slice) -> slice | None:
    """The slice ``index`` stands for when its bounds are constants (or absent)."""
    parts = [index.lower, index.upper, index.step]
    if not all(p is None or isinstance(p, gast.Constant) and isinstance(p.value, int | None)
               for p in parts):
        return None
    return slice(*(None if p is None else p.value for p in parts))


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


def rebound_names(fdef: gast.FunctionDef, kinds: dict[str, Kind], arg_kinds: dict[str, Kind],
                  callee_kind: CalleeKind) -> set[str]:
    """The variables of ``fdef`` bound to values of different shapes: a number
    at one assignment and an array (or a tuple, or an array of another rank) at
    another.  A parameter's first binding is its argument.  The function's top
    level is replayed in order, each assignment replacing its variable's kind,
    so a value computed from the number is not mistaken for an array.

    >>> import numpy as np
    >>> from s2s_ad.compiler.transforms import transform
    >>> def f(x):
    ...     a = x * 2.0
    ...     b = a + 1.0
    ...     a = np.ones(3) * b
    ...     return np.sum(a)
    >>> kinds = transform(f, ["float"], [0]).kinds  # the pipeline split a
    >>> kinds["a"], kinds["b"], kinds["a_1"]
    ('float', 'float', float array1)
    """
    state = _Kinds({**kinds, **arg_kinds}, callee_kind)
    shapes = {name: {_shape(kind)} for name, kind in arg_kinds.items()}
    for stmt in fdef.body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            name, kind = stmt.targets[0].id, state.op(stmt.value)
            shapes.setdefault(name, set()).add(_shape(kind))
            # a list's items are appended later, in loops: keep what they are
            state.env[name] = join(kind, kinds.get(name)) if isinstance(kind, ListKind) \
                else kind
            continue
        for node in gast.walk(stmt):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                shapes.setdefault(node.targets[0].id, set()).add(_shape(state.op(node.value)))
    return {name for name, found in shapes.items() if len(found - {None}) > 1}


def refuse_mixed_structures(fdef: gast.FunctionDef, kinds: dict[str, Kind],
                            callee_kind: CalleeKind, locate: Any) -> None:
    """Refuse a variable bound to structures of one class whose static fields (a function
    held, a string) differ between paths: generated code fixes static fields, so no
    kind holds both (their join is 'unknown')."""
    state = _Kinds(dict(kinds), callee_kind)
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) \
                and _holds_unknown(kinds.get(node.targets[0].id)):
            bound = state.op(node.value)
            if isinstance(bound, StructKind) and not _holds_unknown(bound):
                raise NonDifferentiableError(
                    f"'{node.targets[0].id}' holds a {bound!r} here and a "
                    f"{bound.cls.__name__} with other static fields on another path",
                    locate(node), "give the structures the same functions and strings in "
                    "their static fields on every path, or use two variables")


def refuse_mixed_returns(fdef: gast.FunctionDef, kinds: dict[str, Kind],
                         callee_kind: CalleeKind, locate: Any) -> None:
    """Refuse a function whose returns give values of different shapes (a number on one
    path, an array on another): the result of generated code has one kind, and the
    cotangent it is given must match it."""
    ret = fdef.body[-1].value
    if not isinstance(ret, gast.Name):
        return
    state = _Kinds(dict(kinds), callee_kind)
    first = None
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) \
                and node.targets[0].id == ret.id:
            shape = _shape(state.op(node.value))
            if shape is None:
                continue
            if first is None:
                first = shape
            elif shape != first:
                raise NonDifferentiableError(
                    f"this returns {_shape_text(shape)}, another return "
                    f"{_shape_text(first)}: a differentiated function returns one kind of "
                    "value", locate(node), "return the same kind on every path (for "
                    "example np.full(shape, value) instead of a number)")


def _shape_text(shape: Any) -> str:
    if shape == "number":
        return "a number"
    kind, detail = shape
    return {"array": f"an array of {detail} dimensions", "tuple": f"a tuple of {detail} items",
            "structure": "a structure"}[kind]


def _holds_unknown(kind: Kind | None) -> bool:
    """Whether ``kind`` is, or holds (a structure in a dict, ...), the 'unknown' kind."""
    if isinstance(kind, tuple):
        return any(map(_holds_unknown, kind))
    return kind == "unknown"


def _shape(kind: Kind | None) -> Any:
    if isinstance(kind, StructKind):  # its class and static fields (a function held)
        return ("structure", kind.with_items(()))
    if isinstance(kind, ArrayKind):
        return ("array", kind.ndim)
    if isinstance(kind, tuple):
        return ("tuple", len(kind))
    return "number" if kind in NUMERIC else None


def result_kind(fdef: gast.FunctionDef, kinds: dict[str, Kind]) -> Kind:
    """The kind of what the function returns."""
    ret = fdef.body[-1].value
    if isinstance(ret, gast.Constant):
        return kind_of_value(ret.value)
    return kinds.get(ret.id, "unknown")


def refuse_unknown_result(fdef: gast.FunctionDef, kinds: dict[str, Kind],
                          callee_kind: CalleeKind, locate: Any) -> None:
    """A result whose kind holds 'unknown' (generated code could not hold it): a
    :class:`NonDifferentiableError` at the first expression, in program order, where
    an unknown kind starts, naming the expression and why its kind is unknown.  A
    value known only to Python (what a registered derivative returns) is left to the
    Python path."""
    if not _holds_unknown(result_kind(fdef, kinds)):
        return
    for param in fdef.args.args:
        if _holds_unknown(kinds.get(param.id)):
            raise NonDifferentiableError(
                f"parameter '{param.id}' is given a value that is not supported (not a "
                "float, int, bool, real numeric array, or a tuple or structure of them)",
                locate(param), "pass a NumPy array for a list, and real numbers")
    state = _Kinds(dict(kinds), callee_kind)
    bindings = list(_assignments(fdef.body))
    _refuse_unknown_origin(bindings, kinds, state, locate)
    for node in bindings:  # no value is unknown where it is made: kinds that disagree
        name = node.targets[0].id
        op = node.value
        if not _holds_unknown(kinds.get(name)) or isinstance(op, gast.Lambda):
            continue
        prim = classify(op)
        operands = [state.atom(a) for a in prim.operands]
        if not isinstance(prim, UnknownCall) and any(map(_holds_unknown, operands)):
            continue  # unknown because an operand is
        bound = state.op(op)
        if _holds_unknown(bound) or bound is None:
            continue
        other = next((b for b in bindings if b.targets[0].id == name and b is not node
                      and state.op(b.value) != bound), None)
        where = f" and another kind of value at line {other.lineno}" if other else ""
        raise NonDifferentiableError(
            f"the kind of '{_text(node.targets[0], locate)}' cannot be inferred: it holds "
            f"{_described(bound)} here{where}", locate(node),
            "keep one kind of value per variable: a tuple cannot grow in a loop (append "
            "to a list, or fill a np.zeros array), and a number and a tuple need two names")


def _refuse_unknown_origin(bindings: list[gast.Assign], kinds: dict[str, Kind],
                           state: Any, locate: Any) -> None:
    """Refuse the first operation, in program order, whose known operands give a value
    of unknown kind (the cause, before any variable its value reaches)."""
    for node in bindings:
        op = node.value
        if not _holds_unknown(kinds.get(node.targets[0].id)) or isinstance(op, gast.Lambda):
            continue
        prim = classify(op)
        _refuse_complex_constants(op, prim, locate)
        operands = [state.atom(a) for a in prim.operands]
        if not isinstance(prim, UnknownCall) and any(map(_holds_unknown, operands)):
            continue  # unknown because an operand is
        bound = state.op(op)
        if _holds_unknown(bound) or bound is None:
            cause = _unknown_cause(op, prim, operands, _text(op, locate))
            if cause is not None:
                raise NonDifferentiableError(cause[0], locate(op), cause[1])


def _refuse_complex_constants(op: gast.expr, prim: Primitive, locate: Any) -> None:
    """A complex literal (``1j``, ``2 + 3j``) among the operands: refused where it is."""
    for atom in [op, *prim.operands]:
        if isinstance(atom, gast.Constant) and isinstance(atom.value, complex):
            raise NonDifferentiableError(
                f"the complex number {atom.value!r} is not supported: s2s_ad differentiates "
                "real values only", locate(atom),
                "write the real and imaginary parts as two real variables")


def _assignments(stmts: list[gast.stmt]):
    """The assignments to a name in ``stmts``, in program order (into loops and ifs)."""
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s
        for block in (getattr(s, "body", None), getattr(s, "orelse", None)):
            if isinstance(block, list) and not isinstance(s, gast.FunctionDef):
                yield from _assignments(block)


def _unknown_cause(op: gast.expr, prim: Primitive, operands: list, text: str
                   ) -> tuple[str, str] | None:
    """(problem, hint) for an operation ``text`` whose known operands give an unknown
    kind; None for one that runs in Python (a registered derivative's value)."""
    if isinstance(op, gast.BinOp) and isinstance(op.op, gast.Mult) and \
            any(isinstance(k, tuple | ListKind) for k in operands):
        return (f"'{text}' repeats a tuple or list with '*', which is supported only for a "
                "display repeated by a literal int ((x, y) * 2, up to 64 items)",
                "write the items out, or build an array: np.full(n, x)")
    if isinstance(prim, UnknownCall) and arities(prim.callee):
        return None  # rules for other argument counts: the reverse stage names them
    if isinstance(prim, UnknownCall) and refusal(prim.callee):
        problem, instead = refusal(prim.callee)
        return f"'{text}': {problem}", instead
    if isinstance(prim, UnknownCall):
        name = getattr(prim.callee, "__qualname__", None) or repr(prim.callee)
        module = getattr(prim.callee, "__module__", None)
        owner = f" of {module}" if module else ""
        return (f"'{text}' calls '{name}'{owner}, which has no derivative rule (and is "
                "not differentiated through): the kind of its result is unknown",
                "give it a derivative with @ad.derivative(of=...), or wrap the call in "
                "ad.without_derivative(...) if its value is a constant")
    if isinstance(op, gast.Constant):
        return (f"the constant {op.value!r} ({type(op.value).__name__}) is not supported",
                "use floats, ints, bools, arrays and tuples of them")
    if isinstance(prim, RuleOp) and prim.rule.variant is not None:
        return None  # the rule's variant states its own reason at the call (reverse stage)
    if isinstance(prim, RuleOp) and all(k is not None for k in operands):
        described = ", ".join(_described(k) for k in operands)
        return (f"the kind of '{text}' cannot be inferred from its operands ({described})",
                "use floats, ints, bools, float arrays and tuples of them")
    return None


def _described(kind: Kind | None) -> str:
    if isinstance(kind, tuple) and not isinstance(kind, StructKind):
        return f"a tuple of {len(kind)} item{'s' * (len(kind) != 1)}"
    return f"a value of kind {kind!r}"


def _text(node: gast.AST, locate: Any) -> str:
    """The user's source text of ``node`` where its position spans one line, else its
    generated form."""
    end = getattr(node, "end_col_offset", None)
    if end is not None and getattr(node, "end_lineno", None) == getattr(node, "lineno", 0):
        text = locate(node).source_line()[node.col_offset:end]
        if text.strip():
            return text
    return gast.unparse(node).strip()
