"""Rules of NumPy's constructors, as a table (notation as in math_rules): those
of shapes only (``np.zeros``, ``np.eye``..., not differentiable) and those whose
entries are their float arguments (``np.arange`` with a start, ``np.full``,
``np.linspace``).
"""

from __future__ import annotations

import gast
import numpy as np

from ..kinds import ArrayKind
from .registry import primitive
from .result_kinds import like


# ---- constructors of a shape (not differentiable) ----------------------------------------
def constructed(kinds: list, operands: list):
    """An array of the shape given by the first argument."""
    shape = kinds[0]
    if isinstance(shape, tuple):
        return ArrayKind(len(shape))
    return ArrayKind(1) if shape in ("int", "bool") else ArrayKind(None)


def _of_dtype(built: ArrayKind, operands: list, param: int) -> ArrayKind:
    """``built`` with the element type of a constant ``dtype=`` (the normalizer spells
    ``np.float32``, ``float``... as NumPy's name of the dtype, ``'float32'``)."""
    dtype = operands[param] if len(operands) > param else None
    if isinstance(dtype, gast.Constant) and isinstance(dtype.value, str):
        kind = np.dtype(dtype.value).kind
        return ArrayKind(built.ndim, kind == "f", kind == "b")
    return built


for _fn in (np.zeros, np.ones, np.empty):
    primitive(_fn, ("shape", "dtype"), kind=lambda k, o: _of_dtype(constructed(k, o), o, 1),
              defaults={"dtype": None}, nargs=1)
for _fn in (np.zeros_like, np.ones_like, np.empty_like):
    primitive(_fn, ("x",), kind=like, nargs=1)
primitive(np.arange, ("n",), kind=lambda k, o: ArrayKind(1, False), nargs=1)

primitive(np.eye, ("n",), kind=lambda k, o: ArrayKind(2), nargs=1)
primitive(np.identity, ("n",), kind=lambda k, o: ArrayKind(2), nargs=1)


# ---- constructors whose entries are their float arguments ---------------------------------
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
primitive(np.full, ("shape", "value", "dtype"), {"value": "g"},
          kind=lambda k, o: _of_dtype(_filled(k, o), o, 2), defaults={"dtype": None},
          elementwise=True,
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
