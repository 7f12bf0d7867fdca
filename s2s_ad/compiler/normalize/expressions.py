"""The anf stage (normalize), part: expressions in A-normal form.

Flattens an expression into statements that each do one operation on atoms
(names and constants), resolves what calls and global names refer to, turns
conditional expressions and short-circuit operators into ``if`` statements,
and rewrites array methods and attributes (``x.sum(axis=0)``, ``x.T``) into
the NumPy calls the rule table knows.
"""

from __future__ import annotations

import copy
import inspect
import math
import numbers
import types
from typing import Any

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.dependencies import note_attribute
from s2s_ad.compiler.ir import GlobalRead, LocalFunction, numbers_sequence
from s2s_ad.compiler.normalize.dtypes import dtype_argument, scalar_type
from s2s_ad.compiler.normalize.gradient_code import DTYPE_SECOND, range_call, trip_count
from s2s_ad.compiler.normalize.library_calls import (
    SPLITS,
    einsum_subscripts,
    index_join,
    literal_tuple,
    literal_value,
    repeated_display,
    split_pieces,
)
from s2s_ad.compiler.primitives import LIBRARY_MODULES, is_library
from s2s_ad.compiler.structure_layout import builds_structure, call_method, call_value
from s2s_ad.compiler.syntax.annotations import callee_of, set_attribute, set_callee, set_method
from s2s_ad.compiler.syntax.builders import (
    assigned_names,
    attribute,
    binop,
    bool_op,
    call_node,
    compare,
    const,
    if_stmt,
    keyword,
    load,
    slice_of,
    subscript_of,
    tuple_of,
    unary,
)
from s2s_ad.compiler.syntax.names import op_word
from s2s_ad.kinds import is_structure
from s2s_ad.rules import array_methods, lookup

_NUMBER = (numbers.Number, np.generic)


ARRAY_ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "size": np.size, "ndim": np.ndim}


def atom_word(atom: gast.expr) -> str:
    if isinstance(atom, gast.Name):
        return atom.id
    if isinstance(atom, gast.Constant) and isinstance(atom.value, int | float):
        value = atom.value
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e6 else "c"
    return "c"


def _stem(a: gast.expr, word: str, b: gast.expr) -> str:
    stem = f"{atom_word(a)}_{word}_{atom_word(b)}"
    return stem if len(stem) <= 16 else word


def is_atom(node: gast.AST) -> bool:
    return isinstance(node, gast.Name | gast.Constant)


class ExpressionNormalizer:
    """The expression half of the normalizer; the statement half
    (:mod:`s2s_ad.compiler.normalize.statements`) extends it."""

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
                value = getattr(base, node.attr)
            except AttributeError:
                raise self.error(node, f"'{node.attr}' is not an attribute of "
                                 f"{getattr(base, '__name__', base)!r}") from None
            if isinstance(base, types.ModuleType) and \
                    base.__name__.split(".")[0] not in LIBRARY_MODULES:
                note_attribute(base, node.attr, value)  # mymod.helper: rebinding it counts
            return value
        raise KeyError(node)

    def global_value(self, node: gast.expr) -> gast.expr:
        try:
            value = self.resolve(node)
        except KeyError:
            raise self.error(node, "attribute reads on values are not supported yet",
                             "read the field into a variable outside the function") from None
        if isinstance(node, gast.Name) and (isinstance(value, (np.ndarray, bool, *_NUMBER))
                                            or is_structure(value) or numbers_sequence(value)):
            return load(self.global_read(node.id))
        if isinstance(value, bool | type(None) | str) or isinstance(value, _NUMBER):
            return const(value.item() if isinstance(value, np.generic) else value)
        if isinstance(value, np.ndarray):
            name = self.global_arrays.get(id(value))
            if name is None:
                name = self.namer.fresh(node.id if isinstance(node, gast.Name) else node.attr,
                                        source=gast.unparse(node).strip())
                self.global_arrays[id(value)] = name
                self.externals[name] = value
            return load(name)
        if callable(value) and not isinstance(value, type):
            # a function as a value: a structure's static field (Dense(w, b, np.tanh)); the
            # structures stage refuses any other use at its line
            name = self.namer.fresh(getattr(value, "__name__", "function"),
                                    source=gast.unparse(node).strip())
            self.externals[name] = value
            return load(name)
        if isinstance(value, type) and issubclass(value, float | int | bool | np.generic):
            raise self.error(node, f"the type '{value.__name__}' cannot be used as a value "
                             "here (a dtype= argument is not supported)",
                             "leave out dtype= (arrays here are float64) and convert with "
                             ".astype(...) or np.float32(...) where needed")
        raise self.error(node, f"a {type(value).__name__} cannot be used as a value here",
                         "only numbers, strings, None and tuples or lists of numbers are "
                         "read from globals")

    def global_read(self, source: str) -> str:
        """The generated name of the global (or closure) variable ``source``: an extra
        parameter of the generated functions, given the variable's value at each call."""
        for name, read in self.hidden.items():
            if read.name == source:
                return name
        name = self.namer.fresh(source, source=source)
        self.hidden[name] = GlobalRead(self.parsed.namespace, source)
        self.temps.add(name)
        return name

    def _is_local_value(self, node: gast.expr) -> bool:
        """Whether ``node`` is an expression over local values (not a module path)."""
        if isinstance(node, gast.Name):
            return node.id in self.locals or node.id in self.temps
        if isinstance(node, gast.Attribute):
            return self._is_local_value(node.value)
        return not isinstance(node, gast.Constant)

    def _is_array_value(self, node: gast.expr) -> bool:
        """Whether ``node`` is a local value, a global array (whose methods,
        ``W.copy()``, are read at call time like ``np.copy(W)``) or a global
        structure (whose fields and methods, ``G.w`` and ``G.norm()``, are read at
        call time like a local structure's, never fixed when the code is made)."""
        if self._is_local_value(node):
            return True
        try:
            value = self.resolve(node)
        except KeyError:
            return False
        return isinstance(value, np.ndarray) or is_structure(value)

    def attribute(self, node: gast.Attribute) -> gast.expr:
        """``x.T``, ``x.shape``, ``x.size``, ``x.ndim`` of an array as calls; any other
        attribute is a structure's field, read as written (the kinds stage lowers it)."""
        if node.attr not in ARRAY_ATTRIBUTES:
            read = attribute(self.atom(node.value), node.attr)
            return self.temp(gast.copy_location(read, node),
                             f"{atom_word(read.value)}_{node.attr}", node)
        target = ARRAY_ATTRIBUTES[node.attr]
        call = call_node(node, [self.atom(node.value)])
        set_callee(call, target)
        set_attribute(call, node.attr)  # a structure's field, if that is what it is
        gast.copy_location(call, node)
        stem = f"{atom_word(call.args[0])}_{'T' if node.attr == 'T' else node.attr}"
        return self.temp(call, stem, node)

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
            if self._is_array_value(node.value):
                return self.attribute(node)
            return self.global_value(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            number = self._constant_number(node.operand)
            if number is not None:  # -1.5, -np.inf: a constant (an ord=-np.inf stays one)
                return const(-number)
        op, stem = self.operation(node)
        return self.temp(op, stem, node)

    def _constant_number(self, node: gast.expr) -> Any:
        """The value of a number literal or a module's number (``np.inf``), else None."""
        if isinstance(node, gast.Constant):
            return node.value if isinstance(node.value, _NUMBER) else None
        if isinstance(node, gast.Attribute) and not self._is_array_value(node.value):
            value = self.resolve(node)
            if isinstance(value, _NUMBER) and not isinstance(value, bool | np.bool_):
                return value.item() if isinstance(value, np.generic) else value
        return None

    def operation(self, node: gast.expr) -> tuple[gast.expr, str]:
        """One ANF operation computing ``node`` (its operands flattened) and a name stem.

        The operation keeps the source position of ``node``.
        """
        op, stem = self._operation(node)
        if hasattr(node, "lineno") and not hasattr(op, "lineno"):
            gast.copy_location(op, node)
        return op, stem

    def _operation(self, node: gast.expr) -> tuple[gast.expr, str]:
        repeated = repeated_display(node)
        if repeated is not None:  # (x, y) * 2, [x] * 3: the items written out
            items, times = repeated
            atoms = [self.atom(e) for e in items]
            return tuple_of([copy.deepcopy(a) for _ in range(times) for a in atoms]), "tup"
        if isinstance(node, gast.BinOp):
            a, b = self.atom(node.left), self.atom(node.right)
            return binop(a, node.op, b), _stem(a, op_word(type(node.op).__name__), b)
        if isinstance(node, gast.UnaryOp):
            a = self.atom(node.operand)
            word = op_word(type(node.op).__name__)
            return unary(node.op, a), f"{word}_{atom_word(a)}"
        if isinstance(node, gast.Compare):
            return self.compare(node)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Tuple):
            return tuple_of([self.atom(e) for e in node.elts]), "tup"
        if isinstance(node, gast.Dict):
            return self.dict_display(node), "d"
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

    def dict_display(self, node: gast.Dict) -> gast.Call:
        """``{"w": a, "b": b}`` as ``dict(w=a, b=b)``: a structure (keys are strings)."""
        keywords = []
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, gast.Constant) and isinstance(key.value, str)):
                raise self.error(key or node, "a dict's keys must be string constants here",
                                 "use a dict with string keys, a dataclass or a tuple")
            keywords.append(keyword(key.value, self.atom(value)))
        call = call_node(load("dict"), [], keywords)
        set_callee(call, dict)
        return call

    def compare(self, node: gast.Compare) -> tuple[gast.expr, str]:
        if len(node.ops) == 1:
            a, b = self.atom(node.left), self.atom(node.comparators[0])
            op = compare(a, node.ops, [b])
            return op, _stem(a, op_word(type(node.ops[0]).__name__), b)
        # a < b < c  ->  a < b and b < c, with b evaluated once
        left = self.atom(node.left)
        mid = self.atom(node.comparators[0])
        first = compare(left, node.ops[:1], [mid])
        rest = compare(mid, node.ops[1:], node.comparators[1:])
        gast.copy_location(first, node)
        gast.copy_location(rest, node)
        both = gast.copy_location(bool_op(gast.And(), [first, rest]), node)
        return load(self.branchy(both).id), "cmp"

    def branchy(self, node: gast.IfExp | gast.BoolOp) -> gast.Name:
        """Conditional expressions and short-circuit operators as ``if`` statements."""
        result = self.namer.fresh("ifexp" if isinstance(node, gast.IfExp) else "boolop")
        if isinstance(node, gast.IfExp):
            test = self.test(node.test, [])
            body = self.block_assign(result, node.body, node)
            orelse = self.block_assign(result, node.orelse, node)
            self.emit(if_stmt(test, body, orelse), node)
            return load(result)
        self.assign(result, self.atom(node.values[0]), node)
        for value in node.values[1:]:
            first = load(result)
            if isinstance(node.op, gast.Or):
                first = self.temp(unary(gast.Not(), first), f"not_{result}", node)
            test = self.temp(first, f"cond_{result}", node)
            body = self.block_assign(result, value, node)
            self.emit(if_stmt(test, body, []), node)
        return load(result)

    def block_assign(self, target: str, value: gast.expr, like: gast.AST) -> list[gast.stmt]:
        saved, self.out = self.out, []
        self.assign(target, self.atom(value), like)
        body, self.out = self.out, saved
        return body

    def test(self, node: gast.expr, body: list[gast.stmt]) -> gast.Name:
        """A condition as a fresh name that ``body`` cannot reassign."""
        value = self.atom(node)
        if isinstance(value, gast.Name) and value.id not in assigned_names(body) and \
                value.id not in self.parsed.params and value.id not in self.locals:
            return value
        return self.temp(value, f"cond_{atom_word(value)}", node)

    def subscript(self, node: gast.Subscript) -> tuple[gast.expr, str]:
        joined = index_join(self, node)
        if joined is not None:
            return self.call(joined)
        base = self.atom(node.value)
        index = self.index(node.slice)
        if isinstance(index, gast.Constant) and index.value is Ellipsis:
            # x[...] is all of x, its memory (a view): the reference itself, which the
            # aliasing analysis follows as it follows y = x (Numba cannot read x[...])
            return base, f"{atom_word(base)}_all"
        if isinstance(index, gast.Constant) and isinstance(index.value, int):
            stem = f"{atom_word(base)}_{index.value}"
        else:
            stem = f"{atom_word(base)}_item"
        return subscript_of(base, index), stem

    def index(self, node: gast.expr) -> gast.expr:
        """An index with atoms for its parts: ``i``, ``a:b:c``, ``i, :``."""
        if isinstance(node, gast.Slice):
            parts = [None if p is None else self.atom(p)
                     for p in (node.lower, node.upper, node.step)]
            return slice_of(parts[0], parts[1], parts[2])
        if isinstance(node, gast.Tuple):
            return tuple_of([self.index(e) for e in node.elts])
        if isinstance(node, gast.Constant) and (node.value is None or node.value is Ellipsis):
            return node
        value = self.atom(node)  # np.newaxis is None
        if isinstance(value, gast.Constant) and not isinstance(value.value, int | str | None):
            raise self.error(node, "an index must be an integer, a slice, an array, None or ...")
        return value

    def method(self, node: gast.Call) -> tuple[Any, list[gast.expr], list[gast.keyword]]:
        """``x.sum(axis=0)`` on an array as ``np.sum(x, axis=0)``."""
        attr = node.func.attr
        # the spellings the rules declare (Rule.methods), and astype (see ``astype``)
        methods = {**array_methods(), "astype": None}
        if attr not in methods:  # a structure's method (the kinds stage checks)
            return call_method, [node.func.value, const(attr), *node.args], list(node.keywords)
        target = methods[attr]
        args = [node.func.value] + list(node.args)
        if attr in ("reshape", "transpose") and len(node.args) > 1:
            args = [node.func.value, tuple_of(list(node.args))]
        if attr == "astype":
            target = self.astype(node)
            args = [node.func.value]
        return target, args, list(node.keywords)

    def astype(self, node: gast.Call) -> Any:
        try:
            dtype = self.resolve(node.args[0]) if node.args else None
        except KeyError:
            dtype = None
        if node.args and isinstance(node.args[0], gast.Constant):  # astype("float64")
            dtype = scalar_type(str(node.args[0].value))
        if dtype in (int, np.int64, np.int32, np.intp):
            return runtime.astype_int
        if dtype in (float, np.float64, np.float32):
            return runtime.astype_float
        raise self.error(node, "astype(...) takes int or float (or their NumPy types) here")

    def call(self, node: gast.Call) -> tuple[gast.expr, str]:
        func = node.func
        method_name = None
        if callee_of(node) is not None:  # a call the compiler wrote (np.array)
            target = callee_of(node)
        elif isinstance(func, gast.Attribute) and self._is_array_value(func.value):
            method_name = func.attr
            target, args, keywords = self.method(node)
            method_call = call_node(func, args, keywords)
            gast.copy_location(method_call, node)
            node = method_call
        elif isinstance(func, gast.Name) and func.id in self.local_fns:
            target: Any = self.local_fns[func.id]
        else:
            try:
                target = self.resolve(func)
            except KeyError:  # a local value: a structure, or a function in a field
                target = None
            # an @ad.differentiable function: differentiated through the function it wraps
            target = getattr(target, "__s2s_ad_wraps__", target)
            if target is None or is_structure(target):  # called through its __call__
                target = call_value
                node = gast.copy_location(call_node(func, [func, *node.args], node.keywords), node)
        if target is len and range_call(self, node):
            node, target = trip_count(node), runtime.range_length
        if target is range:
            raise self.error(node, "range(...) is only supported as a for-loop iterable")
        if any(target is split for split in SPLITS):  # (a ctypes callee is unhashable)
            return split_pieces(self, node, target), "pieces"
        if target is np.einsum and len(node.args) > 1 and \
                isinstance(literal_value(node.args[1]), tuple):  # einsum(a, [0, 1], ...)
            node = einsum_subscripts(self, node)
        args, keywords = self.bind(node, target)
        if target in (min, max, math.hypot) and len(args) > 2 and not keywords:
            # max(a, b, c) -> max(max(a, b), c): same value, same first-wins ties
            acc = args[0]
            for a in args[1:-1]:
                inner = call_node(func, [acc, a])
                set_callee(inner, target)
                acc = self.temp(gast.copy_location(inner, node), target.__name__, node)
            args = [acc, args[-1]]
        call = call_node(func, args, keywords)
        set_callee(call, target)
        if method_name is not None and target is not call_method:
            set_method(call, method_name)  # a structure's method, if it is one
        name = getattr(target, "__name__", "call")
        stem = f"{name}_{atom_word(args[0])}" if len(args) == 1 else name
        if target is call_method:
            stem = f"{atom_word(args[0])}_{args[1].value}"
        elif target is call_value:
            stem = f"{atom_word(args[0])}_out"
        return call, stem

    def bind(self, node: gast.Call, target: Any) -> tuple[list[gast.expr], list[gast.keyword]]:
        """Atoms for the arguments; keywords of Python functions bound to positions."""
        fn = target.parsed if isinstance(target, LocalFunction) else target
        if target is call_method or target is call_value or builds_structure(target):
            pass  # bound by the kinds stage (structure_access)
        elif isinstance(target, LocalFunction) or (
                isinstance(fn, types.FunctionType) and (node.keywords or _omits_defaults(fn))
                and not (is_library(fn) and lookup(fn, len(node.args)))):  # np.ones(dtype=)
            params = fn.params if isinstance(target, LocalFunction) else list(
                inspect.signature(fn).parameters)
            defaults = dict(target.defaults) if isinstance(target, LocalFunction) else {
                k: const(v.default) for k, v in inspect.signature(fn).parameters.items()
                if v.default is not inspect.Parameter.empty}
            declared = params[:len(params) - len(target.free)] if isinstance(
                target, LocalFunction) else params
            given = dict(zip(declared, node.args, strict=False))
            for kw in node.keywords:
                if kw.arg not in declared or kw.arg in given:
                    raise self.error(kw.value, f"unexpected argument '{kw.arg}' in call")
                given[kw.arg] = kw.value
            args = []
            read = self.library_argument if is_library(target) else self.atom
            for p in declared:
                if p in given:
                    args.append(read(given[p]))
                elif p in defaults:
                    args.append(copy.deepcopy(defaults[p]))
                else:
                    raise self.error(node, f"missing argument '{p}' in call")
            if isinstance(target, LocalFunction):
                args += [load(v) for v in target.free]
            return args, []
        read = self.library_argument if is_library(target) else self.atom
        given, named = list(node.args), list(node.keywords)
        if target in DTYPE_SECOND and len(given) == 2:  # np.empty(n, np.bool_)
            named.append(keyword("dtype", given.pop()))
        args = [read(a) for a in given]
        keywords = [keyword(k.arg, dtype_argument(self, k.value) if k.arg == "dtype"
                            else read(k.value)) for k in named]
        return args, keywords

    def library_argument(self, node: gast.expr) -> gast.expr:
        """An argument of a library call: a literal tuple of ints (``axis=(0, 2)``) is one
        constant, which a rule reads like any other."""
        return literal_tuple(node) or self.atom(node)


def _omits_defaults(fn: types.FunctionType) -> bool:
    """A user function with default values (a call may leave them out: bind them)."""
    return bool(fn.__defaults__) and not is_library(fn)

