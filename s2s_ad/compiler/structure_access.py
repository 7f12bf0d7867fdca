"""The structures stage: field reads, constructions and method calls become tuple
operations and direct calls; every later stage sees tuples.

The normalizer cannot know which values are structures (it runs before kinds),
so it writes what it sees: ``t = p.x`` (an attribute read), ``call_method(p,
"norm", a)`` for ``p.norm(a)`` and ``call_value(f, a)`` for ``f(a)`` of a local
``f``.  Once kinds are known, :func:`lower_structures` rewrites them:

* ``t = p.x`` -> ``t = p[0]`` (``without_derivative`` of it for a field marked
  ``ad.no_derivative``; the value itself for a static field);
* ``p.norm(a)`` -> ``Point.norm(p, a)``, a call differentiated through its source,
  and ``layer(x)`` -> ``Dense.__call__(layer, x)``;
* ``Point(a, b)``, ``dict(w=a)`` and ``dataclasses.replace(p, x=a)`` -> tuple
  displays that remember their structure (the ``structure`` annotation).

>>> import dataclasses, s2s_ad as ad
>>> @dataclasses.dataclass
... class Point:
...     x: float
...     y: float
>>> norm2 = lambda p: p.x * p.y
>>> for stage in ("anf", "structures"):  # before and after
...     print(ad.source(norm2, Point(3.0, 4.0), stage=stage))
def lambda_(p):
    # line 1: norm2 = lambda p: p.x * p.y
    p_x = p.x
    p_y = p.y
    result = p_x * p_y
    return result
def lambda_(p):
    # line 1: norm2 = lambda p: p.x * p.y
    p_x = p[0]
    p_y = p[1]
    result = p_x * p_y
    return result
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from s2s_ad.compiler.syntax.annotations import (
    attribute_of,
    callee_of,
    copy_annos,
    method_of,
    set_callee,
    set_structure,
)
from s2s_ad.compiler.syntax.builders import const, load, store
from s2s_ad.errors import Location, NonDifferentiableError
from s2s_ad.kinds import NO_DERIVATIVE, Kind, StaticKind, StructKind, is_dynamic, kind_of_value
from s2s_ad.markers import with_derivative, without_derivative


def call_method(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """What ``obj.name(*args)`` becomes in normalized code when ``obj`` is local."""
    return getattr(obj, name)(*args, **kwargs)


def call_value(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``fn(*args)`` becomes in normalized code when ``fn`` is a local value."""
    return fn(*args, **kwargs)


MARKERS = (call_method, call_value)


# -- what an operation on a structure is ---------------------------------------------
def field_kind(base: Kind | None, name: str) -> Kind | None:
    """The kind of ``base.name`` (or ``base["name"]``) when ``base`` is a structure."""
    if not isinstance(base, StructKind):
        return None
    if name in base.fields:
        return base[base.fields.index(name)]
    statics = dict(base.statics)
    if name in statics:
        value = statics[name]
        return kind_of_value(value) if _is_constant(value) else StaticKind(value)
    prop = inspect.getattr_static(base.cls, name, None)
    if isinstance(prop, property):
        return None  # the kinds of calls: see called_function
    return None


def _is_constant(value: Any) -> bool:
    return isinstance(value, bool | int | float | str | type(None))


def called_function(base: Kind | None, name: str | None) -> Callable | None:
    """The function ``base.name(...)`` (``name`` None: ``base(...)``) calls, with
    ``base`` as its first argument; None when that is not a structure's method."""
    if isinstance(base, StaticKind) and name is None:
        return base.value
    if not isinstance(base, StructKind) or base.cls is dict:
        return None
    attr = inspect.getattr_static(base.cls, name or "__call__", None)
    if isinstance(attr, property) and name is not None:
        return attr.fget
    if isinstance(attr, types.FunctionType):
        return attr
    return None


def builds_structure(callee: Any) -> bool:
    """Whether a call of ``callee`` builds a structure."""
    return callee is dict or callee is dataclasses.replace or (
        isinstance(callee, type) and (dataclasses.is_dataclass(callee) or (
            issubclass(callee, tuple) and hasattr(callee, "_fields"))))


def constructed(callee: Any, kinds: list, keywords: list[str]) -> StructKind | None:
    """The kind of ``callee(*args, **keywords)`` when it builds a structure (a dataclass,
    a named tuple, ``dict(...)``, ``dataclasses.replace``): None otherwise.  ``kinds``
    are the kinds of the positional then the keyword arguments."""
    layout = construction_layout(callee, kinds, keywords)
    if layout is None:
        return None
    template, sources = layout
    return template.with_items(_source_kind(s, kinds) for s in sources)


def _source_kind(source: Any, kinds: list) -> Kind | None:
    if isinstance(source, int):
        return kinds[source]
    return kind_of_value(source[1]) if source[0] == "constant" else source[1]


def construction_layout(callee: Any, kinds: list, keywords: list[str]
                        ) -> tuple[StructKind, list] | None:
    """For a call building a structure: its kind (items to be filled) and, per dynamic
    field, where the value comes from: an argument position, ``("field", kind, i)``,
    item ``i`` of the structure given to ``dataclasses.replace``, or ``("constant",
    value)``, a number the field defaults to."""
    if None in kinds:
        return None
    if callee is dataclasses.replace:
        base = kinds[0] if kinds else None
        if not isinstance(base, StructKind) or base.cls is dict:
            return None
        given = dict(zip(keywords, range(1, len(kinds)), strict=True))
        sources = [given.get(f, ("field", k, i)) for i, (f, k) in
                   enumerate(zip(base.fields, base, strict=True))]
        statics = dict(base.statics)
        for name in keywords:
            if name in statics and isinstance(kinds[given[name]], StaticKind):
                statics[name] = kinds[given[name]].value  # another function, string
            elif name not in base.fields:
                raise ValueError(f"replace(): '{name}' is not a field passed at run time "
                                 f"of {base.cls.__name__}")
        template = StructKind((), base.cls, base.fields, tuple(statics.items()), base.cut,
                              base.names)
        return template, sources
    if callee is dict and not len(kinds) - len(keywords):
        names = list(keywords)
        dyn = [n for n, k in zip(names, kinds, strict=True) if not isinstance(k, StaticKind)]
        if len(dyn) != len(names):
            return None
        return StructKind((), dict, names), list(range(len(names)))
    if not isinstance(callee, type):
        return None
    if dataclasses.is_dataclass(callee):
        params = [f for f in dataclasses.fields(callee) if f.init]
    elif issubclass(callee, tuple) and hasattr(callee, "_fields"):
        params = [_Field(n) for n in callee._fields]
    else:
        return None
    return _layout(callee, params, kinds, keywords)


class _Field:
    """A named tuple's field, shaped like a dataclass field."""

    metadata: dict = {}

    def __init__(self, name: str):
        self.name = name


def _layout(cls: type, params: list, kinds: list, keywords: list[str]):
    positional = len(kinds) - len(keywords)
    given: dict[str, int] = {p.name: i for i, p in enumerate(params[:positional])}
    given.update({k: positional + j for j, k in enumerate(keywords)})
    fields, sources, statics, cut = [], [], [], []
    names = [p.name for p in params]
    for p in params:
        if p.name in given:
            k = kinds[given[p.name]]
            if isinstance(k, StaticKind):
                statics.append((p.name, k.value))
                continue
            fields.append(p.name)
            sources.append(given[p.name])
        else:
            default = _default(cls, p)
            if not is_dynamic(default):
                statics.append((p.name, default))
                continue
            if not isinstance(default, bool | int | float):
                raise ValueError(f"{cls.__name__}(): pass '{p.name}' (a default that is an "
                                 "array or a structure is not supported here)")
            fields.append(p.name)
            sources.append(("constant", default))
        if p.metadata.get(NO_DERIVATIVE):
            cut.append(p.name)
    return StructKind((), cls, fields, statics, cut, names), sources


def _default(cls: type, p: Any) -> Any:
    if isinstance(p, _Field):
        defaults = getattr(cls, "_field_defaults", {})
        if p.name in defaults:
            return defaults[p.name]
    elif p.default is not dataclasses.MISSING:
        return p.default
    elif p.default_factory is not dataclasses.MISSING:
        return p.default_factory()
    raise ValueError(f"{cls.__name__}(): missing argument '{p.name}'")


# -- the rewrite -------------------------------------------------------------------------
class _Lowering:
    def __init__(self, kinds: dict[str, Kind], namer: Any, statics: dict[str, Any],
                 locate: Callable[[gast.AST], Location], final: bool):
        self.kinds, self.namer, self.statics = kinds, namer, statics
        self.locate, self.final = locate, final
        self.fresh: set[str] = set()
        self.changed = False

    def error(self, node: gast.AST, problem: str, hint: str = "") -> NonDifferentiableError:
        return NonDifferentiableError(problem, self.locate(node), hint)

    def kind(self, atom: gast.expr) -> Kind | None:
        if isinstance(atom, gast.Name):
            return self.kinds.get(atom.id)
        if isinstance(atom, gast.Constant):
            return kind_of_value(atom.value)
        return None

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            for name in ("body", "orelse"):
                if isinstance(getattr(s, name, None), list):
                    setattr(s, name, self.block(getattr(s, name)))
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                out += self.assignment(s, s.targets[0].id, s.value)
            elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript) \
                    and isinstance(self.kind(s.targets[0].value), StructKind):
                raise self.error(s, "writing a key or item of a structure is not supported",
                                 "build a new one: {'w': ..., 'b': d['b']}, or "
                                 "dataclasses.replace(p, w=...)")
            elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                *before, new = self.call(s, s.value)
                out += [copy_annos(s, st) for st in before]
                out.append(s if new is s.value else copy_annos(s, gast.Expr(value=new)))
            else:
                out.append(s)
        return out

    def assignment(self, s: gast.Assign, target: str, value: gast.expr) -> list[gast.stmt]:
        if isinstance(value, gast.Attribute):
            return self.field_read(s, target, value)
        if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant) \
                and isinstance(value.slice.value, str):
            return self.field_read(s, target, value, value.slice.value)
        if isinstance(value, gast.Call) and attribute_of(value) is not None and \
                isinstance(self.kind(value.args[0]), StructKind):  # p.T, p.size: its fields
            read = gast.Attribute(value=value.args[0], attr=attribute_of(value),
                                  ctx=gast.Load())
            return self.field_read(s, target, gast.copy_location(read, value))
        if isinstance(value, gast.Call):
            *before, new = self.call(s, value)
            return [copy_annos(s, b) for b in before] + [self.rebind(s, new)]
        return [s]

    def rebind(self, s: gast.Assign, value: gast.expr) -> gast.Assign:
        if value is s.value:
            return s
        self.changed = True
        return copy_annos(s, gast.Assign(targets=s.targets, value=value, type_comment=None))

    def field_read(self, s: gast.Assign, target: str, node: gast.expr,
                   name: str | None = None) -> list[gast.stmt]:
        base = node.value
        name = name if name is not None else node.attr
        kind = self.kind(base)
        if kind in (None, "unknown") and not self.final:
            return [s]  # not known yet (or not yet lowered, a method's result): a later round
        if not isinstance(kind, StructKind):
            what = "key" if isinstance(node, gast.Subscript) else "attribute"
            raise self.error(node, f"reading the {what} '{name}' of a value is not supported "
                             f"(it is a {_kind_text(kind)}, not a structure)",
                             "pass a dataclass, dict or named tuple, or read it into a variable "
                             "outside the function")
        if name in kind.fields:
            item = gast.Subscript(value=load(base.id), slice=const(kind.fields.index(name)),
                                  ctx=gast.Load())
            if name not in kind.cut:
                return [self.rebind(s, item)]
            raw = self.namer.fresh(f"{target}_carried")
            self.fresh.add(raw)
            cut = gast.Call(func=load("without_derivative"), args=[load(raw)], keywords=[])
            set_callee(cut, without_derivative)
            first = copy_annos(s, gast.Assign(targets=[store(raw)], value=item, type_comment=None))
            return [first, self.rebind(s, cut)]
        statics = dict(kind.statics)
        if name in statics:
            value = statics[name]
            if _is_constant(value):
                return [self.rebind(s, const(value))]
            if not callable(value):
                raise self.error(node, f"the field '{name}' of {kind.cls.__name__} holds a "
                                 f"{type(value).__name__}, which differentiated code cannot "
                                 "read", "hold numbers and arrays in tuples, dataclasses or "
                                 "dicts with string keys")
            self.statics[target] = value
            self.changed = True
            return []
        fget = called_function(kind, name)
        if fget is not None:
            return [self.rebind(s, self._direct(fget, [base], [], s))]
        raise self.error(node, f"{kind.cls.__name__} has no field '{name}'"
                         + (" passed at run time" if hasattr(kind.cls, name) else ""),
                         "read a field of the structure, or call its method")

    def call(self, s: gast.stmt, value: gast.Call) -> list:
        callee = callee_of(value)
        args = list(value.args)
        if method_of(value) is not None and args and \
                isinstance(self.kind(args[0]), StructKind):  # p.copy(), p.sum(): its methods
            callee = call_method
            args = [args[0], const(method_of(value)), *args[1:]]
        for a in args:
            if isinstance(a, gast.Name) and a.id in self.statics and callee not in MARKERS:
                if not (callee is dataclasses.replace or isinstance(callee, type)
                        or callee is dict or (callee is with_derivative and a is args[-1])):
                    raise self.error(value, f"the function held in '{a.id}' can only be called "
                                     "here, not passed on", "call it where it is read")
        if callee in MARKERS and self._arg_kind(args[0]) in (None, "unknown") and \
                not self.final:
            return [value]  # not known yet: a later round
        if callee is call_method:
            base, name = args[0], args[1].value
            kind = self.kind(base)
            if isinstance(kind, StructKind) and name in dict(kind.statics):
                return [self._direct(kind.static(name), args[2:], value.keywords, value)]
            if isinstance(kind, StructKind) and name in kind.fields:
                return self._field_call(s, base, name, args[2:], value)
            fn = called_function(kind, name)
            if fn is None:
                raise self._not_a_method(value, name, kind)
            return [self._direct(fn, [base, *args[2:]], value.keywords, value)]
        if callee is call_value:
            fn = self._value_callee(args[0], value)
            extra = [] if isinstance(self.kind(args[0]), StaticKind) or \
                (isinstance(args[0], gast.Name) and args[0].id in self.statics) else [args[0]]
            return [self._direct(fn, extra + args[1:], value.keywords, value)]
        return self.construction(s, value, callee)

    def _not_a_method(self, node: gast.AST, name: str, kind: Kind | None
                      ) -> NonDifferentiableError:
        hint = (f"call the NumPy function instead (np.{name}(x, ...))"
                if callable(getattr(np, name, None)) else
                "compute the value outside the function and pass it in as an argument")
        return self.error(node, f"the method '{name}' is not supported on a "
                          f"{_kind_text(kind)} (only methods of arrays and of structures)", hint)

    def _field_call(self, s: gast.stmt, base: gast.Name, name: str, args: list,
                    value: gast.Call) -> list:
        """``p.layer(x)`` for a structure in the field ``layer``: read it, then call it."""
        kind = self.kind(base)
        item_kind = kind[kind.fields.index(name)]
        fn = called_function(item_kind, None)
        if fn is None:
            raise self.error(value, f"the field '{name}' of {kind.cls.__name__} holds a "
                             f"{_kind_text(item_kind)}, which cannot be called")
        field = self.namer.fresh(f"{base.id}_{name}")
        self.fresh.add(field)
        item = gast.Subscript(value=load(base.id), slice=const(kind.fields.index(name)),
                              ctx=gast.Load())
        read = gast.Assign(targets=[store(field)], value=item, type_comment=None)
        return [read, self._direct(fn, [load(field), *args], value.keywords, value)]

    def _value_callee(self, atom: gast.expr, where: gast.AST) -> Callable:
        if isinstance(atom, gast.Name) and atom.id in self.statics:
            return self.statics[atom.id]
        fn = called_function(self.kind(atom), None)
        if fn is None:
            raise self.error(where, "calling a local variable is not supported here (it holds "
                             f"a {_kind_text(self.kind(atom))})",
                             "call a module-level function, a method, or a structure")
        return fn

    def _direct(self, fn: Callable, args: list, keywords: list, where: gast.AST) -> gast.Call:
        """``fn(*args, **keywords)`` with keywords and defaults bound to positions (for
        a Python function; a library function's call keeps its keywords)."""
        if not isinstance(fn, types.FunctionType):
            new = gast.Call(func=load(getattr(fn, "__name__", "function")), args=args,
                            keywords=keywords)
            set_callee(new, fn)
            self.changed = True
            return gast.copy_location(new, where)
        params = list(inspect.signature(fn).parameters.values())
        given = dict(zip((p.name for p in params), args, strict=False))
        for kw in keywords:
            given[kw.arg] = kw.value
        bound = []
        for p in params:
            if p.name in given:
                bound.append(given[p.name])
            elif p.default is not inspect.Parameter.empty:
                bound.append(const(p.default))
            else:
                raise self.error(where, f"missing argument '{p.name}' in the call of "
                                 f"{fn.__qualname__}")
        qual = fn.__qualname__.split(".")
        func = gast.Attribute(value=load(qual[-2]), attr=qual[-1], ctx=gast.Load()) \
            if len(qual) > 1 else load(qual[-1])
        new = gast.Call(func=func, args=bound, keywords=[])
        set_callee(new, fn)
        self.changed = True
        return gast.copy_location(new, where)

    def construction(self, s: gast.stmt, value: gast.Call, callee: Any) -> list:
        if not builds_structure(callee):
            return [value]
        keywords = [k.arg for k in value.keywords]
        atoms = list(value.args) + [k.value for k in value.keywords]
        kinds = [self._arg_kind(a) for a in atoms]
        try:
            layout = construction_layout(callee, kinds, keywords)
        except ValueError as exc:
            raise self.error(value, str(exc)) from None
        if layout is None:
            if callee is dict and len(atoms) != len(keywords):
                raise self.error(value, "dict(...) takes keyword arguments only here",
                                 "write dict(w=..., b=...) or {'w': ..., 'b': ...}")
            if callee is dict and self.final:
                raise self.error(value, "a dict built here holds numbers, arrays, tuples and "
                                 "structures only (not functions)")
            return [value]  # a value's kind is not known yet: a later round
        template, sources = layout
        before, items = [], []
        for src in sources:
            if isinstance(src, int):
                items.append(atoms[src])
                continue
            if src[0] == "constant":
                items.append(const(src[1]))
                continue
            name = self.namer.fresh(f"{atoms[0].id}_{template.fields[src[2]]}")
            self.fresh.add(name)
            item = gast.Subscript(value=load(atoms[0].id), slice=const(src[2]), ctx=gast.Load())
            before.append(gast.Assign(targets=[store(name)], value=item, type_comment=None))
            items.append(load(name))
        display = gast.copy_location(gast.Tuple(elts=items, ctx=gast.Load()), value)
        set_structure(display, template)
        self.changed = True
        return before + [display]

    def _arg_kind(self, atom: gast.expr) -> Kind | None:
        if isinstance(atom, gast.Name) and atom.id in self.statics:
            return StaticKind(self.statics[atom.id])
        return argument_kind(self.kind(atom), atom)


def argument_kind(kind: Kind | None, atom: gast.expr) -> Kind | None:
    """The kind of an argument of a structure's construction: a string or ``None``
    constant is static (fixed in the generated code), anything else as it is."""
    if isinstance(atom, gast.Constant) and isinstance(atom.value, str | type(None)):
        return StaticKind(atom.value)
    return kind


def _kind_text(kind: Kind | None) -> str:
    return "value of unknown kind" if kind in (None, "unknown") else f"{kind!r}"


def lower_structures(fdef: gast.FunctionDef, kinds: dict[str, Kind], namer: Any,
                     statics: dict[str, Any], locate: Callable[[gast.AST], Location],
                     final: bool = False) -> tuple[set[str], bool]:
    """Rewrite the structure operations of ``fdef`` whose kinds are known (see the
    module docstring); ``statics`` (kept across rounds) maps the names bound to
    static values, whose assignments are dropped.

    Returns the names it introduced and whether it changed anything: the kinds
    stage infers kinds again and calls it until nothing changes, then once more with
    ``final``, which refuses what is still not a structure operation.
    """
    lowering = _Lowering(kinds, namer, statics, locate, final)
    fdef.body = lowering.block(fdef.body)
    return lowering.fresh, lowering.changed
