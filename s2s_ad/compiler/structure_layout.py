"""What an operation on a structure is, once kinds are known: the kind of a field,
the function a method call runs, whether a call builds a structure and the layout
of what it builds.  The structures stage (:mod:`s2s_ad.compiler.structure_access`)
and the kinds stage read it.

>>> import dataclasses
>>> @dataclasses.dataclass
... class Point:
...     x: float
...     y: float
>>> builds_structure(Point), builds_structure(abs)
(True, False)
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable
from typing import Any

from s2s_ad.kinds import NO_DERIVATIVE, Kind, StaticKind, StructKind, is_dynamic, kind_of_value


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
        return kind_of_value(value) if is_constant(value) else StaticKind(value)
    prop = inspect.getattr_static(base.cls, name, None)
    if isinstance(prop, property):
        return None  # the kinds of calls: see called_function
    return None


def is_constant(value: Any) -> bool:
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
