"""Derivative rules of NumPy's shape functions, joins, gathers and ``np.array``, as a
table (notation as in math_rules).

Rules marked ``view=True`` may return memory of their first argument (the
reverse pass's aliasing analysis reads it); ``methods`` are the array methods
that spell them (``x.reshape(...)``).

The rearrangements of issue 23 are in ``axes_rules`` and ``rearrange_rules``.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..kinds import NUMERIC, ArrayKind
from .registry import NOT_CONSTANT, primitive
from .result_kinds import ints, same
from .result_kinds import ndim as _ndim


def _reshaped(kinds: list, operands: list):
    shape = kinds[1]
    if isinstance(shape, tuple):
        return ArrayKind(len(shape))
    return ArrayKind(1) if shape == "int" else ArrayKind(None)


def _joined(kinds: list, operands: list):
    parts = kinds[0] if isinstance(kinds[0], tuple) else ()
    ndim = _ndim(parts[0]) if parts else None
    return ArrayKind(ndim)


def _stacked(kinds: list, operands: list):
    parts = kinds[0] if isinstance(kinds[0], tuple) else ()
    ndim = _ndim(parts[0]) if parts else None
    return ArrayKind(None if ndim is None else ndim + 1)


def _shape(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    return ("int",) * ndim if ndim is not None else "unknown"


def constant_axis(name: str, consts: dict):
    """The constant ``axis`` of ``np.<name>`` (an int or None), or a ValueError."""
    axis = consts.get("axis")
    if axis is NOT_CONSTANT or not (axis is None or isinstance(axis, int)) or \
            isinstance(axis, bool):
        raise ValueError(f"np.{name}: axis must be a constant int or None")
    return axis


# ---- shapes ----------------------------------------------------------------------------
primitive(np.reshape, ("x", "shape"), {"x": "rt.reshape_like(g, x)"},
          forward="rt.reshape(x, shape)", kind=_reshaped, methods=("reshape",), view=True)
primitive(np.transpose, ("x",), {"x": "np.transpose(g)"}, kind=same, methods=("transpose",),
          view=True, nargs=1)
primitive(np.copy, ("x",), {"x": "g"}, kind=same, methods=("copy",))
primitive(runtime.write_back, ("dst", "src"), kind="none")
# bounds checks (compiler/bounds_checks.py): no derivative
primitive(runtime.check_index, ("shape", "axis", "index", "location", "function"),
          kind="none")
primitive(runtime.check_index_unless,
          ("known", "shape", "axis", "index", "location", "function"), kind="none")
primitive(runtime.index_in_bounds, ("shape", "axis", "index"), kind="bool")
primitive(runtime.range_in_bounds, ("shape", "axis", "start", "stop", "step", "offset"),
          kind="bool")
primitive(np.ravel, ("x",), {"x": "rt.reshape_like(g, x)"}, forward="rt.reshape(x, (-1,))",
          kind=lambda k, o: ArrayKind(1), methods=("ravel", "flatten"), view=True)


def _pieces(kinds: dict, piece: str) -> str:
    parts = kinds.get("seq")
    if not isinstance(parts, tuple):
        raise ValueError("concatenate and stack need a tuple of arrays")
    return "(" + ", ".join(piece.format(i=i) for i in range(len(parts))) + ",)"


def _concatenate_variant(consts: dict, kinds: dict) -> dict:
    if consts.get("axis") is None:
        raise ValueError("np.concatenate(..., axis=None) is not supported: flatten the "
                         "pieces first, np.concatenate((np.ravel(a), np.ravel(b)))")
    bounds = "rt.slice_axis(g, axis, {start}, {stop})"
    n = len(kinds["seq"])
    sizes = [f"seq[{i}].shape[axis]" for i in range(n)]
    pieces = []
    for i in range(n):
        start = " + ".join(sizes[:i]) or "0"
        stop = " + ".join(sizes[:i + 1])
        pieces.append(bounds.format(start=start, stop=stop))
    return {"adjoints": {"seq": "(" + ", ".join(pieces) + ",)"}}


primitive(np.concatenate, ("seq", "axis"), {"seq": "g"}, defaults={"axis": 0}, kind=_joined,
          variant=_concatenate_variant)
primitive(np.stack, ("seq", "axis"), {"seq": "g"}, defaults={"axis": 0}, kind=_stacked,
          variant=lambda c, k: {"adjoints": {"seq": _pieces(k, "rt.index_axis(g, axis, {i})")}})


# ---- gathers -------------------------------------------------------------------------------
def _taken(kinds: list, operands: list):
    a, indices, axis = kinds[0], kinds[1], operands[2]
    floating = not isinstance(a, ArrayKind) or a.floating
    picked = len(_grid(indices) or ()) if isinstance(indices, tuple) else _ndim(indices)
    if isinstance(axis, gast.Constant) and axis.value is None:
        ndim = picked
    else:
        ndim = None if None in (picked, _ndim(a)) else _ndim(a) - 1 + picked
    if ndim == 0:
        return "float" if floating else "int"
    return ArrayKind(ndim, floating)


def _take_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a gather adds ``g`` back at the indices (repeats add up)."""
    indices = kinds.get("indices")
    if isinstance(indices, ArrayKind) and (indices.boolean or indices.floating):
        raise ValueError("np.take: the indices must be integers (for a mask, use a[mask])")
    if constant_axis("take", consts) is None:
        return {"adjoints": {"a": "rt.take_vjp(g, a, indices)"}}
    return {"forward": "rt.take_axis(a, indices, axis)",
            "adjoints": {"a": "rt.take_vjp_axis(g, a, indices, axis)"}}


primitive(np.take, ("a", "indices", "axis"), {"a": "g"}, defaults={"axis": None}, kind=_taken,
          variant=_take_variant, methods=("take",))


# ---- np.array ------------------------------------------------------------------------------
def _grid(kind) -> tuple | None:
    """The shape of a tuple of numbers, or of (equally long) tuples of numbers...; or None."""
    if kind in NUMERIC:
        return ()
    if isinstance(kind, tuple) and kind:
        shapes = {_grid(k) for k in kind}
        if len(shapes) == 1 and None not in shapes:
            return (len(kind),) + shapes.pop()
    return None


def _leaves(kind) -> list:
    return [leaf for k in kind for leaf in _leaves(k)] if isinstance(kind, tuple) else [kind]


def _array_kind(kinds: list, operands: list):
    seq = kinds[0]
    if isinstance(seq, ArrayKind) or seq in NUMERIC:  # np.array(x) of a number: 0-d, a number
        return seq
    if seq == ():
        return ArrayKind(1)  # np.array(()) is an empty float64 array
    shape = _grid(seq)
    if shape:
        leaves = _leaves(seq)
        return ArrayKind(len(shape), "float" in leaves, all(k == "bool" for k in leaves))
    if isinstance(seq, tuple) and seq and all(isinstance(k, ArrayKind) for k in seq):
        ndims = {k.ndim for k in seq}
        ndim = ndims.pop() if len(ndims) == 1 else None
        return ArrayKind(None if ndim is None else ndim + 1, any(k.floating for k in seq))
    return "unknown"


def _entries(shape: tuple, index: tuple = ()) -> str:
    """``(g[0, 0], g[0, 1], ...)``: the cotangent of a nested tuple of numbers."""
    if len(index) == len(shape):
        return f"g[{', '.join(map(str, index))}]"
    inner = (_entries(shape, index + (i,)) for i in range(shape[len(index)]))
    return "(" + "".join(part + ", " for part in inner) + ")"


def _array_variant(consts: dict, kinds: dict) -> dict:
    """``np.array`` of a tuple of numbers (or of equally long tuples of numbers), of a
    tuple of equal-shape arrays (stacked along a new first axis), or of an array (a copy)."""
    seq = kinds.get("seq")
    if isinstance(seq, ArrayKind):
        return {"forward": "np.copy(seq)", "adjoints": {"seq": "g"}}
    if seq in NUMERIC:
        return {"forward": "seq", "adjoints": {"seq": "g"}}
    if seq == ():
        return {"forward": "np.zeros(0)", "adjoints": {"seq": "()"}}
    shape = _grid(seq)
    if shape:
        return {"adjoints": {"seq": _entries(shape)}}
    if isinstance(seq, tuple) and seq and all(isinstance(k, ArrayKind) and k.ndim is not None
                                              for k in seq) and len({k.ndim for k in seq}) == 1:
        return {"forward": "np.stack(seq)",
                "adjoints": {"seq": _pieces(kinds, "rt.index_axis(g, 0, {i})")}}
    raise ValueError("np.array: only a tuple of numbers (or of equally long tuples of numbers),"
                     " a tuple of arrays of one shape, or an array is supported here")


primitive(np.array, ("seq",), {"seq": "g"}, kind=_array_kind, variant=_array_variant, nargs=1)


# ---- facts about the shape (not differentiable) --------------------------------------------
primitive(np.shape, ("x",), kind=_shape)
primitive(np.size, ("x",), kind=ints, nargs=1)
primitive(np.ndim, ("x",), kind=ints)
