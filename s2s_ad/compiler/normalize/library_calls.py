"""Library calls written another way before A-normal form (issue 23), each by a
function of the expression normalizer ``norm`` and the call: ``np.split`` and its kin
as one ``rt.section`` call per piece, ``np.r_[...]``/``np.c_[...]`` as joins, and
``np.einsum``'s list-of-axes form as a subscripts string; and literal tuples of
ints (``axis=(0, 2)``, ``pad_width``) read as one constant.

>>> import gast
>>> literal_tuple(gast.parse("(2, -1)", mode="eval").body).value
(2, -1)
"""

from __future__ import annotations

import string
from typing import Any

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.syntax.annotations import set_callee
from s2s_ad.compiler.syntax.builders import attribute, call_node, const, keyword, load, tuple_of
from s2s_ad.errors import NonDifferentiableError

#: The splits: (name, axis ("axis": the call's, default 0; None: hsplit's), equal pieces)
SPLITS = {np.split: ("split", "axis", True), np.array_split: ("array_split", "axis", False),
          np.vsplit: ("vsplit", 0, True), np.hsplit: ("hsplit", None, True),
          np.dsplit: ("dsplit", 2, True)}


def literal_tuple(node: gast.expr) -> gast.Constant | None:
    """A tuple display of int constants (or of such tuples), as one constant: the
    ``axes`` of ``np.transpose(x, (2, 0, 1))``, the ``pad_width`` of ``np.pad``."""
    value = literal_value(node)
    return gast.copy_location(const(value), node) if isinstance(value, tuple) else None


def literal_value(node: gast.expr):
    """An int, or a (nested) tuple of ints, written as literals in ``node`` (else None)."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, gast.Tuple | gast.List):
        items = [literal_value(e) for e in node.elts]
        return tuple(items) if None not in items else None
    return None


def einsum_subscripts(norm: Any, node: gast.Call) -> gast.Call:
    """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (operands each followed by its
    list of axis numbers, then the output's) as ``np.einsum("ab,bc->ac", a, b)``."""
    args = list(node.args)
    output = args.pop() if len(args) % 2 else None
    operands, lists = args[0::2], args[1::2]
    texts = []
    for sub in [*lists, *([output] if output is not None else [])]:
        labels = literal_value(sub)
        if isinstance(labels, int):
            labels = (labels,)
        if not isinstance(labels, tuple) or not all(0 <= v < 52 for v in labels):
            raise norm.error(sub, "np.einsum: each list of axis numbers must be a literal "
                             "list of ints in range(52) (or write the subscripts string)")
        texts.append("".join(string.ascii_letters[v] for v in labels))
    spec = ",".join(texts[:len(operands)])
    if output is not None:
        spec += "->" + texts[-1]
    call = call_node(node.func, [const(spec), *operands], node.keywords)
    return gast.copy_location(call, node)


def index_join(norm: Any, node: gast.Subscript) -> gast.Call | None:
    """``np.r_[a, b]`` as ``np.concatenate((np.atleast_1d(a), np.atleast_1d(b)))`` and
    ``np.c_[a, b]`` as ``np.column_stack((a, b))`` (NumPy's meaning for numbers and
    arrays of up to 2 dimensions); None for any other subscript."""
    if not isinstance(node.value, gast.Attribute | gast.Name):
        return None
    try:
        target = norm.resolve(node.value)
    except (KeyError, NonDifferentiableError):
        return None
    if target is not np.r_ and target is not np.c_:
        return None
    name = "r_" if target is np.r_ else "c_"
    parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    if any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant)
                                         and isinstance(p.value, str)) for p in parts):
        raise norm.error(node, f"np.{name} with slices or string directives is not "
                         "supported", "build the array with np.arange/np.linspace and "
                         "join with np.concatenate")
    if target is np.r_:
        items = []
        for p in parts:
            item = call_node(attribute(load("np"), "atleast_1d"), [p])
            set_callee(item, np.atleast_1d)
            items.append(gast.copy_location(item, p))
        joined = call_node(attribute(load("np"), "concatenate"), [tuple_of(items)],
                           [keyword("axis", const(0))])
        set_callee(joined, np.concatenate)
    else:
        joined = call_node(attribute(load("np"), "column_stack"), [tuple_of(list(parts))])
        set_callee(joined, np.column_stack)
    return gast.copy_location(joined, node)


def split_pieces(norm: Any, node: gast.Call, target: Any) -> gast.expr:
    """``np.split(x, 2)`` (and array_split, vsplit, hsplit, dsplit) as the tuple of
    its pieces, one ``rt.section`` call each: the number of pieces must be known."""
    name, fixed_axis, equal = SPLITS[target]
    params = ["ary", "indices_or_sections"] + (["axis"] if fixed_axis == "axis" else [])
    given = dict(zip(params, node.args, strict=False))
    given.update({k.arg: k.value for k in node.keywords})
    if set(given) - set(params) or len(node.args) > len(params) or "ary" not in given \
            or "indices_or_sections" not in given:
        raise norm.error(node, f"np.{name}: give the array, the sections and (for split "
                         "and array_split) the axis")
    sections = given["indices_or_sections"]
    literal = literal_tuple(sections)
    if literal is None and not (isinstance(sections, gast.Constant)
                                and type(sections.value) is int):
        raise norm.error(node, f"np.{name}: the sections must be a literal int or tuple "
                         "of ints (the number of pieces must be known when compiling)")
    sections = literal or sections
    count = len(sections.value) + 1 if literal is not None else sections.value
    array = norm.atom(given["ary"])
    axis = norm.atom(given.get("axis", const(0))) if fixed_axis == "axis" \
        else const(fixed_axis)
    pieces = []
    for i in range(count):
        piece = call_node(attribute(load("rt"), "section"),
                          [array, sections, const(i), axis, const(equal)])
        set_callee(piece, runtime.section)
        gast.copy_location(piece, node)
        word = array.id if isinstance(array, gast.Name) else "array"
        pieces.append(norm.temp(piece, f"{word}_piece", node))
    return tuple_of(pieces)


_MAX_REPEATED = 64  # items of a repeated display written out; longer ones are refused


def repeated_display(node: gast.expr) -> tuple[list[gast.expr], int] | None:
    """(items, times) of a tuple display (or a list display never changed, which parsing
    made a tuple) repeated by a literal int: ``(x, y) * 2``, ``3 * [x]``."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
        return None
    for display, count in ((node.left, node.right), (node.right, node.left)):
        if isinstance(display, gast.Tuple) and isinstance(count, gast.Constant) and \
                type(count.value) is int and \
                0 <= count.value * len(display.elts) <= _MAX_REPEATED:
            return list(display.elts), count.value
    return None
