"""Derivative rules of NumPy's axis rearrangements, as a table (notation as in
math_rules): transposes with axes, ``moveaxis``, ``swapaxes``, ``rollaxis``,
``squeeze``, ``expand_dims``, flips and ``rot90`` (issue 23).

Each is written as ``np.transpose``, a reshape or ``::-1`` slices for the rank of
its operand, known when the call is compiled; NumPy returns views, so each is
marked ``view=True``.  The helpers here (``known_ndim``, ``constant_ints``...) serve
``rearrange_rules`` too.
"""

from __future__ import annotations

import gast
import numpy as np

from ..kinds import ArrayKind
from .registry import NOT_CONSTANT, primitive
from .result_kinds import ndim as _ndim
from .result_kinds import same


# ---- helpers: ranks and constant axes (the templates are written for a known rank) -----
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


def normalized_axes(name: str, axes: tuple, ndim: int) -> tuple[int, ...]:
    out = tuple(a + ndim if a < 0 else a for a in axes)
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"np.{name}: axis {axes} is out of bounds (or repeated) for an array "
                         f"of {ndim} dimensions")
    return out


def tuple_text(items) -> str:
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
    return {"forward": f"np.transpose(x, {tuple_text(perm)})",
            "adjoints": {"x": f"np.transpose(g, {tuple_text(inverse)})"}}


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


def axes_of(operand) -> tuple | None:
    value = operand.value if isinstance(operand, gast.Constant) else NOT_CONSTANT
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return value if isinstance(value, tuple) else None


def _squeezed_kind(kinds: list, operands: list):
    axes = axes_of(operands[1])
    ndim = _ndim(kinds[0]) if isinstance(kinds[0], ArrayKind) else None
    if axes is None or ndim is None:
        return ArrayKind(None)
    return ArrayKind(ndim - len(axes), kinds[0].floating, kinds[0].boolean)


def _expanded_kind(kinds: list, operands: list):
    axes = axes_of(operands[1])
    ndim = _ndim(kinds[0]) if isinstance(kinds[0], ArrayKind) else None
    if axes is None or ndim is None:
        return ArrayKind(None)
    return ArrayKind(ndim + len(axes), kinds[0].floating, kinds[0].boolean)


def _squeeze_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("squeeze", kinds)
    if consts.get("axis") is None:
        raise ValueError("np.squeeze: give the axis (np.squeeze(x, axis=0)): the rank of "
                         "the result must be known when the call is compiled")
    axes = normalized_axes("squeeze", constant_ints("squeeze", consts["axis"], "axis"), ndim)
    kept = [f"x.shape[{d}]" for d in range(ndim) if d not in axes]
    return {"forward": f"rt.reshape(x, {tuple_text(kept)})",
            "adjoints": {"x": "rt.reshape_like(g, x)"}}


def _expand_dims_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("expand_dims", kinds)
    axes = constant_ints("expand_dims", consts.get("axis"), "axis")
    new = normalized_axes("expand_dims", axes, ndim + len(axes))
    dims = iter(range(ndim))
    shape = ["1" if d in new else f"x.shape[{next(dims)}]" for d in range(ndim + len(axes))]
    return {"forward": f"rt.reshape(x, {tuple_text(shape)})",
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
            axes = tuple(range(ndim)) if given is None else normalized_axes(name, given, ndim)
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
        return f"np.transpose({_flipped(text, (a1,), ndim)}, {tuple_text(perm)})"
    return _flipped(f"np.transpose({text}, {tuple_text(perm)})", (a1,), ndim)


def _rot90_variant(consts: dict, kinds: dict) -> dict:
    ndim = known_ndim("rot90", kinds)
    k, axes = consts.get("k"), consts.get("axes")
    if not isinstance(k, int) or isinstance(k, bool):
        raise ValueError("np.rot90: k must be a constant int")
    axes = normalized_axes("rot90", constant_ints("rot90", axes, "axes"), ndim)
    if len(axes) != 2:
        raise ValueError("np.rot90: axes must be two different axes")
    return {"forward": _rotated("x", k, axes, ndim),
            "adjoints": {"x": _rotated("g", -k, axes, ndim)}}


primitive(np.rot90, ("x", "k", "axes"), {"x": "g"}, defaults={"k": 1, "axes": (0, 1)},
          kind=same, view=True, variant=_rot90_variant)


