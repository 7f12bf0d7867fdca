"""Constructs generated gradient code has, which forward mode reads again (second
derivatives, :mod:`s2s_ad.higher_order`), normalized as the code they stand for:

- ``len(range(a, b, c))``, a loop's trip count: ``rt.range_length(a, b, c)``;
- ``np.empty(n, np.float64)``, a dtype as the second positional argument: ``dtype=``;
- ``rt.add_in_place(d_x[1:4], c)``: ``d_x[1:4] += c``.

Users' code may write the first two as well; it gets the same reading.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.syntax.builders import attribute, call_node, const, load

#: Constructors whose second positional argument is the dtype: ``np.empty(n, np.bool_)``.
DTYPE_SECOND = (np.empty, np.zeros, np.ones)


def range_call(normal: Any, node: gast.Call) -> bool:
    """Whether ``node`` is ``len(range(...))`` (a trip count, as gradient code has)."""
    if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], gast.Call):
        return False
    try:
        return normal.resolve(node.args[0].func) is range
    except KeyError:
        return False


def trip_count(node: gast.Call) -> gast.Call:
    """``len(range(a, b, c))`` -> ``rt.range_length(a, b, c)`` (start 0 and step 1 filled)."""
    bounds = list(node.args[0].args)
    if len(bounds) == 1:
        bounds = [const(0), bounds[0]]
    if len(bounds) == 2:
        bounds.append(const(1))
    return gast.copy_location(call_node(attribute(load("rt"), "range_length"), bounds), node)


def adds_into_slice(normal: Any, node: gast.expr) -> bool:
    """``rt.add_in_place(d_x[1:4], c)`` of generated gradient code, read as the
    ``d_x[1:4] += c`` it is."""
    if not (isinstance(node, gast.Call) and len(node.args) == 2 and
            isinstance(node.args[0], gast.Subscript) and
            isinstance(node.args[0].value, gast.Name)):
        return False
    try:
        return normal.resolve(node.func) is runtime.add_in_place
    except KeyError:
        return False
