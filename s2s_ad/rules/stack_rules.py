"""Derivative rules of ``np.vstack``, ``np.hstack``, ``np.column_stack`` and
``np.atleast_1d/2d/3d`` (one argument), in terms of concatenate's machinery.

NumPy defines the three stacks as concatenations of promoted operands:
``vstack`` joins ``np.atleast_2d`` of each operand along axis 0, ``hstack``
joins ``np.atleast_1d`` of each along axis 0 (1-D) or axis 1 (2-D and more),
and ``column_stack`` turns numbers and 1-D arrays into columns and joins along
axis 1.  The rules do the same, from the operands' kinds (their ranks must be
known when the call is compiled); an array is joined by its rows, as NumPy
iterates over it (a list that grows is joined item by item: ``rt.list_hstack`` and
``rt.list_vstack``, rules/list_rules.py):

* the forward is the NumPy call itself where Numba compiles it (arrays of one
  rank; for ``column_stack``, 1-D and 2-D arrays), else ``np.concatenate`` of
  the promoted operands (a number becomes ``rt.filled((1, ...), x)``, that is
  ``np.full``, also of a 0-d array);
* the VJP of each operand is its block of the cotangent ``g`` along the joining
  axis (``rt.slice_axis``, as for concatenate); a promoted 1-D operand takes
  one row or column (``rt.index_axis``), a number its one entry.

>>> from s2s_ad.kinds import ArrayKind
>>> parts = _join_variant(VSTACK)({}, {"seq": (ArrayKind(1), ArrayKind(2))})
>>> parts["forward"]
'np.concatenate((np.atleast_2d(seq[0]), seq[1],), axis=0)'
>>> parts["adjoints"]["seq"]
'(rt.index_axis(g, 0, 0), rt.slice_axis(g, 0, 1, 1 + seq[1].shape[0]),)'
>>> parts = _join_variant(HSTACK)({}, {"seq": ("float", ArrayKind(1))})
>>> parts["forward"]
'np.concatenate((rt.filled((1,), seq[0]), seq[1],), axis=0)'
>>> parts["adjoints"]["seq"]
'(g[0], rt.slice_axis(g, 0, 1, 1 + seq[1].shape[0]),)'
>>> _join_variant(HSTACK)({}, {"seq": (ArrayKind(2), ArrayKind(2))})["forward"] is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinds import NUMERIC, ArrayKind
from .registry import primitive


@dataclass(frozen=True)
class Join:
    """How a stack promotes and joins its operands."""

    name: str
    rank: int  # operands of fewer dimensions are promoted to this many
    column: bool = False  # 1-D operands become (n, 1) columns (column_stack)

    def axis(self, ndim: int) -> int:
        """The joining axis, for operands of ``ndim`` dimensions after promotion."""
        if self.name == "hstack":
            return 0 if ndim == 1 else 1
        return 1 if self.column else 0

    def native(self, kinds: tuple) -> bool:
        """Whether Numba compiles the NumPy call itself for operands of these kinds."""
        if not all(isinstance(k, ArrayKind) for k in kinds):
            return False
        ndims = {k.ndim for k in kinds}
        if self.column:
            return ndims <= {1, 2}
        return len(ndims) == 1 and min(ndims) >= 1


#: The stacks NumPy defines by concatenate (``np.row_stack``, where NumPy still has
#: it, is ``np.vstack`` under its deprecated name, a function of its own since 2.0).
STACKS = (np.vstack, np.hstack, np.column_stack) + (
    (np.row_stack,) if hasattr(np, "row_stack") else ())

VSTACK = Join("vstack", 2)
HSTACK = Join("hstack", 1)
COLUMN_STACK = Join("column_stack", 2, column=True)


# ---- kinds --------------------------------------------------------------------------------
def _element(kinds) -> tuple[bool, bool]:
    """(floating, boolean) of the result of joining values of these kinds (NumPy's
    promotion: any float makes it float, all bool keeps it bool)."""
    floating = [k.floating if isinstance(k, ArrayKind) else k not in ("int", "bool")
                for k in kinds]
    boolean = [k.boolean if isinstance(k, ArrayKind) else k == "bool" for k in kinds]
    return any(floating), bool(boolean) and all(boolean)


def _ndim(kind) -> int | None:
    if isinstance(kind, ArrayKind):
        return kind.ndim
    return 0 if kind in NUMERIC else None


def _rows_ndim(join: Join, rows: int) -> int | None:
    """The rank of ``join`` of an array's rows of rank ``rows`` (``np.vstack(m)``):
    NumPy iterates over the first axis.  None where
    that is not supported (the variant says so, at the call's line)."""
    if join.name == "vstack":
        return max(rows, join.rank)
    if join.column:
        return 2 if rows >= 1 else None
    return 1 if rows <= 1 else rows


_ROWS_TEMPLATES = {  # (join, rank of the rows) -> (forward, adjoint)
    ("vstack", 0): ("rt.reshape(seq, (-1, 1))", "rt.reshape_like(g, seq)"),
    ("vstack", 1): ("np.copy(seq)", "g"),
    ("hstack", 0): ("np.copy(seq)", "g"),
    ("hstack", 1): ("rt.merge_leading(seq)", "rt.reshape_like(g, seq)"),
}


def _side_by_side(ndim: int) -> tuple[str, str]:
    """(forward, adjoint) of joining the rows of ``seq`` (``ndim`` dimensions, rows of two
    or more) along their axis 1: ``seq[i]`` lands at columns ``i * m ... (i + 1) * m``,
    that is ``seq`` with its first two axes swapped, the rows' axis merged into axis 1."""
    perm = "(" + ", ".join(map(str, [1, 0, *range(2, ndim)])) + ")"
    rest = [f"seq.shape[{d}]" for d in range(3, ndim)]
    joined = ", ".join(["seq.shape[1]", "seq.shape[0] * seq.shape[2]", *rest])
    split = ", ".join(["seq.shape[1]", "seq.shape[0]", "seq.shape[2]", *rest])
    return (f"rt.reshape(np.transpose(seq, {perm}), ({joined}))",
            f"np.transpose(rt.reshape(g, ({split})), {perm})")


def _rows_variant(join: Join, seq: ArrayKind) -> dict:
    if seq.ndim is None:
        raise ValueError(f"np.{join.name}: the number of dimensions is not known here")
    rows = seq.ndim - 1
    if _rows_ndim(join, rows) is None:
        raise ValueError(f"np.{join.name} of a 1-d array (its items are numbers) is not "
                         "supported: give a tuple of arrays")
    if rows >= 2 and join.name != "vstack":  # issue 23: hstack/column_stack of an array
        forward, adjoint = _side_by_side(seq.ndim)
    elif join.column:  # the rows (1-d) become the columns
        forward, adjoint = "np.copy(np.transpose(seq))", "np.transpose(g)"
    else:
        forward, adjoint = _ROWS_TEMPLATES.get(
            (join.name, rows), ("rt.merge_leading(seq)", "rt.reshape_like(g, seq)"))
    return {"forward": forward, "adjoints": {"seq": adjoint}}


def _joined_kind(join: Join):
    def kind(kinds: list, operands: list):
        if isinstance(kinds[0], ArrayKind):
            seq = kinds[0]
            ndim = None if seq.ndim is None else _rows_ndim(join, seq.ndim - 1)
            return ArrayKind(ndim, seq.floating, seq.boolean)
        parts = kinds[0] if isinstance(kinds[0], tuple) else ()
        ndims = [_ndim(k) for k in parts]
        ndim = None if not parts or None in ndims else max(ndims + [join.rank])
        return ArrayKind(ndim, *_element(parts)) if parts else ArrayKind(None)

    return kind


# ---- templates ----------------------------------------------------------------------------
def _offset(const: int, terms: list[str]) -> str:
    return " + ".join(([str(const)] if const or not terms else []) + terms)


def _checked_ndims(join: Join, kinds: dict) -> list[int]:
    parts = kinds.get("seq")
    if not isinstance(parts, tuple):
        raise ValueError(f"np.{join.name} needs a tuple (or list) of arrays")
    if not parts:
        raise ValueError(f"np.{join.name} needs at least one array")
    ndims = []
    for i, kind in enumerate(parts):
        if not (isinstance(kind, ArrayKind) or kind in NUMERIC):
            raise ValueError(f"np.{join.name}: operand {i} must be an array or a number, "
                             f"not {kind}")
        if _ndim(kind) is None:
            raise ValueError(f"np.{join.name}: the number of dimensions of operand {i} "
                             "is not known here")
        ndims.append(_ndim(kind))
    promoted = sorted({max(d, join.rank) for d in ndims})
    if len(promoted) > 1:
        raise ValueError(f"np.{join.name}: operands of {promoted[0]} and {promoted[-1]} "
                         "dimensions (after promotion) cannot be joined")
    return ndims


def _ones(rank: int) -> str:
    """The shape ``(1,)``, ``(1, 1)``... as source text."""
    return "(" + ", ".join(["1"] * rank) + ("," if rank == 1 else "") + ")"


def _promoted(join: Join, i: int, kind, ndim: int) -> str:
    """Operand ``i`` as ``join`` promotes it."""
    item = f"seq[{i}]"
    if ndim >= join.rank:
        return item
    if not isinstance(kind, ArrayKind):
        return f"rt.filled({_ones(join.rank)}, {item})"
    if join.column and ndim == 1:
        return f"rt.reshape({item}, (-1, 1))"
    return f"np.atleast_{join.rank}d({item})"


def _block(join: Join, axis: int, i: int, kind, ndim: int, start: str, stop: str) -> str:
    """The cotangent of operand ``i``: its block of ``g`` along ``axis``, reshaped back."""
    if ndim >= join.rank:
        return f"rt.slice_axis(g, {axis}, {start}, {stop})"
    if not isinstance(kind, ArrayKind):  # a number: its one entry
        index = ["0"] * join.rank
        index[axis] = start
        return f"g[{', '.join(index)}]"
    if ndim == 1:  # a row (vstack) or a column (column_stack)
        return f"rt.index_axis(g, {axis}, {start})"
    return f"rt.reshape_like(rt.slice_axis(g, {axis}, {start}, {stop}), seq[{i}])"


def _join_variant(join: Join):
    def variant(consts: dict, kinds: dict) -> dict:
        if isinstance(kinds.get("seq"), ArrayKind):
            return _rows_variant(join, kinds["seq"])
        ndims = _checked_ndims(join, kinds)
        parts = kinds["seq"]
        axis = join.axis(max(ndims + [join.rank]))
        const, terms, pieces = 0, [], []
        for i, (kind, ndim) in enumerate(zip(parts, ndims, strict=True)):
            start = _offset(const, terms)
            if ndim >= join.rank:
                terms = terms + [f"seq[{i}].shape[{axis}]"]
            else:
                const += 1
            pieces.append(_block(join, axis, i, kind, ndim, start, _offset(const, terms)))
        forward = None
        if not join.native(parts):
            promoted = ", ".join(_promoted(join, i, k, d)
                                 for i, (k, d) in enumerate(zip(parts, ndims, strict=True)))
            forward = f"np.concatenate(({promoted},), axis={axis})"
        return {"forward": forward, "adjoints": {"seq": "(" + ", ".join(pieces) + ",)"}}

    return variant


for _fn, _join in ((np.vstack, VSTACK), (np.hstack, HSTACK), (np.column_stack, COLUMN_STACK)):
    primitive(_fn, ("seq",), {"seq": "g"}, kind=_joined_kind(_join), variant=_join_variant(_join),
              nargs=1, also=(np.row_stack,) if _fn is np.vstack and hasattr(np, "row_stack")
              else ())


# ---- atleast_1d/2d/3d ----------------------------------------------------------------------
def _atleast_kind(rank: int):
    def kind(kinds: list, operands: list):
        x = kinds[0]
        if isinstance(x, ArrayKind):
            return ArrayKind(None if x.ndim is None else max(x.ndim, rank), x.floating,
                             x.boolean)
        if x in NUMERIC:
            return ArrayKind(rank, *_element([x]))
        return "unknown"

    return kind


def _atleast_variant(rank: int):
    """A number becomes ``rt.filled((1, ...), x)`` (Numba's atleast_* take arrays only);
    an array is reshaped only when it has fewer than ``rank`` dimensions."""

    def variant(consts: dict, kinds: dict) -> dict:
        x = kinds.get("x")
        if isinstance(x, ArrayKind):
            grows = x.ndim is None or x.ndim < rank
            return {"adjoints": {"x": "rt.reshape_like(g, x)" if grows else "g"}}
        if x in NUMERIC:
            return {"forward": f"rt.filled({_ones(rank)}, x)",
                    "adjoints": {"x": "np.sum(g)"}}
        raise ValueError(f"np.atleast_{rank}d: only an array or a number is supported here")

    return variant


for _rank, _fn in enumerate((np.atleast_1d, np.atleast_2d, np.atleast_3d), start=1):
    primitive(_fn, ("x",), {"x": "g"}, kind=_atleast_kind(_rank), variant=_atleast_variant(_rank),
              view=True, nargs=1)
