"""Derivative rules of NumPy's selections and rearrangements that copy, as a table
(notation as in math_rules): ``tril``/``triu``, ``diag``, ``diagonal``, ``repeat``,
``tile``, ``roll``, ``pad``, ``append``, the pieces of ``np.split`` and its kin,
``gradient``, ``select`` and ``partition`` (issue 23).

Selections take the VJP of runtime.rearrange: the selection applied to
``rt.positions(x)`` says where each entry of the result came from, and
``rt.gather_vjp`` adds ``g`` there.

Subgradients: ``np.partition`` gives each result entry the cotangent of the input
entry of the same rank along its lane (tied entries matched in order, as a
stable sort would: the same convention as ``np.sort``), whatever order the
partition leaves the entries in; Python's NumPy and Numba may leave the entries
beside ``kth`` in different orders (NumPy leaves that order undefined).
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..kinds import ArrayKind
from ..runtime.rearrange import PAD_MODES
from .axes_rules import axes_of, constant_ints, known_ndim, normalized_axes, tuple_text
from .registry import NOT_CONSTANT, primitive
from .result_kinds import ndim as _ndim
from .result_kinds import same
from .shape_rules import constant_axis


# -- selections: the VJP adds g where rt.positions(x) went (rt.gather_vjp) --
def _gathered(text: str) -> str:
    """The VJP of a selection written ``text`` of ``x``: ``text`` of ``rt.positions(x)``
    says where each entry of the result came from."""
    return f"rt.gather_vjp(g, x, {text.replace('{x}', 'rt.positions(x)')})"


def _constant_int(name: str, consts: dict, param: str) -> int:
    value = consts.get(param)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"np.{name}: {param} must be a constant int")
    return value


def _triangle_variant(name: str):
    def variant(consts: dict, kinds: dict) -> dict:
        ndim = known_ndim(name, kinds)
        forward = f"np.{name}({{x}}, k)"
        if ndim >= 2:  # a mask: its VJP is the same mask of g
            return {"adjoints": {"x": f"np.{name}(g, k)"}}
        return {"adjoints": {"x": _gathered(forward)}}

    return variant


def _triangle_kind(kinds: list, operands: list):
    x = kinds[0]
    if isinstance(x, ArrayKind) and x.ndim is not None:
        return ArrayKind(max(x.ndim, 2), x.floating, x.boolean)
    return ArrayKind(None)


for _fn in (np.tril, np.triu):
    primitive(_fn, ("x", "k"), {"x": "g"}, defaults={"k": 0}, kind=_triangle_kind,
              variant=_triangle_variant(_fn.__name__))


def _diag_kind(kinds: list, operands: list):
    x = kinds[0]
    if isinstance(x, ArrayKind) and x.ndim in (1, 2):
        return ArrayKind(3 - x.ndim, x.floating, x.boolean)
    return ArrayKind(None)


def _diag_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("diag", kinds)
    if ndim == 1:
        return {"adjoints": {"x": "rt.diagonal_last(g, k)"}}
    if ndim == 2:
        return {"adjoints": {"x": _gathered("np.diag({x}, k)")}}
    raise ValueError("np.diag: the array must have 1 or 2 dimensions (for more, use "
                     "np.diagonal)")


primitive(np.diag, ("x", "k"), {"x": "g"}, defaults={"k": 0}, kind=_diag_kind,
          variant=_diag_variant, view=True)


def _diagonal_kind(kinds: list, operands: list):
    x = kinds[0]
    if isinstance(x, ArrayKind) and x.ndim is not None:
        return ArrayKind(x.ndim - 1, x.floating, x.boolean)
    return ArrayKind(None)


def _diagonal_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("diagonal", kinds)
    if ndim < 2:
        raise ValueError("np.diagonal: the array needs at least 2 dimensions")
    axes = normalized_axes("diagonal", (_constant_int("diagonal", consts, "axis1"),
                                    _constant_int("diagonal", consts, "axis2")), ndim)
    perm = [d for d in range(ndim) if d not in axes] + list(axes)
    text = "{x}" if perm == list(range(ndim)) else f"np.transpose({{x}}, {tuple_text(perm)})"
    text = f"rt.diagonal_last({text}, offset)"
    return {"forward": text.format(x="x"), "adjoints": {"x": _gathered(text)}}


primitive(np.diagonal, ("x", "offset", "axis1", "axis2"), {"x": "g"},
          defaults={"offset": 0, "axis1": 0, "axis2": 1}, kind=_diagonal_kind,
          variant=_diagonal_variant, methods=("diagonal",), view=True)


# -- repeat, tile, roll, pad, append --
def _repeat_kind(kinds: list, operands: list):
    x = kinds[0]
    if not isinstance(x, ArrayKind):
        return ArrayKind(None)
    axis = operands[2]
    if isinstance(axis, gast.Constant) and axis.value is None:
        return ArrayKind(1, x.floating, x.boolean)
    return x


def _repeat_variant(consts: dict, kinds: dict) -> dict:
    known_ndim("repeat", kinds)
    repeats = kinds.get("repeats")
    if not (repeats == "int" or (isinstance(repeats, ArrayKind) and not repeats.floating
                                 and not repeats.boolean) or
            (isinstance(repeats, tuple) and set(repeats) <= {"int"})):
        raise ValueError("np.repeat: repeats must be an int or ints (one count per entry)")
    if constant_axis("repeat", consts) is None:
        flat = "rt.reshape(x, (-1,))"
        return {"forward": f"rt.repeat_axis({flat}, repeats, 0)",
                "adjoints": {"x": f"rt.reshape_like(rt.repeat_vjp_axis(g, {flat}, repeats, 0), "
                                  "x)"}}
    return {"forward": "rt.repeat_axis(x, repeats, axis)",
            "adjoints": {"x": "rt.repeat_vjp_axis(g, x, repeats, axis)"}}


primitive(np.repeat, ("x", "repeats", "axis"), {"x": "g"}, defaults={"axis": None},
          kind=_repeat_kind, variant=_repeat_variant, methods=("repeat",))


def _tile_kind(kinds: list, operands: list):
    x, reps = kinds[0], axes_of(operands[1])
    if not isinstance(x, ArrayKind) or x.ndim is None or reps is None:
        return ArrayKind(None)
    return ArrayKind(max(x.ndim, len(reps)), x.floating, x.boolean)


def _tile_variant(consts: dict, kinds: dict) -> dict:
    """``np.tile`` as a broadcast of ``x`` with a size-1 axis before each of its axes,
    reshaped; the VJP sums those axes."""
    ndim = known_ndim("tile", kinds)
    reps = constant_ints("tile", consts.get("reps"), "reps")
    if any(r < 0 for r in reps):
        raise ValueError("np.tile: reps must be non-negative")
    rank = max(ndim, len(reps))
    reps = (1,) * (rank - len(reps)) + reps
    sizes = ["1"] * (rank - ndim) + [f"x.shape[{d}]" for d in range(ndim)]
    spread = [item for s in sizes for item in ("1", s)]
    tiled = [item for r, s in zip(reps, sizes, strict=True) for item in (str(r), s)]
    joined = [f"{r} * {s}" for r, s in zip(reps, sizes, strict=True)]
    forward = (f"rt.reshape(np.copy(np.broadcast_to(rt.reshape(x, {tuple_text(spread)}), "
               f"{tuple_text(tiled)})), {tuple_text(joined)})")
    summed = f"rt.reshape(g, {tuple_text(tiled)})"
    for axis in reversed(range(0, 2 * rank, 2)):
        summed = f"np.sum({summed}, axis={axis})"
    return {"forward": forward, "adjoints": {"x": f"rt.reshape_like({summed}, x)"}}


primitive(np.tile, ("x", "reps"), {"x": "g"}, kind=_tile_kind, variant=_tile_variant)


def _roll_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("roll", kinds)
    axis = consts.get("axis")
    if axis is None:
        if kinds.get("shift") != "int":
            raise ValueError("np.roll: without axis, shift must be one int")
        return {"forward": "np.roll(x, shift)", "adjoints": {"x": "np.roll(g, -shift)"}}
    if isinstance(axis, int) and not isinstance(axis, bool) and kinds.get("shift") == "int":
        normalized_axes("roll", (axis,), ndim)
        return {"forward": "rt.roll_axis(x, shift, axis)",
                "adjoints": {"x": "rt.roll_axis(g, -shift, axis)"}}
    axes = constant_ints("roll", axis, "axis")
    shifts = constant_ints("roll", consts.get("shift"), "shift (with a tuple of axes)")
    shifts = shifts * len(axes) if len(shifts) == 1 else shifts
    if len(shifts) != len(axes):
        raise ValueError("np.roll: shift and axis must have the same length")
    normalized_axes("roll", tuple(set(axes)), ndim)
    forward, back = "x", "g"
    for s, a in zip(shifts, axes, strict=True):
        forward = f"rt.roll_axis({forward}, {s}, {a})"
    for s, a in zip(reversed(shifts), reversed(axes), strict=True):
        back = f"rt.roll_axis({back}, {-s}, {a})"
    return {"forward": forward, "adjoints": {"x": back}}


primitive(np.roll, ("x", "shift", "axis"), {"x": "g"}, defaults={"axis": None}, kind=same,
          variant=_roll_variant)


def _pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (ndim, 2))
    except ValueError:
        raise ValueError(f"np.pad: pad_width {pad_width} does not fit an array of {ndim} "
                         "dimensions") from None
    return [(int(b), int(a)) for b, a in widths]


def _pad_variant(consts: dict, kinds: dict) -> dict:
    """``np.pad`` one axis after another (as NumPy pads), each by ``rt.pad_axis``."""
    ndim = known_ndim("pad", kinds)
    pad_width, mode = consts.get("pad_width"), consts.get("mode")
    if pad_width is NOT_CONSTANT or isinstance(pad_width, bool) or not isinstance(
            pad_width, int | tuple) or not all(
            isinstance(v, int) for v in np.ravel(np.asarray(pad_width, dtype=object))):
        raise ValueError("np.pad: pad_width must be a constant int or tuple of ints")
    if mode not in PAD_MODES:
        raise ValueError(f"np.pad: mode must be one of {', '.join(map(repr, PAD_MODES))} "
                         "(a string literal; constant pads zeros)")
    code = PAD_MODES[mode]
    forward, back = "x", "g"
    steps = [(d, b, a) for d, (b, a) in enumerate(_pad_widths(pad_width, ndim)) if b or a]
    if any(b < 0 or a < 0 for _, b, a in steps):
        raise ValueError("np.pad: pad widths must be non-negative")
    for d, b, a in steps:
        forward = f"rt.pad_axis({forward}, {d}, {b}, {a}, {code})"
    for d, b, a in reversed(steps):
        back = f"rt.pad_vjp_axis({back}, {d}, {b}, {a}, {code})"
    return {"forward": forward if steps else "np.copy(x)", "adjoints": {"x": back}}


primitive(np.pad, ("x", "pad_width", "mode"), {"x": "g"}, defaults={"mode": "constant"},
          kind=same, variant=_pad_variant)


def _append_kind(kinds: list, operands: list):
    axis = operands[2]
    x, values = kinds[0], kinds[1]
    floating = any(k.floating if isinstance(k, ArrayKind) else k == "float" for k in (x, values))
    if isinstance(axis, gast.Constant) and axis.value is None:
        return ArrayKind(1, floating)
    return ArrayKind(_ndim(x) if isinstance(x, ArrayKind) else None, floating)


def _append_variant(consts: dict, kinds: dict) -> dict:
    known_ndim("append", kinds)
    values = kinds.get("values")
    if constant_axis("append", consts) is None:
        if values in ("float", "int", "bool"):
            tail = "g[g.shape[0] - 1]"
        else:
            known_ndim("append", kinds, "values")
            tail = "rt.reshape_like(rt.slice_axis(g, 0, x.size, g.shape[0]), values)"
        return {"adjoints": {"x": "rt.reshape_like(rt.slice_axis(g, 0, 0, x.size), x)",
                             "values": tail}}
    known_ndim("append", kinds, "values")
    return {"adjoints": {"x": "rt.slice_axis(g, axis, 0, x.shape[axis])",
                         "values": "rt.slice_axis(g, axis, x.shape[axis], g.shape[axis])"}}


primitive(np.append, ("x", "values", "axis"), {"x": "g", "values": "g"}, defaults={"axis": None},
          kind=_append_kind, variant=_append_variant)


# -- the pieces of np.split and its kin (the normalizer writes one call per piece) --
primitive(runtime.section, ("x", "sections", "i", "axis", "equal"),
          {"x": "rt.section_vjp(g, x, sections, i, axis, equal)"}, kind=same, view=True)


# -- np.gradient: one axis (or a 1-d array), a number spacing, edge_order=1 --
def _gradient_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("gradient", kinds, "f")
    if consts.get("edge_order") != 1:
        raise ValueError("np.gradient: only edge_order=1 (a constant) is supported")
    if kinds.get("h") not in ("float", "int"):
        raise ValueError("np.gradient: the spacing must be one number (coordinate arrays "
                         "are not supported)")
    axis = consts.get("axis")
    if axis is None:
        if ndim != 1:
            raise ValueError("np.gradient of an array of more than 1 dimension returns one "
                             "array per axis: give the axis (np.gradient(f, h, axis=0))")
        axis = 0
    axis = normalized_axes("gradient", constant_ints("gradient", axis, "axis"), ndim)
    if len(axis) != 1:
        raise ValueError("np.gradient: give one axis (a tuple of axes returns a list)")
    return {"forward": f"rt.gradient_axis(f, h, {axis[0]})",
            "adjoints": {"f": f"rt.gradient_vjp_axis(g, h, {axis[0]})",
                         "h": "-np.sum(g * z) / h"}}


primitive(np.gradient, ("f", "h", "axis", "edge_order"), {"f": "g", "h": "g"},
          defaults={"h": 1.0, "axis": None, "edge_order": 1},
          kind=lambda k, o: ArrayKind(_ndim(k[0])) if isinstance(k[0], ArrayKind) else
          ArrayKind(None), variant=_gradient_variant)


# -- np.select as nested np.where (Numba's select takes a number default only): each
# choice's cotangent is g where its condition is the first true one, the default's g
# where none is --
def _summed_to(kind, text: str, like: str) -> str:
    if isinstance(kind, ArrayKind):
        return f"rt.unbroadcast_to_shape({text}, {like}.shape)"
    return f"np.sum({text})"


def _first_true(n: int, inner: str) -> str:
    """``inner`` where none of the first ``n`` conditions holds, else 0."""
    for j in reversed(range(n)):
        inner = f"np.where(condlist[{j}], 0.0, {inner})"
    return inner


def _select_variant(consts: dict, kinds: dict) -> dict:
    conds, choices = kinds.get("condlist"), kinds.get("choicelist")
    if not (isinstance(conds, tuple) and isinstance(choices, tuple) and conds
            and len(conds) == len(choices)):
        raise ValueError("np.select: give equally long tuples (or lists) of conditions and "
                         "choices")
    if not all(isinstance(k, ArrayKind) and k.boolean for k in conds):
        raise ValueError("np.select: the conditions must be boolean arrays")
    n = len(choices)
    forward = "default * 1.0"
    for i in reversed(range(n)):
        forward = f"np.where(condlist[{i}], choicelist[{i}], {forward})"
    pieces = [_summed_to(k, _first_true(i, f"np.where(condlist[{i}], g, 0.0)"),
                         f"choicelist[{i}]") for i, k in enumerate(choices)]
    rest = _summed_to(kinds.get("default"), _first_true(n, "g"), "default")
    return {"forward": forward,
            "adjoints": {"choicelist": "(" + ", ".join(pieces) + ",)", "default": rest}}


def _select_kind(kinds: list, operands: list):
    choices = kinds[1] if isinstance(kinds[1], tuple) else ()
    ndims = [k.ndim for k in (*kinds[0], *choices) if isinstance(k, ArrayKind)] \
        if isinstance(kinds[0], tuple) else [None]
    return ArrayKind(None if not ndims or None in ndims else max(ndims))


primitive(np.select, ("condlist", "choicelist", "default"),
          {"choicelist": "g", "default": "g"}, defaults={"default": 0.0}, kind=_select_kind,
          variant=_select_variant)


# -- np.partition: a subgradient like sort's (each result entry takes the cotangent of
# the input entry of the same rank along its lane; tied entries in order) --
def _partition_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("partition", kinds)
    if kinds.get("kth") != "int":
        raise ValueError("np.partition: kth must be one int (a sequence of kth: use np.sort)")
    axis = normalized_axes("partition", (_constant_int("partition", consts, "axis"),), ndim)[0]
    forward = "np.partition(x, kth)"
    if axis != ndim - 1:
        forward = f"np.moveaxis(np.partition(np.moveaxis(x, {axis}, -1), kth), -1, {axis})"
    return {"forward": forward, "adjoints": {"x": "rt.partition_vjp(g, x, z, axis)"}}


primitive(np.partition, ("x", "kth", "axis"), {"x": "g"}, defaults={"axis": -1}, kind=same,
          variant=_partition_variant)
