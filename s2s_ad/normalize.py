"""Stage 2, normalize: desugar, resolve names, and put the body in A-normal form.

Guarantees about the returned ``FunctionDef`` (besides those of
:mod:`s2s_ad.control`):

* every statement is one of ``name = <op>``, ``<call>`` (an expression
  statement), ``if <name>:``, ``for <name> in range(<atoms>):``,
  ``while <name>:``, ``assert``/``raise``, or the final ``return <atom>``;
* ``<op>`` is one operation on atoms (names or constants): a binary or unary
  operator, one comparison, a call, a tuple, a constant index into a tuple, or
  an atom;
* an ``if`` or ``while`` test is a name that its body does not reassign;
* every ``Call`` carries the annotation ``callee``: the object it calls;
* every statement carries ``line``, the user line it came from;
* globals that hold numbers are inlined as constants.
"""

from __future__ import annotations

import copy
import inspect
import math
import numbers
import types
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from . import runtime
from .control import desugar_control
from .errors import NonDifferentiableError
from .ir import LocalFunction, ParsedFunction, copy_annos, get_anno, set_anno
from .naming import Namer, op_word
from .parse import finish_parse, lambda_to_def
from .trees import const, load, store


@dataclass(eq=False)
class NormalFunction:
    """The result of :func:`normalize`: an ANF ``FunctionDef`` and its context."""

    parsed: ParsedFunction
    node: gast.FunctionDef
    namer: Namer
    locals: set[str] = field(default_factory=set)
    externals: dict[str, Any] = field(default_factory=dict)  # global arrays read
    temps: set[str] = field(default_factory=set)  # names normalization introduced

    @property
    def params(self) -> list[str]:
        return self.parsed.params

    @property
    def result(self) -> gast.expr:
        """The atom the function returns."""
        return self.node.body[-1].value


def is_atom(node: gast.AST) -> bool:
    return isinstance(node, gast.Name | gast.Constant)


_NUMBER = (numbers.Number, np.generic)


def _assigned_names(stmts: list[gast.stmt]) -> set[str]:
    names: set[str] = set()
    for s in stmts:
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                names.add(node.id)
            elif isinstance(node, gast.FunctionDef):
                names.add(node.name)
    return names


def _loaded_names(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


class _Normalizer:
    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        fdef = parsed.node
        self.locals = set(parsed.params) | _assigned_names(fdef.body)
        self.reassigned = _assigned_names(fdef.body)
        every = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        self.namer = Namer(every | self.locals | set(parsed.namespace))
        self.local_fns: dict[str, LocalFunction] = {}
        self.temps: set[str] = set()
        self.externals: dict[str, Any] = {}  # global arrays the body reads
        self.global_arrays: dict[int, str] = {}
        self.out: list[gast.stmt] = []
        self.line = fdef.lineno
        self.body = fdef.body

    # -- helpers ---------------------------------------------------------------
    def error(self, node: gast.AST, problem: str, hint: str = "") -> NonDifferentiableError:
        return NonDifferentiableError(problem, self.parsed.location(node), hint)

    def emit(self, stmt: gast.stmt, like: gast.AST | None = None) -> gast.stmt:
        if like is not None:
            gast.copy_location(stmt, like)
        set_anno(stmt, "line", getattr(like, "lineno", None) or self.line)
        self.out.append(stmt)
        return stmt

    def assign(self, target: str, value: gast.expr, like: gast.AST) -> None:
        self.emit(gast.Assign(targets=[store(target)], value=value, type_comment=None), like)

    def temp(self, value: gast.expr, stem: str, like: gast.AST) -> gast.Name:
        name = self.namer.fresh(stem)
        self.temps.add(name)
        self.assign(name, value, like)
        return load(name)

    def _used_as_value(self, name: str) -> bool:
        return _value_uses(self.body, name)

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        saved, self.out = self.out, []
        for s in stmts:
            self.stmt(s)
        body, self.out = self.out, saved
        return body

    # -- names -----------------------------------------------------------------
    def resolve(self, node: gast.expr) -> Any:
        """The object a global name or attribute chain names (KeyError if local)."""
        if isinstance(node, gast.Name):
            if node.id in self.locals or node.id in self.temps:
                raise KeyError(node.id)
            if node.id not in self.parsed.namespace:
                raise self.error(node, f"name '{node.id}' is not defined",
                                 "define it (or import it) at module level, or check the "
                                 "spelling")
            return self.parsed.namespace[node.id]
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise self.error(node, f"'{node.attr}' is not an attribute of "
                                 f"{getattr(base, '__name__', base)!r}") from None
        raise KeyError(node)

    def _is_local_value(self, node: gast.expr) -> bool:
        """Whether ``node`` is an expression over local values (not a module path)."""
        if isinstance(node, gast.Name):
            return node.id in self.locals or node.id in self.temps
        if isinstance(node, gast.Attribute):
            return self._is_local_value(node.value)
        return not isinstance(node, gast.Constant)

    def attribute(self, node: gast.Attribute) -> gast.expr:
        """``x.T``, ``x.shape``, ``x.size``, ``x.ndim`` of an array as calls."""
        if node.attr not in ARRAY_ATTRIBUTES:
            raise self.error(node, f"reading the attribute '{node.attr}' of a value is not "
                             "supported yet", "read it into a variable outside the function")
        target = ARRAY_ATTRIBUTES[node.attr]
        call = gast.Call(func=node, args=[self.atom(node.value)], keywords=[])
        set_anno(call, "callee", target)
        gast.copy_location(call, node)
        stem = f"{_word(call.args[0])}_{'T' if node.attr == 'T' else node.attr}"
        return self.temp(call, stem, node)

    def global_value(self, node: gast.expr) -> gast.expr:
        try:
            value = self.resolve(node)
        except KeyError:
            raise self.error(node, "attribute reads on values are not supported yet",
                             "read the field into a variable outside the function") from None
        if isinstance(value, bool | type(None) | str) or isinstance(value, _NUMBER):
            return const(value.item() if isinstance(value, np.generic) else value)
        if isinstance(value, np.ndarray):
            name = self.global_arrays.get(id(value))
            if name is None:
                name = self.namer.fresh(node.id if isinstance(node, gast.Name) else node.attr)
                self.global_arrays[id(value)] = name
                self.externals[name] = value
            return load(name)
        raise self.error(node, f"a {type(value).__name__} cannot be used as a value here",
                         "only numbers, strings and None are read from globals")

    # -- expressions -----------------------------------------------------------
    def atom(self, node: gast.expr) -> gast.expr:
        """Flatten ``node`` into statements; return a name or constant for its value."""
        if isinstance(node, gast.Constant):
            return node
        if isinstance(node, gast.Name):
            if (node.id in self.locals or node.id in self.temps) and \
                    node.id not in self.local_fns:
                return load(node.id)
            if node.id in self.local_fns:
                return load(node.id)  # its def was kept: see lift()
            return self.global_value(node)
        if isinstance(node, gast.Attribute):
            if self._is_local_value(node.value):
                return self.attribute(node)
            return self.global_value(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(
                node.operand, gast.Constant) and isinstance(node.operand.value, _NUMBER):
            return const(-node.operand.value)
        op, stem = self.operation(node)
        return self.temp(op, stem, node)

    def operation(self, node: gast.expr) -> tuple[gast.expr, str]:
        """One ANF operation computing ``node`` (its operands flattened) and a name stem.

        The operation keeps the source position of ``node``.
        """
        op, stem = self._operation(node)
        if hasattr(node, "lineno") and not hasattr(op, "lineno"):
            gast.copy_location(op, node)
        return op, stem

    def _operation(self, node: gast.expr) -> tuple[gast.expr, str]:
        if isinstance(node, gast.BinOp):
            a, b = self.atom(node.left), self.atom(node.right)
            return gast.BinOp(left=a, op=node.op, right=b), _stem(a, op_word(
                type(node.op).__name__), b)
        if isinstance(node, gast.UnaryOp):
            a = self.atom(node.operand)
            word = op_word(type(node.op).__name__)
            return gast.UnaryOp(op=node.op, operand=a), f"{word}_{_word(a)}"
        if isinstance(node, gast.Compare):
            return self.compare(node)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in node.elts], ctx=gast.Load()), "tup"
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, gast.IfExp | gast.BoolOp):
            return load(self.branchy(node).id), "t"
        if isinstance(node, gast.JoinedStr):
            return node, "text"
        if isinstance(node, gast.Lambda):
            return node, "function"  # a Python function value (a hook): kept as written
        if is_atom(node) or isinstance(node, gast.Attribute):
            return self.atom(node), "t"
        raise self.error(node, f"{type(node).__name__} expressions are not supported")

    def compare(self, node: gast.Compare) -> tuple[gast.expr, str]:
        if len(node.ops) == 1:
            a, b = self.atom(node.left), self.atom(node.comparators[0])
            op = gast.Compare(left=a, ops=node.ops, comparators=[b])
            return op, _stem(a, op_word(type(node.ops[0]).__name__), b)
        # a < b < c  ->  a < b and b < c, with b evaluated once
        left = self.atom(node.left)
        mid = self.atom(node.comparators[0])
        first = gast.Compare(left=left, ops=node.ops[:1], comparators=[mid])
        rest = gast.Compare(left=mid, ops=node.ops[1:], comparators=node.comparators[1:])
        gast.copy_location(first, node)
        gast.copy_location(rest, node)
        both = gast.copy_location(gast.BoolOp(op=gast.And(), values=[first, rest]), node)
        return load(self.branchy(both).id), "cmp"

    def branchy(self, node: gast.IfExp | gast.BoolOp) -> gast.Name:
        """Conditional expressions and short-circuit operators as ``if`` statements."""
        result = self.namer.fresh("ifexp" if isinstance(node, gast.IfExp) else "boolop")
        if isinstance(node, gast.IfExp):
            test = self.test(node.test, [])
            body = self.block_assign(result, node.body, node)
            orelse = self.block_assign(result, node.orelse, node)
            self.emit(gast.If(test=test, body=body, orelse=orelse), node)
            return load(result)
        self.assign(result, self.atom(node.values[0]), node)
        for value in node.values[1:]:
            first = load(result)
            if isinstance(node.op, gast.Or):
                first = self.temp(gast.UnaryOp(op=gast.Not(), operand=first), f"not_{result}",
                                  node)
            test = self.temp(first, f"cond_{result}", node)
            body = self.block_assign(result, value, node)
            self.emit(gast.If(test=test, body=body, orelse=[]), node)
        return load(result)

    def block_assign(self, target: str, value: gast.expr, like: gast.AST) -> list[gast.stmt]:
        saved, self.out = self.out, []
        self.assign(target, self.atom(value), like)
        body, self.out = self.out, saved
        return body

    def test(self, node: gast.expr, body: list[gast.stmt]) -> gast.Name:
        """A condition as a fresh name that ``body`` cannot reassign."""
        value = self.atom(node)
        if isinstance(value, gast.Name) and value.id not in _assigned_names(body) and \
                value.id not in self.parsed.params and value.id not in self.locals:
            return value
        return self.temp(value, f"cond_{_word(value)}", node)

    def subscript(self, node: gast.Subscript) -> tuple[gast.expr, str]:
        base = self.atom(node.value)
        index = self.index(node.slice)
        if isinstance(index, gast.Constant) and isinstance(index.value, int):
            stem = f"{_word(base)}_{index.value}"
        else:
            stem = f"{_word(base)}_item"
        return gast.Subscript(value=base, slice=index, ctx=gast.Load()), stem

    def index(self, node: gast.expr) -> gast.expr:
        """An index with atoms for its parts: ``i``, ``a:b:c``, ``i, :``."""
        if isinstance(node, gast.Slice):
            parts = [None if p is None else self.atom(p)
                     for p in (node.lower, node.upper, node.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.Constant) and node.value is None:
            return node
        value = self.atom(node)
        if isinstance(value, gast.Constant) and not isinstance(value.value, int):
            raise self.error(node, "an index must be an integer or a slice")
        return value

    def method(self, node: gast.Call) -> tuple[Any, list[gast.expr], list[gast.keyword]]:
        """``x.sum(axis=0)`` on an array as ``np.sum(x, axis=0)``."""
        attr = node.func.attr
        if attr not in ARRAY_METHODS:
            raise self.error(node.func, f"the method '{attr}' is not supported",
                             "call the NumPy function instead (np.{attr}(x, ...))")
        target = ARRAY_METHODS[attr]
        args = [node.func.value] + list(node.args)
        if attr == "reshape" and len(node.args) > 1:
            args = [node.func.value, gast.Tuple(elts=list(node.args), ctx=gast.Load())]
        if attr == "astype":
            target = self.astype(node)
            args = [node.func.value]
        return target, args, list(node.keywords)

    def astype(self, node: gast.Call) -> Any:
        try:
            dtype = self.resolve(node.args[0]) if node.args else None
        except KeyError:
            dtype = None
        if dtype in (int, np.int64, np.int32, np.intp):
            return runtime.astype_int
        if dtype in (float, np.float64, np.float32):
            return runtime.astype_float
        raise self.error(node, "astype(...) takes int or float (or their NumPy types) here")

    def call(self, node: gast.Call) -> tuple[gast.expr, str]:
        func = node.func
        if isinstance(func, gast.Attribute) and self._is_local_value(func.value):
            target, args, keywords = self.method(node)
            method_call = gast.Call(func=func, args=args, keywords=keywords)
            gast.copy_location(method_call, node)
            node = method_call
        elif isinstance(func, gast.Name) and func.id in self.local_fns:
            target: Any = self.local_fns[func.id]
        else:
            try:
                target = self.resolve(func)
            except KeyError:
                raise self.error(node, "calling a method or a local variable is not "
                                 "supported yet", "call a module-level function") from None
        if target is range:
            raise self.error(node, "range(...) is only supported as a for-loop iterable")
        args, keywords = self.bind(node, target)
        if target in (min, max, math.hypot) and len(args) > 2 and not keywords:
            # max(a, b, c) -> max(max(a, b), c): same value, same first-wins ties
            acc = args[0]
            for a in args[1:-1]:
                inner = gast.Call(func=func, args=[acc, a], keywords=[])
                set_anno(inner, "callee", target)
                acc = self.temp(gast.copy_location(inner, node), target.__name__, node)
            args = [acc, args[-1]]
        call = gast.Call(func=func, args=args, keywords=keywords)
        set_anno(call, "callee", target)
        name = getattr(target, "__name__", "call")
        stem = f"{name}_{_word(args[0])}" if len(args) == 1 else name
        return call, stem

    def bind(self, node: gast.Call, target: Any) -> tuple[list[gast.expr], list[gast.keyword]]:
        """Atoms for the arguments; keywords of Python functions bound to positions."""
        fn = target.parsed if isinstance(target, LocalFunction) else target
        if isinstance(target, LocalFunction) or (
                isinstance(fn, types.FunctionType) and node.keywords):
            params = fn.params if isinstance(target, LocalFunction) else list(
                inspect.signature(fn).parameters)
            defaults = fn.defaults if isinstance(target, LocalFunction) else {
                k: v.default for k, v in inspect.signature(fn).parameters.items()
                if v.default is not inspect.Parameter.empty}
            declared = params[:len(params) - len(target.free)] if isinstance(
                target, LocalFunction) else params
            given = dict(zip(declared, node.args, strict=False))
            for kw in node.keywords:
                if kw.arg not in declared or kw.arg in given:
                    raise self.error(kw.value, f"unexpected argument '{kw.arg}' in call")
                given[kw.arg] = kw.value
            args = []
            for p in declared:
                if p in given:
                    args.append(self.atom(given[p]))
                elif p in defaults:
                    args.append(const(defaults[p]))
                else:
                    raise self.error(node, f"missing argument '{p}' in call")
            if isinstance(target, LocalFunction):
                args += [load(v) for v in target.free]
            return args, []
        args = [self.atom(a) for a in node.args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in node.keywords]
        return args, keywords

    # -- statements ------------------------------------------------------------
    def stmt(self, s: gast.stmt) -> None:
        line = get_anno(s, "line")
        if line is None:
            self.line = getattr(s, "lineno", self.line)
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.error(s, f"'{type(s).__name__}' statements are not supported")
        method(s)

    def stmt_Pass(self, s: gast.Pass) -> None:
        return None

    def stmt_Expr(self, s: gast.Expr) -> None:
        if isinstance(s.value, gast.Constant):
            return  # a docstring or a bare constant
        if isinstance(s.value, gast.Call):
            call, _ = self.call(s.value)
            self.emit(gast.Expr(value=call), s)
        else:
            self.atom(s.value)

    def stmt_Assign(self, s: gast.Assign) -> None:
        first, *others = s.targets
        if isinstance(s.value, gast.Lambda) and isinstance(first, gast.Name) and not others:
            self.lift(lambda_to_def(s.value, first.id), first.id)
            return
        self.assign_to(first, s.value, s)
        for target in others:
            self.assign_to(target, first if isinstance(first, gast.Name) else s.value, s)

    def stmt_AnnAssign(self, s: gast.AnnAssign) -> None:
        if s.value is not None:
            self.assign_to(s.target, s.value, s)

    def stmt_AugAssign(self, s: gast.AugAssign) -> None:
        if isinstance(s.target, gast.Name):
            current: gast.expr = load(s.target.id)
        elif isinstance(s.target, gast.Subscript):
            current = gast.Subscript(value=s.target.value, slice=s.target.slice,
                                     ctx=gast.Load())
            gast.copy_location(current, s.target)
        else:
            raise self.error(s.target, "augmented assignment to this target is not "
                             "supported yet")
        value = gast.BinOp(left=current, op=s.op, right=s.value)
        gast.copy_location(value, s)
        self.assign_to(s.target, value, s)

    def assign_to(self, target: gast.expr, value: gast.expr, s: gast.stmt) -> None:
        if isinstance(target, gast.Name):
            op, _ = self.operation(value)
            self.assign(target.id, op, s)
            return
        if isinstance(target, gast.Tuple | gast.List):
            if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
                parts = []
                for e in value.elts:
                    a = self.atom(e)
                    parts.append(a if isinstance(a, gast.Constant)
                                 else self.temp(a, f"{_word(a)}_val", s))
            else:
                whole = self.atom(value)
                parts = [gast.Subscript(value=whole, slice=const(i), ctx=gast.Load())
                         for i in range(len(target.elts))]
            for t, part in zip(target.elts, parts, strict=True):
                self.assign_to(t, part, s)
            return
        if isinstance(target, gast.Subscript):
            self.assign_item(target, value, s)
            return
        raise self.error(target, f"assignment to {type(target).__name__.lower()} targets "
                         "is not supported yet")

    def assign_item(self, target: gast.Subscript, value: gast.expr, s: gast.stmt) -> None:
        """``x[index] = value`` on a local array (an argument's array is refused)."""
        base = target.value
        if not isinstance(base, gast.Name) or base.id not in self.locals:
            raise self.error(target, "only items of local arrays can be assigned")
        if base.id in self.parsed.params and base.id not in self.reassigned:
            raise self.error(target, f"writing into the argument array '{base.id}' is not "
                             "supported: the caller's array would change",
                             f"work on a copy: {base.id} = {base.id}.copy()")
        index = self.index(target.slice)
        item = self.atom(value)
        write = gast.Assign(targets=[gast.Subscript(value=load(base.id), slice=index,
                                                    ctx=gast.Store())],
                            value=item, type_comment=None)
        self.emit(write, s)

    def stmt_If(self, s: gast.If) -> None:
        test = self.test(s.test, s.body + s.orelse)
        node = gast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse))
        self.emit(node, s)

    def stmt_For(self, s: gast.For) -> None:
        it = s.iter
        if not (isinstance(it, gast.Call) and self._is_range(it.func)):
            self.indexed_loop(s)
            return
        if not isinstance(s.target, gast.Name):
            raise self.error(s.target, "the loop variable must be a single name")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range(...) takes one to three positional arguments")
        args = [self.atom(a) for a in it.args]
        rng = gast.Call(func=load("range"), args=args, keywords=[])
        set_anno(rng, "callee", range)
        node = gast.For(target=store(s.target.id), iter=rng, body=self.block(s.body),
                        orelse=[], type_comment=None)
        self.emit(node, s)

    def indexed_loop(self, s: gast.For) -> None:
        """``for v in x`` / ``zip(a, b)`` / ``enumerate(x)`` as a range loop with indexing."""
        index = self.namer.fresh("i")
        self.locals.add(index)
        arrays: list[gast.Name] = []
        target, pattern = s.target, self.loop_pattern(s.iter, load(index), arrays)
        if isinstance(target, gast.Tuple) and isinstance(pattern, gast.Tuple) and \
                isinstance(target.elts[0], gast.Name) and \
                isinstance(pattern.elts[0], gast.Name) and pattern.elts[0].id == index:
            index = target.elts[0].id  # enumerate: the user's own counter is the index
            target = gast.Tuple(elts=target.elts[1:], ctx=gast.Store())
            pattern = gast.Tuple(elts=[_rename(e, pattern.elts[0].id, index)
                                       for e in pattern.elts[1:]], ctx=gast.Load())
            if len(target.elts) == 1:
                target, pattern = target.elts[0], pattern.elts[0]
        count: gast.expr = _call("len", arrays[0])
        for a in arrays[1:]:
            count = _call("min", count, _call("len", a))
        first = gast.copy_location(gast.Assign(targets=[target], value=pattern,
                                               type_comment=None), s)
        loop = gast.For(target=store(index), iter=_call("range", count), body=[first] + s.body,
                        orelse=[], type_comment=None)
        self.stmt_For(gast.copy_location(loop, s))

    def loop_pattern(self, it: gast.expr, index: gast.Name, arrays: list) -> gast.expr:
        """What the loop variable takes at ``index``; collects the arrays looped over."""
        if isinstance(it, gast.Call) and it.args and not it.keywords:
            try:
                fn = self.resolve(it.func)
            except KeyError:
                fn = None
            if fn is zip:
                return gast.Tuple(elts=[self.loop_pattern(a, index, arrays) for a in it.args],
                                  ctx=gast.Load())
            if fn is enumerate and len(it.args) == 1:
                return gast.Tuple(elts=[index, self.loop_pattern(it.args[0], index, arrays)],
                                  ctx=gast.Load())
        array = self.atom(it)
        if not isinstance(array, gast.Name):
            raise self.error(it, "for loops over this value are not supported",
                             "loop over range(...), an array, zip(...) or enumerate(...)")
        arrays.append(array)
        return gast.Subscript(value=array, slice=index, ctx=gast.Load())

    def _is_range(self, func: gast.expr) -> bool:
        try:
            return self.resolve(func) is range
        except KeyError:
            return False

    def stmt_While(self, s: gast.While) -> None:
        cond = self.namer.fresh("loop_cond")
        self.assign(cond, self.atom(s.test), s)
        saved_line = self.line
        body = self.block(s.body)
        self.line = saved_line
        recheck = self.block_assign(cond, s.test, s)
        self.emit(gast.While(test=load(cond), body=body + recheck, orelse=[]), s)

    def stmt_Break(self, s: gast.Break) -> None:
        self.emit(gast.Break(), s)

    def stmt_Return(self, s: gast.Return) -> None:
        if s.value is None or is_atom(s.value):
            value = self.atom(s.value) if s.value is not None else const(None)
        else:
            op, _ = self.operation(s.value)
            value = self.temp(op, "result", s)
        self.emit(gast.Return(value=value), s)

    def stmt_Raise(self, s: gast.Raise) -> None:
        self.emit(s)

    def stmt_Assert(self, s: gast.Assert) -> None:
        self.emit(gast.Assert(test=self.atom(s.test), msg=s.msg), s)

    def stmt_FunctionDef(self, s: gast.FunctionDef) -> None:
        self.lift(s, s.name)

    def lift(self, fdef: gast.FunctionDef, name: str) -> None:
        """Lift a local function to the top level, passing what it reads as arguments.

        A local function also used as a value (a hook passed to
        ``with_derivative``) keeps its ``def`` in the body as well: Python code
        that the generated function runs as written.
        """
        if self._used_as_value(name):
            kept = copy.deepcopy(fdef)
            kept.name = name
            self.emit(kept, fdef)
        own = {a.id for a in fdef.args.args} | _assigned_names(fdef.body)
        free = tuple(sorted((_loaded_names(fdef) - own) & (self.locals - set(self.local_fns))))
        extra = [store(v) for v in free]
        for a in extra:
            a.ctx = gast.Param()
        fdef.args.args = list(fdef.args.args) + extra
        parsed = ParsedFunction(name=f"{self.parsed.name}_{name}", node=fdef,
                                filename=self.parsed.filename,
                                namespace=self.parsed.namespace,
                                key=(self.parsed.key, fdef.lineno, fdef.col_offset))
        finish_parse(parsed)
        self.local_fns[name] = LocalFunction(parsed=parsed, free=free)


def _value_uses(body: list[gast.stmt], name: str) -> bool:
    calls = {id(n.func) for s in body for n in gast.walk(s) if isinstance(n, gast.Call)}
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               and id(n) not in calls for s in body for n in gast.walk(s))


def _call(name: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=load(name), args=list(args), keywords=[])


def _rename(node: gast.expr, old: str, new: str) -> gast.expr:
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == old:
            n.id = new
    return node


ARRAY_ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "size": np.size, "ndim": np.ndim}
ARRAY_METHODS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max,
                 "min": np.min, "reshape": np.reshape, "transpose": np.transpose,
                 "dot": np.dot, "copy": np.copy, "argmax": np.argmax, "argmin": np.argmin,
                 "ravel": np.ravel, "flatten": np.ravel, "clip": np.clip, "astype": None}


def _word(atom: gast.expr) -> str:
    if isinstance(atom, gast.Name):
        return atom.id
    if isinstance(atom, gast.Constant) and isinstance(atom.value, int | float):
        value = atom.value
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e6 else "c"
    return "c"


def _stem(a: gast.expr, word: str, b: gast.expr) -> str:
    stem = f"{_word(a)}_{word}_{_word(b)}"
    return stem if len(stem) <= 16 else word


def normalize(parsed: ParsedFunction) -> NormalFunction:
    """Desugar control flow and flatten ``parsed`` into A-normal form.

    >>> import s2s_ad.parse as p  # doctest: +SKIP
    >>> def f(x, y):
    ...     return math.sin(x) * y
    >>> print(emit_tree(normalize(p.parse_function(f)).node))  # doctest: +SKIP
    def f(x, y):
        sin_x = math.sin(x)
        sin_x_mul_y = sin_x * y
        return sin_x_mul_y
    """
    norm = _Normalizer(parsed)
    fdef = parsed.node
    work = gast.FunctionDef(name=fdef.name, args=fdef.args, body=list(fdef.body),
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    copy_annos(fdef, work)
    work.body = copy.deepcopy(fdef.body)
    desugar_control(work, norm.namer)
    norm.locals |= _assigned_names(work.body)
    body = norm.block(work.body)
    result = gast.FunctionDef(name=fdef.name, args=fdef.args, body=body, decorator_list=[],
                              returns=None, type_comment=None, type_params=[])
    copy_annos(fdef, result)
    return NormalFunction(parsed=parsed, node=result, namer=norm.namer,
                          locals=norm.locals | set(parsed.params), externals=norm.externals,
                          temps=norm.temps)
