"""Einstein summation with constant subscripts, in Python and inside Numba.

``einsum(subscripts, *operands)`` is ``np.einsum``; Numba has none, so its
Numba version is a matrix product (``np.dot``, BLAS) when the subscripts say
one (``"ij,jk->ik"``, ``"ik,jk->ij"``, ``"i,i->"``...), and otherwise contracts
the operands with one loop over every combination of label values
(subscripts must be a string literal there: it is parsed when Numba types the
call).  ``einsum_like(subscripts, like, *operands)`` is the
VJP form: its output labels may repeat (a diagonal: the sums land on it, zeros
elsewhere) or be absent from the operands (the sums are repeated along them),
and ``like`` gives the output's shape.

Both take letters as labels, no ``...``, and no broadcasting: a label has one
size in every operand (a size-1 axis against a longer one is a ValueError).
Scalars are operands with an empty subscript.  Sums are accumulated in
float64; an output without labels is a scalar.

>>> a, b = np.arange(6.0).reshape(2, 3), np.ones(3)
>>> einsum("ij,j->i", a, b)
array([ 3., 12.])
>>> einsum_like("i->ii", np.zeros((2, 2)), np.array([1.0, 2.0]))
array([[1., 0.], [0., 2.]])
>>> einsum_like(",->ij", np.zeros((2, 3)), 2.0, 0.5)
array([[1., 1., 1.], [1., 1., 1.]])
"""

from __future__ import annotations

import functools
import string

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .scalar import as_float64

__all__ = ["einsum", "einsum_like"]

LETTERS = string.ascii_letters


@functools.cache
def parse_subscripts(subscripts: str, free_output: bool = False) -> tuple[tuple[str, ...], str]:
    """``(input subscripts, output subscript)`` of ``subscripts``, spaces removed.

    Without ``->`` the output is every label used once, sorted (NumPy's implicit
    mode).  Unless ``free_output``, output labels are distinct and each one
    appears in an input, as NumPy requires.  Raises ValueError otherwise.

    >>> parse_subscripts("ij, jk")
    (('ij', 'jk'), 'ik')
    >>> parse_subscripts("i->ii", free_output=True)
    (('i',), 'ii')
    """
    text = subscripts.replace(" ", "")
    if "." in text:
        raise ValueError(f"einsum {subscripts!r}: '...' is not supported; write the labels out")
    if text.count("->") > 1 or text.count(">") != text.count("->"):
        raise ValueError(f"einsum {subscripts!r}: malformed subscripts")
    left, arrow, out = text.partition("->")
    ins = tuple(left.split(","))
    used = "".join(ins)
    bad = [c for c in used + out if c not in LETTERS]
    if bad:
        raise ValueError(f"einsum {subscripts!r}: labels are letters, not {bad[0]!r}")
    if not arrow:
        out = "".join(sorted(c for c in set(used) if used.count(c) == 1))
    elif not free_output:
        if len(set(out)) != len(out):
            raise ValueError(f"einsum {subscripts!r}: an output label is repeated")
        if set(out) - set(used):
            raise ValueError(f"einsum {subscripts!r}: output label "
                             f"{sorted(set(out) - set(used))[0]!r} is in no input")
    return ins, out


def _sizes(subscripts, ins, shapes):
    """{label: size}, checking each operand's ndim and one size per label."""
    if len(ins) != len(shapes):
        raise ValueError(f"einsum {subscripts!r}: {len(ins)} subscripts for "
                         f"{len(shapes)} operands")
    sizes: dict[str, int] = {}
    for labels, shape in zip(ins, shapes, strict=True):
        if len(labels) != len(shape):
            raise ValueError(f"einsum {subscripts!r}: operand of shape {shape} for "
                             f"subscript {labels!r}")
        for label, size in zip(labels, shape, strict=True):
            if sizes.setdefault(label, size) != size:
                raise ValueError(f"einsum {subscripts!r}: label {label!r} has sizes "
                                 f"{sizes[label]} and {size}")
    return sizes


def einsum(subscripts, *operands):
    """``np.einsum(subscripts, *operands)``; in Numba, ``subscripts`` must be a literal.

    >>> float(einsum("i,i", np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    ins, _ = parse_subscripts(subscripts)
    _sizes(subscripts, ins, [np.shape(op) for op in operands])
    return np.einsum(subscripts, *operands)


def einsum_like(subscripts, like, *operands):
    """The einsum of ``operands`` into an array shaped like ``like``, whose output
    labels may repeat (the diagonal gets the sums) or be in no input (repeated along).

    >>> einsum_like("i->ij", np.zeros((2, 3)), np.array([1.0, 2.0]))
    array([[1., 1., 1.], [2., 2., 2.]])
    """
    ins, out = parse_subscripts(subscripts, free_output=True)
    shape = np.shape(like)
    sizes = _sizes(subscripts, ins + (out,), [np.shape(op) for op in operands] + [shape])
    spare = iter(c for c in LETTERS if c not in sizes)
    extra_labels, extra_operands, written = [], [], ""
    for label in out:
        if label in written:  # a repeated output label: a delta pairs it with a new one
            new = next(spare)
            extra_labels.append(label + new)
            extra_operands.append(np.eye(sizes[label]))
            label = new
        elif label not in "".join(ins):  # in no input: repeat along it
            extra_labels.append(label)
            extra_operands.append(np.ones(sizes[label]))
        written += label
    spec = ",".join(ins + tuple(extra_labels)) + "->" + written
    return np.asarray(np.einsum(spec, *operands, *extra_operands), dtype=np.float64)


# --------------------------------------------------------------------------
# Numba: one contraction kernel; the typing functions turn the literal
# subscripts into label-id tables the kernel reads.


@register_jitable
def _contract(flats, shapes, labels, out_labels, out_shape, nlabels):
    """Sum of products over every combination of label values.

    ``flats[k]``: operand k as a flat float64 array, ``shapes[k]`` its shape;
    ``labels[k, axis]``: its label ids; ``out_labels``: the output's, whose
    sizes ``out_shape`` gives where it is not -1.  A label repeated within an
    operand or the output walks its diagonal (the strides add up).
    Returns the flat output and its shape.
    """
    nops = len(flats)
    sizes = np.full(nlabels, -1, np.int64)
    for k in range(nops):
        shape = shapes[k]
        for axis in range(shape.shape[0]):
            label = labels[k, axis]
            if sizes[label] == -1:
                sizes[label] = shape[axis]
            elif sizes[label] != shape[axis]:
                raise ValueError("einsum: a label has different sizes in two operands")
    for axis in range(out_labels.shape[0]):
        label = out_labels[axis]
        if out_shape[axis] == -1:
            continue
        if sizes[label] == -1:
            sizes[label] = out_shape[axis]
        elif sizes[label] != out_shape[axis]:
            raise ValueError("einsum: an output size does not match the operands")
    strides = np.zeros((nops, nlabels), np.int64)
    for k in range(nops):
        shape = shapes[k]
        step = 1
        for axis in range(shape.shape[0] - 1, -1, -1):
            strides[k, labels[k, axis]] += step
            step *= shape[axis]
    nout = out_labels.shape[0]
    shape_out = np.empty(nout, np.int64)
    out_strides = np.zeros(nlabels, np.int64)
    step = 1
    for axis in range(nout - 1, -1, -1):
        size = sizes[out_labels[axis]]
        shape_out[axis] = size
        out_strides[out_labels[axis]] += step
        step *= size
    out = np.zeros(step, np.float64)
    total = 1
    for label in range(nlabels):
        total *= sizes[label]
    if total == 0:
        return out, shape_out
    if nlabels == 0:  # scalars only
        out[0] = 1.0
        for k in range(nops):
            out[0] *= flats[k][0]
        return out, shape_out
    index = np.zeros(nlabels, np.int64)
    offsets = np.zeros(nops, np.int64)
    position = 0
    inner = nlabels - 1  # the fastest label gets a loop of its own
    inner_size = sizes[inner]
    inner_out = out_strides[inner]
    inner_strides = strides[:, inner].copy()
    for _ in range(total // inner_size):
        for v in range(inner_size):
            term = 1.0
            for k in range(nops):
                term *= flats[k][offsets[k] + v * inner_strides[k]]
            out[position + v * inner_out] += term
        label = inner - 1  # the odometer of the other labels: the last turns fastest
        while label >= 0:
            index[label] += 1
            position += out_strides[label]
            for k in range(nops):
                offsets[k] += strides[k, label]
            if index[label] < sizes[label]:
                break
            position -= out_strides[label] * sizes[label]
            for k in range(nops):
                offsets[k] -= strides[k, label] * sizes[label]
            index[label] = 0
            label -= 1
    return out, shape_out


def _flat(op):
    """``op`` as a flat float64 array (Numba only)."""


@overload(_flat, strict=False)
def _ol_flat(op):
    if isinstance(op, types.Array):
        return lambda op: np.ascontiguousarray(op).reshape(op.size).astype(np.float64)
    if isinstance(op, types.Number):
        return lambda op: np.full(1, op, np.float64)
    raise TypingError(f"einsum: operands must be arrays or numbers, got {op}")


def _shape(op):
    """``op``'s shape as an int array (Numba only)."""


@overload(_shape, strict=False)
def _ol_shape(op):
    if not isinstance(op, types.Array):
        return lambda op: np.empty(0, np.int64)
    ndim = op.ndim

    def impl(op):
        out = np.empty(ndim, np.int64)
        for axis in range(ndim):
            out[axis] = op.shape[axis]
        return out

    return impl


def _pack(ops):
    """(flat operands, their shapes) as two homogeneous tuples (Numba only)."""


@overload(_pack, strict=False)
def _ol_pack(ops):
    count = len(ops)
    if count == 1:
        return lambda ops: ((_flat(ops[0]),), (_shape(ops[0]),))
    if count == 2:
        return lambda ops: ((_flat(ops[0]), _flat(ops[1])), (_shape(ops[0]), _shape(ops[1])))
    if count == 3:
        return lambda ops: ((_flat(ops[0]), _flat(ops[1]), _flat(ops[2])),
                            (_shape(ops[0]), _shape(ops[1]), _shape(ops[2])))
    if count == 4:
        return lambda ops: ((_flat(ops[0]), _flat(ops[1]), _flat(ops[2]), _flat(ops[3])),
                            (_shape(ops[0]), _shape(ops[1]), _shape(ops[2]), _shape(ops[3])))
    raise TypingError(f"einsum: 1 to 4 operands in compiled code, got {count}")


def _tables(subscripts, operands, free_output, like=None):
    """At typing time: the label tables of a literal ``subscripts`` for these operand
    types, and the result's scalar type (``np.float64``...)."""
    if not isinstance(subscripts, types.StringLiteral):
        raise TypingError("einsum: in compiled code the subscripts must be a string literal")
    text = subscripts.literal_value
    try:
        ins, out = parse_subscripts(text, free_output)
    except ValueError as exc:
        raise TypingError(str(exc)) from None
    ndims = [op.ndim if isinstance(op, types.Array) else 0 for op in operands]
    if len(ins) != len(operands) or any(len(s) != n for s, n in zip(ins, ndims, strict=False)):
        raise TypingError(f"einsum {text!r}: operands of ndim {ndims} do not match")
    if like is not None and len(out) != (like.ndim if isinstance(like, types.Array) else 0):
        raise TypingError(f"einsum {text!r}: 'like' does not have {len(out)} dimensions")
    ids = {c: i for i, c in enumerate(_loop_order(ins, out))}
    labels = np.full((len(ins), max([1, *ndims])), -1, np.int64)
    for k, s in enumerate(ins):
        labels[k, :len(s)] = [ids[c] for c in s]
    out_labels = np.array([ids[c] for c in out], np.int64)
    dtypes = [as_dtype(op.dtype if isinstance(op, types.Array) else op) for op in operands]
    return labels, out_labels, len(ids), len(out), np.result_type(*dtypes).type


def _loop_order(ins, out):
    """The labels, outermost loop first: a label nearer the last axis of the operands
    and the output (a smaller stride) loops further in, so the innermost loop walks
    memory in order where it can.

    >>> _loop_order(("kij", "nkj"), "nki")
    ['k', 'n', 'i', 'j']
    """
    labels = list(dict.fromkeys("".join(ins) + out))

    def depth(label):
        return sum(len(s) - 1 - s.rindex(label) for s in (*ins, out) if label in s)

    return sorted(labels, key=depth, reverse=True)


@register_jitable
def _shaped(flat, shape_out, ndim, dtype):
    return flat.reshape(to_fixed_tuple(shape_out, ndim)).astype(dtype)


def _dot_plan(ins, out):
    """At typing time: how a two-operand einsum is a matrix product, or None.

    ``("dot", transpose a, transpose b, transpose the result)`` when one label is
    contracted, each operand has at most two distinct labels and the output is
    the other labels (``"ij,jk->ik"``, ``"ik,jk->ij"``, ``"i,ij->j"``, ``"i,i->"``);
    ``("outer", swapped)`` for ``"i,j->ij"`` (or ``"->ji"``).
    """
    if len(ins) != 2 or any(len(s) > 2 or len(set(s)) != len(s) for s in ins):
        return None
    first, second = ins
    shared = set(first) & set(second)
    if len(shared) > 1 or shared & set(out) or set(first) ^ set(second) != set(out):
        return None
    if not shared:
        ok = len(first) == len(second) == 1
        return ("outer", out == second + first) if ok else None
    (label,) = shared
    free = first.replace(label, "") + second.replace(label, "")
    return ("dot", first[0] == label and len(first) == 2,
            second[-1] == label and len(second) == 2, out != free)


@register_jitable
def _dot(a, b):
    return np.dot(as_float64(a), as_float64(b))


@register_jitable
def _dot_ta(a, b):
    return np.dot(as_float64(a).T, as_float64(b))


@register_jitable
def _dot_tb(a, b):
    return np.dot(as_float64(a), as_float64(b).T)


@register_jitable
def _dot_tt(a, b):
    return np.dot(as_float64(a).T, as_float64(b).T)


_PRODUCTS = {(False, False): _dot, (True, False): _dot_ta, (False, True): _dot_tb,
             (True, True): _dot_tt}


def _dot_impl(plan, ndim, dtype):
    """The Numba implementation of ``_dot_plan``'s product (BLAS through np.dot)."""
    if plan[0] == "outer":
        if plan[1]:
            return lambda subscripts, *ops: np.outer(as_float64(ops[1]),
                                                     as_float64(ops[0])).astype(dtype)
        return lambda subscripts, *ops: np.outer(as_float64(ops[0]),
                                                 as_float64(ops[1])).astype(dtype)
    _, flip_a, flip_b, flip_out = plan
    product = _PRODUCTS[flip_a, flip_b]
    if ndim == 0:
        return lambda subscripts, *ops: dtype(product(ops[0], ops[1]))
    if flip_out:
        return lambda subscripts, *ops: np.ascontiguousarray(
            product(ops[0], ops[1]).T).astype(dtype)
    if dtype is np.float64:
        return lambda subscripts, *ops: product(ops[0], ops[1])
    return lambda subscripts, *ops: product(ops[0], ops[1]).astype(dtype)


@overload(einsum, prefer_literal=True, strict=False)
def _ol_einsum(subscripts, *operands):
    labels, out_labels, nlabels, ndim, dtype = _tables(subscripts, operands, False)
    plan = _dot_plan(*parse_subscripts(subscripts.literal_value))
    if plan is not None and all(isinstance(op, types.Array) for op in operands):
        return _dot_impl(plan, ndim, dtype)
    free = np.full(ndim, -1, np.int64)
    if ndim == 0:
        def impl(subscripts, *operands):
            flats, shapes = _pack(operands)
            return dtype(_contract(flats, shapes, labels, out_labels, free, nlabels)[0][0])
        return impl

    def impl(subscripts, *operands):
        flats, shapes = _pack(operands)
        flat, shape_out = _contract(flats, shapes, labels, out_labels, free, nlabels)
        return _shaped(flat, shape_out, ndim, dtype)

    return impl


@overload(einsum_like, prefer_literal=True, strict=False)
def _ol_einsum_like(subscripts, like, *operands):
    labels, out_labels, nlabels, ndim, _ = _tables(subscripts, operands, True, like)
    if ndim == 0:
        raise TypingError("einsum_like: 'like' must be an array")

    def impl(subscripts, like, *operands):
        flats, shapes = _pack(operands)
        flat, shape_out = _contract(flats, shapes, labels, out_labels, _shape(like), nlabels)
        return flat.reshape(to_fixed_tuple(shape_out, ndim))

    return impl
