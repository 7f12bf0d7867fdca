"""Derivative rules of NumPy constructors whose entries are their float arguments
(``np.arange`` with a start, ``np.full``, ``np.linspace``), as a table (notation as
in math_rules).
"""

from __future__ import annotations

import numpy as np

from ..kinds import ArrayKind
from .numpy_rules import constructed
from .registry import primitive


def _range_kind(kinds: list, operands: list):
    """``np.arange(start, stop[, step])``: float entries when any argument is a float."""
    return ArrayKind(1, any(k not in ("int", "bool") for k in kinds))


# z[i] = start + i * step; the length (not the entries) depends on stop: piecewise constant
primitive(np.arange, ("start", "stop"), {"start": "np.sum(g)"}, kind=_range_kind, nargs=2)
primitive(np.arange, ("start", "stop", "step"),
          {"start": "np.sum(g)", "step": "np.sum(g * np.arange(g.shape[0]))"}, kind=_range_kind,
          nargs=3)


# ---- constructors whose entries are their float arguments ---------------------------------
def _filled(kinds: list, operands: list):
    """``np.full(shape, value)``: an array of ``value``'s element type (NumPy's)."""
    built = constructed(kinds, operands)
    value = kinds[1]
    floating = value.floating if isinstance(value, ArrayKind) else value not in ("int", "bool")
    return ArrayKind(built.ndim, floating)


# every entry is ``value`` (broadcast): its cotangent is g summed back to value's shape
primitive(np.full, ("shape", "value"), {"value": "g"}, kind=_filled, elementwise=True,
          variant=lambda c, k: {"forward": "rt.filled(shape, value)"}
          if isinstance(k["value"], ArrayKind) else {}, nargs=2)


def _linspace_variant(consts: dict, kinds: dict) -> dict:
    """``z[i] = start + (stop - start) * t[i]`` with ``t = linspace(0, 1, num)``."""
    if any(isinstance(kinds.get(p), ArrayKind) for p in ("start", "stop")):
        raise ValueError("np.linspace: start and stop must be numbers here (not arrays)")
    return {}


for _nargs in (2, 3):
    primitive(np.linspace, ("start", "stop", "num"),
              {"start": "np.sum(g * (1.0 - np.linspace(0.0, 1.0, num)))",
               "stop": "np.sum(g * np.linspace(0.0, 1.0, num))"},
              kind=lambda k, o: ArrayKind(1), defaults={"num": 50}, variant=_linspace_variant,
              nargs=_nargs)
