"""Derivative rules of NumPy's shape functions, joins, gathers and ``np.array``, as a
table (notation as in math_rules).

Rules marked ``view=True`` may return memory of their first argument (the
reverse pass's aliasing analysis reads it); ``methods`` are the array methods
that spell them (``x.reshape(...)``).

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
from ..kinds import NUMERIC, ArrayKind
from ..runtime.rearrange import PAD_MODES
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
primitive(np.ravel, ("x",), {"x": "rt.reshape_like(g, x)"}, forward="rt.reshape(x, (-1,))",
          kind=lambda k, o: ArrayKind(1), methods=("ravel", "flatten"), view=True)


def _pieces(kinds: dict, piece: str) -> str:
    parts = kinds.get("seq")
    if not isinstance(parts, tuple):
        raise ValueError("concatenate and stack need a tuple of arrays")
    return "(" + ", ".join(piece.format(i=i) for i in range(len(parts))) + ",)"


def _concatenate_variant(consts: dict, kinds: dict) -> dict:
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


# ---- rearrangements (issue 23) ---------------------------------------------------------
# Each needs the rank of its operand when the call is compiled (the templates are
# written for it).  Selections (tril, diag, diagonal...) take the VJP of
# runtime.rearrange: the selection applied to ``rt.positions(x)`` says where each
# entry of the result came from, and ``rt.gather_vjp`` adds ``g`` there.
def known_ndim(name: str, kinds: dict, param: str = "x") -> int:
    """The number of dimensions of ``param`` (a ValueError naming ``np.<name>`` when it is
    not an array of known rank)."""
    kind = kinds.get(param)
    if not isinstance(kind, ArrayKind):
        raise ValueError(f"np.{name}: {param} must be an array here (for a number, use "
                         "np.asarray(...) first or compute it another way)")
    if kind.ndim is None:
        raise ValueError(f"np.{name}: the number of dimensions of {param} is not known here")
    return kind.ndim


def constant_ints(name: str, value, what: str, allow_none: bool = False) -> tuple | None:
    """A constant int or tuple of ints as a tuple (None for None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool)
                                        for v in value):
        return value
    raise ValueError(f"np.{name}: {what} must be a constant int or tuple of ints")


def _normalized(name: str, axes: tuple, ndim: int) -> tuple[int, ...]:
    out = tuple(a + ndim if a < 0 else a for a in axes)
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"np.{name}: axis {axes} is out of bounds (or repeated) for an array "
                         f"of {ndim} dimensions")
    return out


def _tuple_text(items) -> str:
    items = [str(i) for i in items]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _permutation(name: str, ndim: int, permute) -> tuple[int, ...]:
    """The axes order ``permute`` (NumPy's own function, on a shape) makes of ``ndim`` axes."""
    try:
        shape = permute(np.broadcast_to(0.0, tuple(range(2, ndim + 2)))).shape
    except (ValueError, TypeError, np.exceptions.AxisError) as exc:
        raise ValueError(f"np.{name}: {exc}") from None
    return tuple(n - 2 for n in shape)


def _transposed(perm: tuple) -> dict:
    inverse = tuple(int(i) for i in np.argsort(perm))
    return {"forward": f"np.transpose(x, {_tuple_text(perm)})",
            "adjoints": {"x": f"np.transpose(g, {_tuple_text(inverse)})"}}


def _permute_variant(name: str, permute):
    def variant(consts: dict, kinds: dict) -> dict:
        ndim = known_ndim(name, kinds)
        for param, value in consts.items():
            if param != "x" and value is NOT_CONSTANT:
                raise ValueError(f"np.{name}: {param} must be a constant")
        return _transposed(_permutation(name, ndim, lambda a: permute(a, consts)))

    return variant


def _transpose_axes(a, consts):
    axes = consts["axes"]
    return np.transpose(a, axes)


primitive(np.transpose, ("x", "axes"), {"x": "g"}, kind=same, methods=("transpose",),
          view=True, nargs=2, variant=_permute_variant("transpose", _transpose_axes))
primitive(np.moveaxis, ("x", "source", "destination"), {"x": "g"}, kind=same, view=True,
          variant=_permute_variant("moveaxis", lambda a, c: np.moveaxis(
              a, c["source"], c["destination"])))
primitive(np.swapaxes, ("x", "axis1", "axis2"), {"x": "g"}, kind=same, view=True,
          methods=("swapaxes",),
          variant=_permute_variant("swapaxes", lambda a, c: np.swapaxes(
              a, c["axis1"], c["axis2"])))
primitive(np.rollaxis, ("x", "axis", "start"), {"x": "g"}, kind=same, view=True,
          defaults={"start": 0},
          variant=_permute_variant("rollaxis", lambda a, c: np.rollaxis(
              a, c["axis"], c["start"])))


def _axes_of(operand) -> tuple | None:
    value = operand.value if isinstance(operand, gast.Constant) else NOT_CONSTANT
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return value if isinstance(value, tuple) else None


def _squeezed_kind(kinds: list, operands: list):
    axes = _axes_of(operands[1])
    ndim = _ndim(kinds[0]) if isinstance(kinds[0], ArrayKind) else None
    if axes is None or ndim is None:
        return ArrayKind(None)
    return ArrayKind(ndim - len(axes), kinds[0].floating, kinds[0].boolean)


def _expanded_kind(kinds: list, operands: list):
    axes = _axes_of(operands[1])
    ndim = _ndim(kinds[0]) if isinstance(kinds[0], ArrayKind) else None
    if axes is None or ndim is None:
        return ArrayKind(None)
    return ArrayKind(ndim + len(axes), kinds[0].floating, kinds[0].boolean)


def _squeeze_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("squeeze", kinds)
    if consts.get("axis") is None:
        raise ValueError("np.squeeze: give the axis (np.squeeze(x, axis=0)): the rank of "
                         "the result must be known when the call is compiled")
    axes = _normalized("squeeze", constant_ints("squeeze", consts["axis"], "axis"), ndim)
    kept = [f"x.shape[{d}]" for d in range(ndim) if d not in axes]
    return {"forward": f"rt.reshape(x, {_tuple_text(kept)})",
            "adjoints": {"x": "rt.reshape_like(g, x)"}}


def _expand_dims_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("expand_dims", kinds)
    axes = constant_ints("expand_dims", consts.get("axis"), "axis")
    new = _normalized("expand_dims", axes, ndim + len(axes))
    dims = iter(range(ndim))
    shape = ["1" if d in new else f"x.shape[{next(dims)}]" for d in range(ndim + len(axes))]
    return {"forward": f"rt.reshape(x, {_tuple_text(shape)})",
            "adjoints": {"x": "rt.reshape_like(g, x)"}}


primitive(np.squeeze, ("x", "axis"), {"x": "g"}, defaults={"axis": None}, kind=_squeezed_kind,
          variant=_squeeze_variant, methods=("squeeze",), view=True)
primitive(np.expand_dims, ("x", "axis"), {"x": "g"}, kind=_expanded_kind,
          variant=_expand_dims_variant, view=True)


# -- flips and rotations: slices with step -1 and transposes (views, as in NumPy) --
def _flipped(text: str, axes, ndim: int) -> str:
    """``text`` (an expression) reversed along ``axes`` (normalised), as a slice."""
    if not axes:
        return text
    parts = ["::-1" if d in axes else ":" for d in range(max(axes) + 1)]
    return f"{text}[{', '.join(parts)}]"


def _flip_variant(name: str, fixed: tuple | None = None):
    def variant(consts: dict, kinds: dict) -> dict:
        ndim = known_ndim(name, kinds)
        if fixed is not None:
            if ndim < fixed[0] + 1:
                raise ValueError(f"np.{name}: the array needs at least {fixed[0] + 1} "
                                 "dimensions")
            axes = fixed
        else:
            given = constant_ints(name, consts.get("axis"), "axis", allow_none=True)
            axes = tuple(range(ndim)) if given is None else _normalized(name, given, ndim)
        return {"forward": _flipped("x", axes, ndim), "adjoints": {"x": _flipped("g", axes, ndim)}}

    return variant


primitive(np.flip, ("x", "axis"), {"x": "g"}, defaults={"axis": None}, kind=same, view=True,
          variant=_flip_variant("flip"))
primitive(np.flipud, ("x",), {"x": "g"}, kind=same, view=True, variant=_flip_variant(
    "flipud", (0,)))
primitive(np.fliplr, ("x",), {"x": "g"}, kind=same, view=True, variant=_flip_variant(
    "fliplr", (1,)))


def _rotated(text: str, k: int, axes: tuple, ndim: int) -> str:
    """``np.rot90(text, k, axes)`` as slices and a transpose (NumPy's own definition)."""
    a0, a1 = axes
    perm = list(range(ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    k %= 4
    if k == 0:
        return text
    if k == 2:
        return _flipped(text, (a0, a1), ndim)
    if k == 1:
        return f"np.transpose({_flipped(text, (a1,), ndim)}, {_tuple_text(perm)})"
    return _flipped(f"np.transpose({text}, {_tuple_text(perm)})", (a1,), ndim)


def _rot90_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("rot90", kinds)
    k, axes = consts.get("k"), consts.get("axes")
    if not isinstance(k, int) or isinstance(k, bool):
        raise ValueError("np.rot90: k must be a constant int")
    axes = _normalized("rot90", constant_ints("rot90", axes, "axes"), ndim)
    if len(axes) != 2:
        raise ValueError("np.rot90: axes must be two different axes")
    return {"forward": _rotated("x", k, axes, ndim),
            "adjoints": {"x": _rotated("g", -k, axes, ndim)}}


primitive(np.rot90, ("x", "k", "axes"), {"x": "g"}, defaults={"k": 1, "axes": (0, 1)},
          kind=same, view=True, variant=_rot90_variant)


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
    axes = _normalized("diagonal", (_constant_int("diagonal", consts, "axis1"),
                                    _constant_int("diagonal", consts, "axis2")), ndim)
    perm = [d for d in range(ndim) if d not in axes] + list(axes)
    text = "{x}" if perm == list(range(ndim)) else f"np.transpose({{x}}, {_tuple_text(perm)})"
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
    x, reps = kinds[0], _axes_of(operands[1])
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
    forward = (f"rt.reshape(np.copy(np.broadcast_to(rt.reshape(x, {_tuple_text(spread)}), "
               f"{_tuple_text(tiled)})), {_tuple_text(joined)})")
    summed = f"rt.reshape(g, {_tuple_text(tiled)})"
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
        _normalized("roll", (axis,), ndim)
        return {"forward": "rt.roll_axis(x, shift, axis)",
                "adjoints": {"x": "rt.roll_axis(g, -shift, axis)"}}
    axes = constant_ints("roll", axis, "axis")
    shifts = constant_ints("roll", consts.get("shift"), "shift (with a tuple of axes)")
    shifts = shifts * len(axes) if len(shifts) == 1 else shifts
    if len(shifts) != len(axes):
        raise ValueError("np.roll: shift and axis must have the same length")
    _normalized("roll", tuple(set(axes)), ndim)
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
    axis = _normalized("gradient", constant_ints("gradient", axis, "axis"), ndim)
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
    axis = _normalized("partition", (_constant_int("partition", consts, "axis"),), ndim)[0]
    forward = "np.partition(x, kth)"
    if axis != ndim - 1:
        forward = f"np.moveaxis(np.partition(np.moveaxis(x, {axis}, -1), kth), -1, {axis})"
    return {"forward": forward, "adjoints": {"x": "rt.partition_vjp(g, x, z, axis)"}}


primitive(np.partition, ("x", "kth", "axis"), {"x": "g"}, defaults={"axis": -1}, kind=same,
          variant=_partition_variant)
