"""Rules of the runtime helpers generated gradient code calls, so that forward mode
can transform that code again (Hessian-vector products: forward over reverse).

Four kinds of helper, one table each:

- ``LINEAR_IN``: linear in the operands named (each on its own, as a product is),
  and in the others either reading only a shape or constant between the points
  where it jumps (the masks of ``max`` and ``min``): the tangent is the call with
  each of those operands in turn replaced by its tangent.
- ``JOINTLY_LINEAR_IN``: the accumulations, linear in all their cotangent operands
  at once (an empty "no cotangent yet" operand takes the other's place).
- ``SLOPES``: the primal pieces with a tangent template of their own (the
  reductions gradient code computes with its helpers, and the scalar pieces of the
  adjoint templates such as ``pow_slope``), in the adjoints' notation (``g`` the
  tangent, ``z`` the result).
- ``IN_PLACE``: helpers that add an operand into their first one in place
  (``scatter_add``); forward mode repeats the call on the tangents.

``FLAT`` lists the pieces whose derivative is zero where it exists.

Reverse mode through them (a gradient of a gradient by reverse mode) is not
supported: their reverse step (set by the compiler's ``reverse/gradient_code.py``)
raises, and the entry points of reverse mode refuse generated code before anything
runs.

>>> from s2s_ad import runtime
>>> from s2s_ad.rules import lookup
>>> lookup(runtime.accumulate, 2).params
('cotangent', 'contribution')
"""

from __future__ import annotations

from s2s_ad import runtime
from s2s_ad.kinds import ArrayKind, ListKind
from s2s_ad.runtime import reduction_tangents, reductions

from .registry import BY_REVERSE_PASS, primitive, refuse, rt_name
from .result_kinds import floats, joined, ndim, same


def _float_array_of(position: int):
    """The kind of a float array of the dimensions of operand ``position``."""

    def kind(kinds: list, operands: list):
        return ArrayKind(ndim(kinds[position]))

    return kind


def _float_like_first(kinds: list, operands: list):
    """A float array like the first operand, or a float for a number."""
    return ArrayKind(ndim(kinds[0])) if isinstance(kinds[0], ArrayKind) else "float"


def _reduced(keepdims: bool):
    """The kind of a reduction of operand 0 along one axis."""

    def kind(kinds: list, operands: list):
        n = ndim(kinds[0]) - (0 if keepdims else 1)
        return ArrayKind(n) if n > 0 else "float"

    return kind


def _merged_axes(kinds: list, operands: list):
    """``axes_last(x, axes)`` and ``last_kept(g, x, axes)``: the kept axes of ``x`` and
    one for the merged ones."""
    axes = kinds[-1]
    return ArrayKind(ndim(kinds[-2]) - (len(axes) if isinstance(axes, tuple) else 1) + 1)


def _traced(kinds: list, operands: list):
    """``trace_axes(x, ...)``: ``x`` without its two traced axes (a number for 2-D)."""
    n = ndim(kinds[0]) - 2
    return ArrayKind(n) if n > 0 else "float"


def _gathered(kinds: list, operands: list):
    """``d[index]`` for an index array (a boolean mask takes its own dimensions)."""
    d, index = ndim(kinds[0]), kinds[1]
    if getattr(index, "boolean", False):  # a mask takes as many dimensions as it has
        return ArrayKind(d - ndim(index) + 1)
    return ArrayKind(d - 1 + ndim(index))


def _float_items(kinds: list, operands: list):
    """A cotangent like operand 0, a tuple or an array: floats item by item."""
    like = kinds[0]
    if isinstance(like, tuple):
        return tuple(ArrayKind(ndim(k)) if isinstance(k, ArrayKind) else "float" for k in like)
    return ArrayKind(ndim(like))


def _taken(kinds: list, operands: list):
    """``take_axis(a, indices, axis)``: ``a``'s axis replaced by the indices' axes."""
    return ArrayKind(ndim(kinds[0]) - 1 + ndim(kinds[1]))


def _largest(kinds: list, operands: list):
    """``sum_items(t)`` of a tuple of arrays: the sum broadcasts to the largest."""
    return ArrayKind(max(ndim(k) for k in kinds[0]))


def _merged_leading(kinds: list, operands: list):
    """``merge_leading(a)``: ``a`` with its first two axes as one."""
    a = kinds[0]
    if not isinstance(a, ArrayKind) or a.ndim is None:
        return a
    return ArrayKind(a.ndim - 1, a.floating, a.boolean)


def _a_number(kinds: list, operands: list):
    return "float"


def _shaped_by(position: int):
    """An array like operand 0 with the dimensions of the shape at ``position``
    (``reshape(x, shape)``, ``block_read(block, at, shape)``)."""

    def kind(kinds: list, operands: list):
        shape = kinds[position]
        return ArrayKind(len(shape) if isinstance(shape, tuple) else 1,
                         floating=getattr(kinds[0], "floating", True))

    return kind


_LINEAR_ROWS = (reductions.SUM, reductions.MEAN)  # linear in x
_MASK_ROWS = (reductions.MAX, reductions.MIN)  # pullbacks: masks of x, linear in g
_SLICE_ROWS = (reductions.MAX, reductions.MIN, reductions.PROD, reductions.NORM)

#: helper -> (parameters, the operands it is linear in, each on its own; result kind)
LINEAR_IN = {
    runtime.materialize: (("cotangent", "like"), ("cotangent",), same),
    runtime.as_float64: (("a",), ("a",), _float_like_first),
    runtime.unbroadcast_to_shape: (("c", "shape"), ("c",), same),
    runtime.unbroadcast_scalar: (("c",), ("c",), _a_number),
    runtime.broadcast_tangent: (("tangent", "like"), ("tangent",), _float_array_of(1)),
    runtime.grow: (("tape", "position"), ("tape",), same),
    runtime.reshape: (("x", "shape"), ("x",), _shaped_by(1)),
    runtime.block_read: (("block", "at", "shape"), ("block",), _shaped_by(2)),
    runtime.reshape_like: (("g", "x"), ("g",), _float_array_of(1)),
    # np.hstack of an array's rows (stack_rules' forward): its first two axes merged
    runtime.merge_leading: (("a",), ("a",), _merged_leading),
    runtime.reverse_cumsum: (("g", "axis"), ("g",), _float_like_first),
    # sort's pullback scatters g through x's argsort, constant between ties
    runtime.sort_vjp: (("g", "x", "axis"), ("g",), _float_array_of(1)),
    runtime.axes_last: (("x", "axes"), ("x",), _merged_axes),
    runtime.axes_back: (("g2", "x", "axes"), ("g2",), _float_array_of(1)),
    runtime.axes_kept: (("z", "x", "axes"), ("z",), _float_array_of(1)),
    runtime.last_kept: (("g", "x", "axes"), ("g",), _merged_axes),
    runtime.diff_axis: (("x", "n", "axis"), ("x",), same),
    runtime.written_items: (("d", "index"), ("d",), _gathered),
    # the forms and pullbacks of the rearrangements: each entry of the result is one
    # entry of the operand (or a sum of some), at positions that depend on no value
    # but x's order for partition (constant between ties)
    runtime.slice_axis: (("x", "axis", "start", "stop"), ("x",), same),
    runtime.index_axis: (("x", "axis", "i"), ("x",), _reduced(False)),
    runtime.diagonal_last: (("x", "offset"), ("x",), _reduced(False)),
    runtime.roll_axis: (("x", "shift", "axis"), ("x",), same),
    runtime.take_axis: (("a", "indices", "axis"), ("a",), _taken),
    runtime.take_vjp: (("g", "a", "indices"), ("g",), _float_array_of(1)),
    runtime.take_vjp_axis: (("g", "a", "indices", "axis"), ("g",), _float_array_of(1)),
    runtime.gather_vjp: (("g", "x", "where"), ("g",), _float_array_of(1)),
    runtime.repeat_axis: (("x", "repeats", "axis"), ("x",), same),
    runtime.repeat_vjp_axis: (("g", "x", "repeats", "axis"), ("g",), _float_array_of(1)),
    runtime.pad_axis: (("x", "axis", "before", "after", "mode"), ("x",), same),
    runtime.pad_vjp_axis: (("g", "axis", "before", "after", "mode"), ("g",), same),
    runtime.section_vjp: (("g", "x", "sections", "i", "axis", "equal"), ("g",),
                          _float_array_of(1)),
    runtime.partition_vjp: (("g", "x", "z", "axis"), ("g",), _float_array_of(1)),
    runtime.masked: (("x", "mask"), ("x",), _gathered),
    runtime.zero_d_item: (("x",), ("x",), _a_number),
    runtime.number_as_float: (("x",), ("x",), _a_number),  # a number as a Python float
    runtime.filled: (("shape", "x"), ("x",), _shaped_by(0)),
    runtime.sum_items: (("t",), ("t",), _largest),
    # the cotangents of the builtins sum, max and min of a tuple: g in every item, or at
    # the first largest (smallest) item, a position constant between ties
    runtime.fill_like: (("t", "g"), ("g",), _float_items),
    runtime.at_max: (("t", "g"), ("g",), _float_items),
    runtime.at_min: (("t", "g"), ("g",), _float_items),
    runtime.diff_vjp: (("g", "x", "n", "axis"), ("g",), _float_array_of(1)),
    runtime.trace_axes: (("x", "offset", "axis1", "axis2"), ("x",), _traced),
    runtime.trace_vjp: (("g", "x", "offset", "axis1", "axis2"), ("g",), _float_array_of(1)),
    # the pullbacks of sum and mean read only x's shape; those of max and min a mask of
    # x, constant between ties (norm's and prod's move with x: SLOPES)
    **{row.vjp_all: (("g", "x"), ("g",), _float_array_of(1))
       for row in (*_LINEAR_ROWS, *_MASK_ROWS)},
    **{helper: (("g", "x", "axis"), ("g",), _float_array_of(1))
       for row in (*_LINEAR_ROWS, *_MASK_ROWS)
       for helper in (row.vjp_axis, row.vjp_axis_keepdims)},
    **{row.axis: (("x", "axis"), ("x",), _reduced(False)) for row in _LINEAR_ROWS},
    **{row.axis_keepdims: (("x", "axis"), ("x",), _reduced(True)) for row in _LINEAR_ROWS},
    **{row.whole: (("x",), ("x",), _float_array_of(0)) for row in _LINEAR_ROWS},
}

#: helper -> (parameters, the operands it is linear in together, result kind)
JOINTLY_LINEAR_IN = {
    runtime.accumulate: (("cotangent", "contribution"), ("cotangent", "contribution"), same),
    runtime.accumulate_to_shape: (("cotangent", "contribution", "shape"),
                                  ("cotangent", "contribution"), same),
    # a tape of array values: the tangent tape grows exactly as the tape does
    runtime.block_push: (("block", "at", "value", "expected"), ("block", "value"), same),
    # the cotangents of growing lists: the tangent list goes through the same steps
    runtime.list_pop: (("cotangent", "n", "zero"), ("cotangent", "zero"),
                       lambda kinds, operands: kinds[2]),
    runtime.list_add_at: (("cotangent", "position", "g", "zero"), ("cotangent", "g", "zero"),
                          same),
    runtime.list_add_rows: (("cotangent", "g", "zero"), ("cotangent", "g", "zero"), same),
    runtime.list_add_pieces: (("cotangent", "g", "extents", "axis", "zero"),
                              ("cotangent", "g", "zero"), same),
    # the cotangent of a tuple: v added into item i, or item by item
    runtime.add_at: (("t", "i", "v"), ("t", "v"), same),
    runtime.plus: (("x", "v"), ("x", "v"), same),
}


def _slice_reductions(row) -> dict:
    """The tangents of a reduction whose value on a slice depends on that slice only
    (max, min, prod, norm): the pullback's weights times the tangent, summed as the
    reduction sums (the pullback's convention at ties)."""
    sums, keeps = rt_name(reductions.SUM.axis), rt_name(reductions.SUM.axis_keepdims)
    whole = rt_name(reductions.SUM.whole) if row is not reductions.NORM else "np.sum"
    weights, kept, everything = (rt_name(row.vjp_axis), rt_name(row.vjp_axis_keepdims),
                                 rt_name(row.vjp_all))
    return {
        row.axis: (("x", "axis"), {"x": f"{sums}({weights}(1.0 + 0.0 * z, x, axis) * g, "
                                        "axis)"}, _reduced(False)),
        row.axis_keepdims: (("x", "axis"), {"x": f"{keeps}({kept}(1.0 + 0.0 * z, x, axis) "
                                                 "* g, axis)"}, _reduced(True)),
        row.whole: (("x",), {"x": f"{whole}({everything}(1.0, x) * g)"},
                    _a_number if row is reductions.NORM else _float_array_of(0)),
    }


def _moving_pullbacks(row, tangents) -> dict:
    """The pullbacks of prod and norm: linear in the cotangent ``c``, and moving with
    ``x`` as ``reduction_tangents`` computes."""
    return {
        row.vjp_axis: (("c", "x", "axis"), {"c": f"{rt_name(row.vjp_axis)}(g, x, axis)",
                                            "x": f"{rt_name(tangents[0])}(c, x, g, axis)"},
                       _float_array_of(1)),
        row.vjp_axis_keepdims: (("c", "x", "axis"), {
            "c": f"{rt_name(row.vjp_axis_keepdims)}(g, x, axis)",
            "x": f"{rt_name(tangents[1])}(c, x, g, axis)"}, _float_array_of(1)),
        row.vjp_all: (("c", "x"), {"c": f"{rt_name(row.vjp_all)}(g, x)",
                                   "x": f"{rt_name(tangents[2])}(c, x, g)"},
                      _float_array_of(1)),
    }


_MOVING = {reductions.PROD: reduction_tangents.PROD_TANGENTS,
           reductions.NORM: reduction_tangents.NORM_TANGENTS}

#: helper -> (parameters, {parameter: tangent template}, result kind)
SLOPES = {
    **{helper: entry for row in _SLICE_ROWS for helper, entry in _slice_reductions(row).items()},
    **{helper: entry for row, tangents in _MOVING.items()
       for helper, entry in _moving_pullbacks(row, tangents).items()},
    runtime.log_or_zero: (("a",), {"a": "g / a"}, floats),
    runtime.pow_slope: (("a", "b"), {"a": "g * rt.pow_curvature(a, b)",
                                     "b": "g * a ** (b - 1.0) * (1.0 + b * rt.log_or_zero(a))"},
                        floats),
    runtime.cbrt: (("x",), {"x": "g / (3.0 * z * z)"}, floats),
    runtime.fmod: (("x", "y"), {"x": "g", "y": "-g * np.trunc(x / y)"}, floats),
}

#: The scalar pieces of adjoint templates among ``SLOPES`` (reverse mode goes through
#: them too: a derivative called inside differentiated code, ``gradient_calls``).
SCALAR_PIECES = (runtime.log_or_zero, runtime.pow_slope, runtime.cbrt, runtime.fmod)

#: Pieces of the adjoint templates whose derivative is zero where it exists.
FLAT = {runtime.sign: (("x",), joined), runtime.heaviside: (("x", "at_zero"), joined),
        runtime.int_pow: (("a", "b"), _a_number),
        runtime.range_length: (("start", "stop", "step"), lambda kinds, operands: "int"),
        # a new, empty list for the cotangents of a list's items (forward mode gives the
        # tangent a list of its own, which the helpers above fill in step)
        runtime.cotangent_list: (("like",), lambda kinds, operands: ListKind(kinds[0])),
        # the lengths of a list's items along a join's axis (ints: no tangent)
        runtime.list_extents: (("items", "axis"),
                               lambda kinds, operands: ArrayKind(1, floating=False))}

#: the list helpers of ``JOINTLY_LINEAR_IN`` that also change their first operand (a list)
#: in place: called for that effect alone, their tangent is the same call on the tangents
CHANGES_FIRST = (runtime.list_pop, runtime.list_add_at, runtime.list_add_rows,
                 runtime.list_add_pieces)

#: helper -> (parameters, the operand it adds into its first one, in place): linear in
#: the two together (forward mode: ``compiler/tangent_in_place.py``)
IN_PLACE = {runtime.scatter_add: (("d", "index", "g"), "g")}

LINEAR_HELPERS = set(LINEAR_IN)
JOINTLY_LINEAR_HELPERS = set(JOINTLY_LINEAR_IN)
#: Every helper function with a rule here (tests check each is used and right).
HELPERS = LINEAR_HELPERS | JOINTLY_LINEAR_HELPERS | set(SLOPES) | set(FLAT) | set(IN_PLACE)


def _register() -> None:
    for helper, (params, linear, kind) in {**LINEAR_IN, **JOINTLY_LINEAR_IN}.items():
        primitive(helper, params, dict.fromkeys(linear, BY_REVERSE_PASS), kind=kind)
    for helper, (params, tangent, kind) in SLOPES.items():
        # a scalar piece's 1x1 Jacobian is its own transpose: its tangent is its adjoint
        scalar = helper in SCALAR_PIECES
        adjoints = dict(tangent) if scalar else dict.fromkeys(tangent, BY_REVERSE_PASS)
        primitive(helper, params, adjoints, kind=kind, tangent=tangent, elementwise=scalar)
    for helper, (params, kind) in FLAT.items():
        primitive(helper, params, kind=kind)
    for helper, (params, added) in IN_PLACE.items():
        primitive(helper, params, dict.fromkeys((params[0], added), BY_REVERSE_PASS),
                  kind=lambda kinds, operands: "none")


_register()

# A with_derivative hook runs on a cotangent, which forward mode over gradient code has
# no tangent rule for (the hook is any Python function): refused, as forward mode does.
refuse(runtime.run_hook, "a with_derivative hook cannot be differentiated again: second "
       "derivatives through it are not supported (forward mode has no cotangent for "
       "the hook)", "take second derivatives of a version without the hook")
for _given in (runtime.given_cotangents, runtime.given_cotangent):
    refuse(_given, "a registered derivative (@ad.derivative, ad.differentiable_function) "
           "cannot be differentiated again: second derivatives through it are not "
           "supported yet", "take second derivatives of a version that calls the "
           "function itself, not its registered derivative")
