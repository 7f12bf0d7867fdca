"""Differentiable structures at the boundary: leaves in, structures out.

A dataclass instance, a dict with string keys or a named tuple is a
*structure*.  Generated code sees it as the tuple of its dynamic fields
(:func:`leaves`); results and gradients come back as the same class
(:func:`rebuild`).  Static fields (functions, strings) are part of the
structure's kind and are copied, and so are the fields marked
:func:`no_derivative` in a gradient.

>>> from dataclasses import dataclass
>>> @dataclass
... class Point:
...     x: float
...     y: float
>>> leaves(Point(3.0, 4.0))
(3.0, 4.0)
>>> zero_tangent(Point(3.0, 4.0))
Point(x=0.0, y=0.0)
>>> move(Point(3.0, 4.0), by=Point(1.0, 1.0), scale=0.5)
Point(x=3.5, y=4.5)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .kinds import NO_DERIVATIVE, StructKind, is_dynamic, is_structure, kind_of_value


def no_derivative(**field_options: Any) -> Any:
    """A dataclass field carried by a structure but never differentiated (Swift's
    ``@noDerivative``); takes the options of :func:`dataclasses.field`.

    Numbers and arrays in such a field are passed at run time and cut from the
    derivative; other values (a function, a string) are fixed in the generated
    code, which is made again for another value.  A gradient copies the field.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Scaled:
    ...     w: float
    ...     name: str = no_derivative(default="layer")
    >>> Scaled(2.0)
    Scaled(w=2.0, name='layer')
    """
    metadata = dict(field_options.pop("metadata", None) or {})
    metadata[NO_DERIVATIVE] = True
    return dataclasses.field(metadata=metadata, **field_options)


def leaves(value: Any) -> Any:
    """``value`` as generated code takes it: structures as tuples of their dynamic
    fields, tuples item by item, anything else as it is."""
    if is_structure(value):
        if isinstance(value, dict):
            items = value.values()
        elif isinstance(value, tuple):
            items = value
        else:
            items = [getattr(value, f.name) for f in dataclasses.fields(value)]
        return tuple(leaves(v) for v in items if is_dynamic(v))
    if type(value) is tuple:
        return tuple(leaves(v) for v in value)
    return value


def without_cut(kind: Any, flat: Any) -> Any:
    """The leaves ``flat`` of a value of ``kind`` with zeros in the fields marked
    ``no_derivative``: a cotangent carries nothing through them.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Scaled:
    ...     w: float
    ...     t: float = no_derivative(default=2.0)
    >>> without_cut(kind_of_value(Scaled(1.0)), (5.0, 7.0))
    (5.0, 0.0)
    """
    if isinstance(kind, StructKind):
        return tuple(_zeros(v) if name in kind.cut else without_cut(k, v)
                     for name, k, v in zip(kind.fields, kind, flat, strict=True))
    if isinstance(kind, tuple):
        return tuple(without_cut(k, v) for k, v in zip(kind, flat, strict=True))
    return flat


def _zeros(flat: Any) -> Any:
    if isinstance(flat, tuple):
        return tuple(_zeros(v) for v in flat)
    if isinstance(flat, np.ndarray):
        return np.zeros_like(flat)
    return type(flat)(0)


def has_structure(value: Any) -> bool:
    """Whether ``value`` is or holds a structure (and so must go through :func:`leaves`)."""
    if type(value) is tuple:
        return any(has_structure(v) for v in value)
    return is_structure(value)


def rebuild(kind: Any, flat: Any, like: Any = None, cast: Any = None) -> Any:
    """The value of kind ``kind`` from its leaves ``flat`` (the inverse of :func:`leaves`).

    With ``like`` (a structure of that kind), fields marked ``no_derivative`` are
    copied from it, and ``cast(leaf, like_leaf)`` converts each other leaf.
    """
    if isinstance(kind, StructKind):
        values = {n: v for n, v in kind.statics}
        originals = _field_values(like) if like is not None else {}
        for name, k, leaf in zip(kind.fields, kind, flat, strict=True):
            if name in kind.cut and like is not None:
                values[name] = originals[name]
            else:
                values[name] = rebuild(k, leaf, originals.get(name), cast)
        return _construct(kind.cls, [values[n] for n in kind.order()], kind.order())
    if isinstance(kind, tuple):
        likes = like if like is not None else [None] * len(kind)
        return tuple(rebuild(k, v, lk, cast) for k, v, lk in zip(kind, flat, likes, strict=True))
    if cast is not None and like is not None:
        return cast(flat, like)
    return flat


def _field_values(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, tuple):
        return dict(zip(type(value)._fields, value, strict=True))
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _construct(cls: Any, values: list, names: list[str]) -> Any:
    if cls is dict:
        return dict(zip(names, values, strict=True))
    if issubclass(cls, tuple):
        return cls(*values)
    obj = object.__new__(cls)  # no __init__ or __post_init__: a tangent is not validated
    for name, v in zip(names, values, strict=True):
        object.__setattr__(obj, name, v)
    return obj


def in_order_of(value: Any, other: Any) -> Any:
    """``other`` (a tangent or cotangent of ``value``) with the keys of each dict in
    it in the order of ``value``'s, so leaves are matched by key, not by position;
    anything not shaped like ``value`` is returned as it is (for the caller to refuse).

    >>> in_order_of({"w": 1.0, "b": 2.0}, {"b": 0.5, "w": 0.25})
    {'w': 0.25, 'b': 0.5}
    """
    if type(value) is dict and type(other) is dict:
        if value.keys() != other.keys():
            return other
        return {k: in_order_of(value[k], other[k]) for k in value}
    if isinstance(value, tuple) and type(other) is type(value) and len(other) == len(value):
        items = [in_order_of(v, o) for v, o in zip(value, other, strict=True)]
        return type(other)(*items) if hasattr(type(other), "_fields") else tuple(items)
    if dataclasses.is_dataclass(value) and type(other) is type(value):
        names = [f.name for f in dataclasses.fields(value)]
        return _construct(type(other), [in_order_of(getattr(value, n), getattr(other, n))
                                        for n in names], names)
    return other


def map_leaves(fn: Any, value: Any, *others: Any) -> Any:
    """``value`` with each float leaf ``v`` replaced by ``fn(v, *leaves of others)``
    (``others`` shaped like ``value``); ints, static fields and fields marked
    ``no_derivative`` are kept from ``value``.  Optimisers use it for their state.

    >>> map_leaves(lambda w, g: w - 0.5 * g, {"w": 1.0, "n": 3}, {"w": 4.0, "n": 0})
    {'w': -1.0, 'n': 3}
    """
    kind = kind_of_value(value)
    flat = leaves(value)
    other_flats = [leaves(in_order_of(value, o)) for o in others]
    return rebuild(kind, _apply(kind, fn, flat, *other_flats), like=value)


def _apply(kind: Any, fn: Any, flat: Any, *others: Any) -> Any:
    if isinstance(kind, tuple):
        return tuple(_apply(k, fn, v, *(o[i] for o in others))
                     for i, (k, v) in enumerate(zip(kind, flat, strict=True)))
    if isinstance(flat, np.ndarray) and flat.dtype.kind == "f" or \
            isinstance(flat, float | np.floating):
        return fn(flat, *others)
    return flat  # ints and bools: no tangent


def zero_tangent(value: Any) -> Any:
    """A zero tangent shaped like ``value`` (zeros in each float leaf).

    >>> zero_tangent({"w": np.ones(2), "n": 3})
    {'w': array([0., 0.]), 'n': 3}
    """
    return map_leaves(lambda v: v * 0 if isinstance(v, np.ndarray) else type(v)(0.0), value)


def move(value: Any, by: Any, scale: float = 1.0) -> Any:
    """``value`` moved along the tangent ``by`` times ``scale`` (fields marked
    ``no_derivative``, ints and static fields unchanged).

    >>> move({"w": 1.0}, by={"w": 2.0}, scale=-0.5)
    {'w': 0.0}
    """
    if _leaf_shapes(value) != _leaf_shapes(by):
        raise ValueError(f"move: the tangent {by!r} is not shaped like {value!r}")
    return map_leaves(lambda v, t: v + scale * t if isinstance(v, np.ndarray)
                       else type(v)(v + scale * t), value, by)


def _leaf_shapes(value: Any) -> Any:
    flat = leaves(value)
    return _shapes(flat)


def _shapes(flat: Any) -> Any:
    if isinstance(flat, tuple):
        return tuple(_shapes(v) for v in flat)
    return np.shape(flat)
