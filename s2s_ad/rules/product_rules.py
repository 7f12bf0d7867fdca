"""Derivative rules of the products beyond matrix-by-matrix: ``np.tensordot``,
``np.inner``, ``np.vdot``, ``np.kron``, and ``np.dot``/``np.matmul``/``@`` of
scalars and of arrays of three or more dimensions (notation as in math_rules).

The ranks of the operands must be known when the call is compiled.  A
contraction is written as an einsum with explicit letters (its forward is
``rt.einsum``, its VJPs einsums of ``g`` and the other operand:
:func:`einsum_templates`), so every size must match exactly as NumPy requires
of these products.  ``np.matmul`` and ``@`` broadcast their leading (batch)
axes: the forward is ``rt.matmul``, the VJP of each operand the product of
``g`` with the other one transposed, summed back to the operand's shape
(``rt.unbroadcast_to_shape``); a 1-D operand is a row (left) or a column
(right) whose axis leaves the result, as in NumPy.  ``np.dot`` of N-D arrays
contracts the last axis of ``a`` with the second-to-last of ``b`` (no
broadcasting: every leading axis of both stays in the result).  A number
times an array (``np.dot(2.0, a)``, ``np.inner``) is the product ``*``;
``np.matmul`` refuses numbers, as NumPy does.  ``np.vdot`` is for real
arrays (any shapes of one size, flattened); complex numbers are not supported.

>>> _contraction(2, 3, (1,), (1,))
(('ab', 'cbd'), 'acd')
"""

from __future__ import annotations

from string import ascii_letters

import numpy as np

from ..kinds import NUMERIC, ArrayKind
from .einsum_rules import einsum_templates
from .registry import NOT_CONSTANT, primitive

_PAIR = ("a", "b")


def rank(name: str, kind, param: str) -> int:
    """The number of dimensions of an operand (0 for a number), or a ValueError."""
    if kind in NUMERIC:
        return 0
    if isinstance(kind, ArrayKind) and kind.ndim is not None:
        return kind.ndim
    raise ValueError(f"{name}: the number of dimensions of {param} is not known here")


def _contraction(na: int, nb: int, a_axes: tuple, b_axes: tuple) -> tuple[tuple, str]:
    """Subscripts contracting ``a_axes`` of ``a`` with ``b_axes`` of ``b`` (normalised),
    the free axes of ``a`` then those of ``b`` in the result (``np.tensordot``)."""
    a = ascii_letters[:na]
    fresh = iter(ascii_letters[na:])
    paired = dict(zip(b_axes, (a[i] for i in a_axes), strict=True))
    b = "".join(paired[j] if j in paired else next(fresh) for j in range(nb))
    out = "".join(c for i, c in enumerate(a) if i not in a_axes) + \
        "".join(c for j, c in enumerate(b) if j not in b_axes)
    return (a, b), out


def _axes(name: str, axes, ndim: int) -> tuple[int, ...]:
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    out = tuple(a + ndim if a < 0 else a for a in axes)
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"{name}: axes {axes} out of bounds (or repeated) for an operand of "
                         f"{ndim} dimensions")
    return out


def _scaled(kinds: dict) -> dict | None:
    """The templates of a product with a number (``a * b``), if one operand is one."""
    na, nb = (0 if kinds[p] in NUMERIC else 1 for p in _PAIR)
    if na and nb:
        return None
    da = "g * b" if na else "np.sum(g * b)"
    db = "g * a" if nb else "np.sum(g * a)"
    return {"forward": "a * b", "adjoints": {"a": da, "b": db}}


def _einsum(spec: tuple[tuple, str]) -> dict:
    ins, out = spec
    return einsum_templates(_PAIR, ins, out)


# ---- tensordot, inner, vdot, kron ------------------------------------------------------------
def _tensordot_spec(consts: dict, kinds: dict) -> tuple[tuple, str]:
    na, nb = rank("np.tensordot", kinds["a"], "a"), rank("np.tensordot", kinds["b"], "b")
    axes = consts.get("axes")
    if isinstance(axes, int) and not isinstance(axes, bool):
        if not 0 <= axes <= min(na, nb):
            raise ValueError(f"np.tensordot: axes={axes} for operands of {na} and {nb} "
                             "dimensions")
        return _contraction(na, nb, tuple(range(na - axes, na)), tuple(range(axes)))
    if isinstance(axes, tuple) and len(axes) == 2:
        a_axes, b_axes = _axes("np.tensordot", axes[0], na), _axes("np.tensordot", axes[1], nb)
        if len(a_axes) != len(b_axes):
            raise ValueError("np.tensordot: the two sequences of axes differ in length")
        return _contraction(na, nb, a_axes, b_axes)
    raise ValueError("np.tensordot: axes must be a constant int or a pair of constant "
                     "int sequences")


def tensordot_variant(consts: dict, kinds: dict) -> dict:
    return _einsum(_tensordot_spec(consts, kinds))


def tensordot_kind(kinds: list, operands: list):
    value = getattr(operands[2], "value", NOT_CONSTANT)
    try:
        ins, out = _tensordot_spec({"axes": value}, dict(zip(_PAIR, kinds, strict=False)))
    except ValueError:
        return ArrayKind(None)
    return ArrayKind(len(out)) if out else "float"


def inner_variant(consts: dict, kinds: dict) -> dict:
    scaled = _scaled(kinds)
    if scaled is not None:
        return scaled
    na, nb = rank("np.inner", kinds["a"], "a"), rank("np.inner", kinds["b"], "b")
    return _einsum(_contraction(na, nb, (na - 1,), (nb - 1,)))


def vdot_variant(consts: dict, kinds: dict) -> dict:
    for p in _PAIR:
        rank("np.vdot", kinds[p], p)
    if _scaled(kinds) is not None:
        raise ValueError("np.vdot: both operands must be arrays (for numbers, use *)")
    return {"forward": "np.dot(rt.reshape(a, (-1,)), rt.reshape(b, (-1,)))",
            "adjoints": {"a": "g * rt.reshape_like(b, a)", "b": "g * rt.reshape_like(a, b)"}}


def _shape_of(param: str, ndim: int, rank_: int) -> list[str]:
    return ["1"] * (rank_ - ndim) + [f"{param}.shape[{d}]" for d in range(ndim)]


def _tuple_text(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def kron_variant(consts: dict, kinds: dict) -> dict:
    """``np.kron``: the outer product with the axes of ``a`` and ``b`` interleaved,
    reshaped (both promoted to the larger rank)."""
    na, nb = rank("np.kron", kinds["a"], "a"), rank("np.kron", kinds["b"], "b")
    if not (na and nb):
        raise ValueError("np.kron: both operands must be arrays (for a number, use *)")
    r = max(na, nb)
    sa, sb = _shape_of("a", na, r), _shape_of("b", nb, r)
    la, lb = ascii_letters[:r], ascii_letters[r:2 * r]
    spread = "".join(x + y for x, y in zip(la, lb, strict=True))
    ins = (la, lb)
    pa = "a" if na == r else f"rt.reshape(a, {_tuple_text(sa)})"
    pb = "b" if nb == r else f"rt.reshape(b, {_tuple_text(sb)})"
    joined = _tuple_text([f"{x} * {y}" for x, y in zip(sa, sb, strict=True)])
    parts = [s for x, y in zip(sa, sb, strict=True) for s in (x, y)]
    gs = f"rt.reshape(g, {_tuple_text(parts)})"
    forward = f"rt.reshape(rt.einsum({','.join(ins) + '->' + spread!r}, {pa}, {pb}), {joined})"
    da = f"rt.reshape_like(rt.einsum({spread + ',' + lb + '->' + la!r}, {gs}, {pb}), a)"
    db = f"rt.reshape_like(rt.einsum({spread + ',' + la + '->' + lb!r}, {gs}, {pa}), b)"
    return {"forward": forward, "adjoints": {"a": da, "b": db}}


def kron_kind(kinds: list, operands: list):
    ranks = [k.ndim if isinstance(k, ArrayKind) else None for k in kinds]
    return ArrayKind(None if None in ranks else max(ranks))


def inner_kind(kinds: list, operands: list):
    na, nb = (k.ndim if isinstance(k, ArrayKind) else 0 if k in NUMERIC else None
              for k in kinds)
    if None in (na, nb):
        return ArrayKind(None)
    if not (na and nb):
        return ArrayKind(na + nb) if na + nb else "float"
    return ArrayKind(na + nb - 2) if na + nb > 2 else "float"


# ---- dot and matmul beyond 2-D -------------------------------------------------------------
def dot_nd_variant(na: int, nb: int, kinds: dict) -> dict:
    """``np.dot`` where an operand is a number or has more than 2 dimensions."""
    scaled = _scaled(kinds)
    if scaled is not None:
        return scaled
    return _einsum(_contraction(na, nb, (na - 1,), (max(nb - 2, 0),)))


def dot_nd_ndim(na: int, nb: int) -> int:
    if not (na and nb):
        return na + nb
    return na + nb - 2


def matmul_nd_variant(na: int, nb: int) -> dict:
    """``np.matmul``/``@`` with batch axes: ``rt.matmul`` and its VJPs."""
    if not (na and nb):
        raise ValueError("matmul: a number is not a matrix (NumPy refuses it too); use *")
    big_a = "a" if na >= 2 else "rt.reshape(a, (1, -1))"
    big_b = "b" if nb >= 2 else "rt.reshape(b, (-1, 1))"
    big_g, gdim = "g", max(na, nb, 2) - (na == 1) - (nb == 1)
    if na == 1:
        big_g, gdim = f"np.expand_dims({big_g}, {gdim - 1})", gdim + 1
    if nb == 1:
        big_g, gdim = f"np.expand_dims({big_g}, {gdim})", gdim + 1
    ra, rb = max(na, 2), max(nb, 2)
    ta = f"np.swapaxes(rt.as_float64({big_a}), {ra - 2}, {ra - 1})"
    tb = f"np.swapaxes(rt.as_float64({big_b}), {rb - 2}, {rb - 1})"
    da = f"rt.unbroadcast_to_shape(rt.matmul({big_g}, {tb}), {big_a}.shape)"
    db = f"rt.unbroadcast_to_shape(rt.matmul({ta}, {big_g}), {big_b}.shape)"
    if na == 1:
        da = f"rt.reshape_like({da}, a)"
    if nb == 1:
        db = f"rt.reshape_like({db}, b)"
    return {"forward": "rt.matmul(a, b)", "adjoints": {"a": da, "b": db}}


def matmul_nd_ndim(na: int, nb: int) -> int:
    return max(na, nb, 2) - (na == 1) - (nb == 1)


primitive(np.tensordot, ("a", "b", "axes"), {"a": "g", "b": "g"}, defaults={"axes": 2},
          kind=tensordot_kind, variant=tensordot_variant)
primitive(np.inner, ("a", "b"), {"a": "g", "b": "g"}, kind=inner_kind, variant=inner_variant)
primitive(np.vdot, ("a", "b"), {"a": "g", "b": "g"}, kind="float", variant=vdot_variant)
primitive(np.kron, ("a", "b"), {"a": "g", "b": "g"}, kind=kron_kind, variant=kron_variant)
