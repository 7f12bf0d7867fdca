"""Walking the float leaves of differentiable structures (dataclasses, dicts,
tuples, named tuples, lists), for optimiser arithmetic.

>>> from dataclasses import dataclass
>>> @dataclass
... class P:
...     w: float
...     n: int
>>> map_leaves(lambda v: 2.0 * v, P(1.5, 3)), has_parameters(P(1.5, 3))
(P(w=3.0, n=3), True)
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np


def _is_leaf(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    return isinstance(value, float | np.floating)


def map_leaves(fn: Callable, tree: Any, *others: Any) -> Any:
    """``tree`` with each float leaf ``v`` replaced by ``fn(v, *leaves of others)``;
    ``others`` are shaped like ``tree``.  Other values (ints, strings, functions)
    are kept from ``tree``.

    >>> map_leaves(lambda a, b: a * b, {"w": 2.0, "n": 3}, {"w": 4.0, "n": 3})
    {'w': 8.0, 'n': 3}
    """
    if _is_leaf(tree):
        return fn(tree, *others)
    if isinstance(tree, dict):
        return {k: map_leaves(fn, v, *(o[k] for o in others)) for k, v in tree.items()}
    if isinstance(tree, tuple | list):
        items = [map_leaves(fn, v, *(o[i] for o in others)) for i, v in enumerate(tree)]
        if hasattr(tree, "_fields"):
            return type(tree)(*items)
        return type(tree)(items)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        out = copy.copy(tree)
        for f in dataclasses.fields(tree):
            value = map_leaves(fn, getattr(tree, f.name), *(getattr(o, f.name) for o in others))
            object.__setattr__(out, f.name, value)  # frozen dataclasses too
        return out
    return tree


def has_parameters(tree: Any) -> bool:
    """Whether ``tree`` holds a float leaf (a layer with no parameters holds none).

    >>> has_parameters({"size": 3}), has_parameters({"w": np.ones(2)})
    (False, True)
    """
    found = []
    map_leaves(found.append, tree)
    return bool(found)
