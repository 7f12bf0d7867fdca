"""Derivative rules of ``np.einsum`` with constant subscripts (1 to 4 operands).

The subscripts are parsed when the rule is specialised to a call (``...`` written
out as letters for the operands' ranks, which must be known; the list-of-axes
form ``np.einsum(a, [0, 1], b, [1, 2])`` reaches here as a string, written so by
the normalizer; the ellipsis axes do not broadcast: sizes must match): the forward
is ``rt.einsum`` with the explicit form of the subscripts (NumPy's in Python,
a contraction kernel under Numba), and the VJP of each operand is itself an
einsum, of the cotangent ``g`` (with the output's labels) and the other
operands, into that operand's labels.  When an operand repeats a label
(``"ii->i"``) or has a label no other term has (``"ij->i"``), its VJP writes
on a diagonal or repeats along an axis: ``rt.einsum_like``, shaped like the
operand.

>>> parts = _einsum_variant(("a", "b"))({"subscripts": "ij,jk"}, {})
>>> parts["forward"]
"rt.einsum('ij,jk->ik', a, b)"
>>> parts["adjoints"]["a"], parts["adjoints"]["b"]
("rt.einsum('ik,jk->ij', g, b)", "rt.einsum('ik,ij->jk', g, a)")
"""

from __future__ import annotations

import numpy as np

from ..kinds import NUMERIC, ArrayKind
from ..runtime.einsum import LETTERS, parse_subscripts
from .registry import NOT_CONSTANT, primitive

_OPERANDS = ("a", "b", "c", "d")


def _parsed(subscripts) -> tuple[tuple[str, ...], str]:
    if subscripts is NOT_CONSTANT or not isinstance(subscripts, str):
        raise ValueError("np.einsum: the subscripts must be a string literal")
    try:
        return parse_subscripts(subscripts)
    except ValueError as exc:
        raise ValueError(f"np.{exc}") from None


def _operand_ndim(kind) -> int | None:
    return kind.ndim if isinstance(kind, ArrayKind) else 0 if kind in NUMERIC else None


def explicit(subscripts, ndims: list) -> str:
    """``subscripts`` with each ``...`` written out as letters no label uses, for
    operands of these ranks (NumPy aligns the ellipsis axes from the right, and
    without ``->`` they lead the output).  Unchanged without ``...``.

    >>> explicit("...ij,...j->...i", [3, 2])
    'aij,aj->ai'
    >>> explicit("i...", [3])
    'iab->abi'
    """
    if not isinstance(subscripts, str) or "." not in subscripts:
        return subscripts
    text = subscripts.replace(" ", "")
    ins, arrow, out = text.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims) or any(t.count("...") > 1 or t.replace("...", "").count(".")
                                       for t in terms):
        raise ValueError(f"np.einsum {subscripts!r}: malformed '...'")
    if None in ndims:
        raise ValueError(f"np.einsum {subscripts!r}: '...' needs operands of known ranks")
    widths = [n - len(t.replace("...", "")) if "..." in t else 0
              for t, n in zip(terms, ndims, strict=True)]
    if min(widths) < 0:
        raise ValueError(f"np.einsum {subscripts!r}: more labels than dimensions")
    free = [c for c in LETTERS if c not in text]
    spread = "".join(free[:max(widths)])
    terms = [t.replace("...", spread[len(spread) - w:]) for t, w in zip(terms, widths,
                                                                          strict=True)]
    if arrow:
        out = out.replace("...", spread)
    else:
        used = "".join(terms)
        out = spread + "".join(sorted(c for c in set(used) if used.count(c) == 1
                                      and c not in spread))
    return ",".join(terms) + "->" + out


def _einsum_kind(kinds: list, operands: list):
    subscripts = operands[0]
    try:
        _, out = _parsed(explicit(getattr(subscripts, "value", NOT_CONSTANT),
                                  [_operand_ndim(k) for k in kinds[1:]]))
    except ValueError:
        return "unknown"
    floating = not all(k in ("int", "bool") or (isinstance(k, ArrayKind) and not k.floating)
                       for k in kinds[1:])
    if not out:
        return "float" if floating else "int"
    return ArrayKind(len(out), floating)


def _vjp(k: int, names: tuple[str, ...], ins: tuple[str, ...], out: str) -> str:
    """The VJP template of operand ``k``: an einsum of ``g`` and the other operands."""
    others = [j for j in range(len(names)) if j != k]
    spec = ",".join([out] + [ins[j] for j in others]) + "->" + ins[k]
    args = ", ".join(["g"] + [names[j] for j in others])
    elsewhere = out + "".join(ins[j] for j in others)
    if len(set(ins[k])) == len(ins[k]) and set(ins[k]) <= set(elsewhere):
        return f"rt.einsum({spec!r}, {args})"
    return f"rt.einsum_like({spec!r}, {names[k]}, {args})"


def einsum_templates(names: tuple[str, ...], ins: tuple[str, ...], out: str) -> dict:
    """The forward and VJP templates of ``rt.einsum`` of operands ``names`` with these
    (explicit, letter) subscripts: the einsum rule's, and those of the products written
    as einsums (``np.tensordot``, ``np.inner``...)."""
    spec = ",".join(ins) + "->" + out
    return {"forward": f"rt.einsum({spec!r}, {', '.join(names)})",
            "adjoints": {name: _vjp(k, names, ins, out) for k, name in enumerate(names)}}


def _einsum_variant(names: tuple[str, ...]):
    def variant(consts: dict, kinds: dict) -> dict:
        ins, out = _parsed(explicit(consts.get("subscripts"),
                                    [_operand_ndim(kinds.get(name)) for name in names]))
        if len(ins) != len(names):
            raise ValueError(f"np.einsum {consts['subscripts']!r}: {len(ins)} subscripts for "
                             f"{len(names)} operands")
        for labels, name in zip(ins, names, strict=True):
            kind = kinds.get(name)
            ndim = kind.ndim if isinstance(kind, ArrayKind) else 0 if kind in NUMERIC else None
            if ndim is not None and ndim != len(labels):
                raise ValueError(f"np.einsum {consts['subscripts']!r}: subscript {labels!r} "
                                 f"for a {ndim}-D operand")
        return einsum_templates(names, ins, out)

    return variant


for _count in (1, 2, 3, 4):
    _names = _OPERANDS[:_count]
    primitive(np.einsum, ("subscripts", *_names), dict.fromkeys(_names, "g"), kind=_einsum_kind,
              variant=_einsum_variant(_names), nargs=1 + _count)
