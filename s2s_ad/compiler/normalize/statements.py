"""The anf stage (normalize): desugar, resolve names, and put the body in A-normal form.

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

import builtins
import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import gast
import numba

from s2s_ad.compiler.ir import GlobalRead, LocalFunction, ParsedFunction
from s2s_ad.compiler.normalize.arguments import copy_in_and_back, localize
from s2s_ad.compiler.normalize.control import desugar_control
from s2s_ad.compiler.normalize.expressions import atom_word, is_atom
from s2s_ad.compiler.normalize.gradient_code import adds_into_slice
from s2s_ad.compiler.normalize.growing import COMPREHENSIONS, ListNormalizer, list_names
from s2s_ad.compiler.parse import finish_parse, lambda_to_def
from s2s_ad.compiler.syntax.annotations import (
    callee_of,
    copy_annos,
    line_of,
    mark_in_place,
    mark_parallel,
    set_callee,
    set_line,
)
from s2s_ad.compiler.syntax.builders import (
    assert_stmt,
    assigned_names,
    assignment,
    aug_item,
    binop,
    break_stmt,
    call_node,
    const,
    expr_stmt,
    for_stmt,
    function_node,
    if_stmt,
    load,
    loaded_names,
    return_stmt,
    store,
    store_item,
    store_tuple,
    subscript_of,
    tuple_of,
    while_stmt,
)
from s2s_ad.compiler.syntax.names import RESERVED, Namer, module_functions
from s2s_ad.errors import NonDifferentiableError


@dataclass(eq=False)
class NormalFunction:
    """The result of :func:`normalize`: an ANF ``FunctionDef`` and its context."""

    parsed: ParsedFunction
    node: gast.FunctionDef
    namer: Namer
    locals: set[str] = field(default_factory=set)
    externals: dict[str, Any] = field(default_factory=dict)  # module arrays read
    hidden: dict[str, GlobalRead] = field(default_factory=dict)  # globals read at each call
    temps: set[str] = field(default_factory=set)  # names normalization introduced
    written_params: list[str] = field(default_factory=list)  # argument arrays it writes
    copies: dict[str, str] = field(default_factory=dict)  # written parameter -> its copy
    return_flag: str | None = None  # set by an early return (``if not flag:`` skips)

    @property
    def params(self) -> list[str]:
        return self.parsed.params

    @property
    def result(self) -> gast.expr:
        """The atom the function returns."""
        return self.node.body[-1].value




class _Normalizer(ListNormalizer):
    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        fdef = parsed.node
        self.list_names = list_names(fdef)
        self.list_arrays: set[str] = set()
        self.locals = set(parsed.params) | assigned_names(fdef.body)
        self.reassigned = assigned_names(fdef.body)
        every = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        self.namer = Namer(every | self.locals | set(parsed.namespace) | RESERVED
                           | module_functions(fdef.name))
        self.local_fns: dict[str, LocalFunction] = {}
        self.temps: set[str] = set()
        self.list_names |= self.typed_lists(fdef)
        self.externals: dict[str, Any] = {}  # arrays of modules the body reads
        self.hidden: dict[str, GlobalRead] = {}  # global variables the body reads
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
        set_line(stmt, getattr(like, "lineno", None) or self.line)
        self.out.append(stmt)
        return stmt

    def assign(self, target: str, value: gast.expr, like: gast.AST) -> None:
        self.emit(assignment([store(target)], value), like)

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


    # -- statements ------------------------------------------------------------
    def stmt(self, s: gast.stmt) -> None:
        line = line_of(s)
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
        if self.is_list_method(s.value):
            self.list_method(s.value, s)
        elif adds_into_slice(self, s.value):  # gradient code: d_x[1:4] += contribution
            view, contribution = s.value.args
            self.stmt_AugAssign(gast.copy_location(
                aug_item(view.value.id, view.slice, contribution, None), s))
        elif isinstance(s.value, gast.Call):
            call, _ = self.call(s.value)
            self.emit(expr_stmt(call), s)
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
            current = subscript_of(s.target.value, s.target.slice)
            gast.copy_location(current, s.target)
        else:
            raise self.error(s.target, "augmented assignment to this target is not "
                             "supported yet")
        value = binop(current, s.op, s.value)
        gast.copy_location(value, s)
        self.assign_to(s.target, value, s)
        if isinstance(s.target, gast.Name):
            mark_in_place(self.out[-1])  # on an array, Python mutates it

    def assign_to(self, target: gast.expr, value: gast.expr, s: gast.stmt) -> None:
        if isinstance(target, gast.Name) and (isinstance(value, (gast.List, *COMPREHENSIONS))
                                              or self.new_typed_list(value)):
            self.build_list(target.id, value, s)
            return
        if isinstance(target, gast.Name):
            op, _ = self.operation(value)
            self.assign(target.id, op, s)
            return
        if isinstance(target, gast.Tuple | gast.List):
            if isinstance(value, gast.Tuple) and any(
                    isinstance(t, gast.Name) and t.id in self.list_names
                    for t in target.elts):  # a, b = [], []: lists built one by one
                for t, v in zip(target.elts, value.elts, strict=True):
                    self.assign_to(t, v, s)
                return
            if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
                parts = []
                for e in value.elts:
                    a = self.atom(e)
                    parts.append(a if isinstance(a, gast.Constant)
                                 else self.temp(a, f"{atom_word(a)}_val", s))
            else:
                whole = self.atom(value)
                parts = [subscript_of(whole, const(i)) for i in range(len(target.elts))]
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
        write = assignment([store_item(load(base.id), index)], item)
        self.emit(write, s)

    def stmt_If(self, s: gast.If) -> None:
        test = self.test(s.test, s.body + s.orelse)
        node = if_stmt(test, self.block(s.body), self.block(s.orelse))
        self.emit(node, s)

    def stmt_For(self, s: gast.For) -> None:
        it = s.iter
        parallel = isinstance(it, gast.Call) and self._resolves_to(it.func, numba.prange)
        if not (isinstance(it, gast.Call) and (callee_of(it) is range or parallel
                                               or self._resolves_to(it.func, range))):
            self.indexed_loop(s)
            return
        if not isinstance(s.target, gast.Name):
            raise self.error(s.target, "the loop variable must be a single name")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range(...) takes one to three positional arguments")
        args = [self.atom(a) for a in it.args]
        rng = call_node(load("range"), args)
        set_callee(rng, range)
        node = for_stmt(store(s.target.id), rng, self.block(s.body))
        if parallel:
            mark_parallel(node)
        self.emit(node, s)

    def indexed_loop(self, s: gast.For) -> None:
        """``for v in x`` / ``zip(a, b)`` / ``enumerate(x)`` as a range loop with indexing
        (a loop over an empty display runs never: none is written)."""
        if self._empty_display(s.iter):
            return
        index = self.namer.fresh("i")
        self.locals.add(index)
        arrays: list[gast.Name] = []
        target, pattern = s.target, self.loop_pattern(s.iter, load(index), arrays)
        if isinstance(target, gast.Tuple) and isinstance(pattern, gast.Tuple) and \
                isinstance(target.elts[0], gast.Name) and \
                isinstance(pattern.elts[0], gast.Name) and pattern.elts[0].id == index:
            index = target.elts[0].id  # enumerate: the user's own counter is the index
            target = store_tuple(target.elts[1:])
            pattern = tuple_of([_rename(e, pattern.elts[0].id, index)
                                for e in pattern.elts[1:]])
            if len(target.elts) == 1:
                target, pattern = target.elts[0], pattern.elts[0]
        count: gast.expr = _call("len", arrays[0])
        for a in arrays[1:]:
            count = _call("min", count, _call("len", a))
        for n in gast.walk(count):
            gast.copy_location(n, s)
        first = gast.copy_location(assignment([target], pattern), s)
        loop = for_stmt(store(index), _call("range", count), [first] + s.body)
        self.stmt_For(gast.copy_location(loop, s))

    def loop_pattern(self, it: gast.expr, index: gast.Name, arrays: list) -> gast.expr:
        """What the loop variable takes at ``index``; collects the arrays looped over."""
        if isinstance(it, gast.Call) and it.args and all(k.arg == "strict"
                                                         for k in it.keywords):
            try:
                fn = self.resolve(it.func)
            except KeyError:
                fn = None
            if fn is zip:
                return tuple_of([self.loop_pattern(a, index, arrays) for a in it.args])
            if fn is enumerate and len(it.args) == 1:
                return tuple_of([index, self.loop_pattern(it.args[0], index, arrays)])
        array = self.atom(it)
        if not isinstance(array, gast.Name):
            raise self.error(it, "for loops over this value are not supported",
                             "loop over range(...), an array, zip(...) or enumerate(...)")
        arrays.append(array)
        return subscript_of(array, index)

    def _empty_display(self, it: gast.expr) -> bool:
        """``()``, or a name bound only to ``()`` (an empty list display, frozen)."""
        if isinstance(it, gast.Tuple):
            return not it.elts
        if not isinstance(it, gast.Name) or it.id in self.list_names:
            return False
        values = [n.value for n in gast.walk(self.parsed.node) if isinstance(n, gast.Assign)
                  and any(isinstance(t, gast.Name) and t.id == it.id for t in n.targets)]
        stores = [n for n in gast.walk(self.parsed.node) if isinstance(n, gast.Name)
                  and n.id == it.id and isinstance(n.ctx, gast.Store | gast.Param)]
        return len(values) == len(stores) == 1 and isinstance(values[0], gast.Tuple) \
            and not values[0].elts

    def _resolves_to(self, func: gast.expr, obj: Any) -> bool:
        try:
            return self.resolve(func) is obj
        except KeyError:
            return False

    def stmt_While(self, s: gast.While) -> None:
        cond = self.namer.fresh("loop_cond")
        self.assign(cond, self.atom(s.test), s)
        saved_line = self.line
        body = self.block(s.body)
        self.line = saved_line
        recheck = self.block_assign(cond, s.test, s)
        self.emit(while_stmt(load(cond), body + recheck), s)

    def stmt_Break(self, s: gast.Break) -> None:
        self.emit(break_stmt(), s)

    def stmt_Return(self, s: gast.Return) -> None:
        if s.value is None or is_atom(s.value):
            value = self.atom(s.value) if s.value is not None else const(None)
        else:
            op, _ = self.operation(s.value)
            value = self.temp(op, "result", s)
        self.emit(return_stmt(value), s)

    def stmt_Raise(self, s: gast.Raise) -> None:
        self.emit(s)

    def stmt_Assert(self, s: gast.Assert) -> None:
        self.emit(assert_stmt(self.atom(s.test), s.msg), s)

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
        defaults = self.default_atoms(fdef)
        args = fdef.args  # keyword-only parameters become plain ones, before the free ones
        args.args = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
        args.posonlyargs, args.kwonlyargs, args.kw_defaults, args.defaults = [], [], [], []
        own = {a.id for a in args.args} | assigned_names(fdef.body)
        free = tuple(sorted((set(loaded_names(fdef)) - own) & (self.locals - set(self.local_fns))))
        extra = [store(v) for v in free]
        for a in extra:
            a.ctx = gast.Param()
        args.args = args.args + extra
        parsed = ParsedFunction(name=f"{self.parsed.name}_{name}", node=fdef,
                                filename=self.parsed.filename,
                                namespace=self.parsed.namespace,
                                key=(self.parsed.key, fdef.lineno, fdef.col_offset))
        finish_parse(parsed)
        self.local_fns[name] = LocalFunction(parsed=parsed, free=free, defaults=defaults)

    def default_atoms(self, fdef: gast.FunctionDef) -> tuple[tuple[str, gast.expr], ...]:
        """The default values of a local function's parameters, computed where its
        ``def`` runs (as Python does): a constant, or a variable set there."""
        args = fdef.args
        ordinary = list(args.posonlyargs) + list(args.args)
        pairs = list(zip([a.id for a in ordinary[len(ordinary) - len(args.defaults):]],
                         args.defaults, strict=True))
        pairs += [(a.id, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                  if d is not None]
        out = []
        for param, expr in pairs:
            value = self.atom(expr)
            if isinstance(value, gast.Name):  # fixed now, whatever the variable holds later
                value = self.temp(value, f"{fdef.name}_{param}", expr)
            out.append((param, value))
        return tuple(out)


def _value_uses(body: list[gast.stmt], name: str) -> bool:
    calls = {id(n.func) for s in body for n in gast.walk(s) if isinstance(n, gast.Call)}
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               and id(n) not in calls for s in body for n in gast.walk(s))


def _call(name: str, *args: gast.expr) -> gast.Call:
    """A call of the builtin ``name`` (never a user variable of that name)."""
    node = call_node(load(name), list(args))
    set_callee(node, getattr(builtins, name))
    return node


def _rename(node: gast.expr, old: str, new: str) -> gast.expr:
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == old:
            n.id = new
    return node


def rename_reserved(parsed: ParsedFunction, sources: dict[str, str] | None = None
                    ) -> ParsedFunction:
    """``parsed`` with every variable it binds that generated code reserves
    (``np``, ``rt``, ``len``, ...; see :data:`RESERVED`) renamed apart, so the
    generated module's own names can never be captured by the user's; ``sources``
    receives ``{new name: user's name}``."""
    node = parsed.node
    bound = {n.id for n in gast.walk(node)
             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Param)}
    clash = sorted(bound & RESERVED)
    if not clash:
        return parsed
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    namer = Namer(taken | set(parsed.namespace) | RESERVED)
    mapping = {name: namer.fresh(f"{name}_") for name in clash}
    if sources is not None:
        sources.update({new: old for old, new in mapping.items()})
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in mapping:
            n.id = mapping[n.id]
    return dataclasses.replace(parsed, node=node,
                               params=[mapping.get(p, p) for p in parsed.params],
                               defaults={mapping.get(k, k): v for k, v in parsed.defaults.items()})


def normalize(parsed: ParsedFunction) -> NormalFunction:
    """Desugar control flow and flatten ``parsed`` into A-normal form.

    >>> import math
    >>> from s2s_ad.compiler.parse import parse_function
    >>> def f(x, y):
    ...     return math.sin(x) * y
    >>> print(gast.unparse(normalize(parse_function(f)).node).strip())
    def f(x, y):
        sin_x = math.sin(x)
        result = sin_x * y
        return result
    """
    renamed: dict[str, str] = {}
    parsed = rename_reserved(parsed, renamed)
    norm = _Normalizer(parsed)
    norm.namer.sources.update(renamed)
    fdef = parsed.node
    work = function_node(fdef.name, fdef.args, list(fdef.body))
    copy_annos(fdef, work)
    work.body = copy.deepcopy(fdef.body)
    return_flag = desugar_control(work, norm.namer)
    copies = localize(work.body, parsed.params, norm.namer)  # argument arrays written
    norm.locals |= assigned_names(work.body) | set(copies.values())
    body = norm.block(work.body)
    norm.check_list_uses(body)
    body = copy_in_and_back(body, copies, fdef.lineno)
    result = function_node(fdef.name, fdef.args, body)
    copy_annos(fdef, result)
    return NormalFunction(parsed=parsed, node=result, namer=norm.namer,
                          locals=norm.locals | set(parsed.params), externals=norm.externals,
                          hidden=norm.hidden, temps=norm.temps,
                          written_params=list(copies), copies=copies, return_flag=return_flag)
