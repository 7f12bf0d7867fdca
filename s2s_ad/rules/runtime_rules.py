"""Rules of the runtime helpers generated gradient code calls, so that forward mode
can transform that code again (Hessian-vector products: forward over reverse).

Three kinds of helper, one table each:

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
from s2s_ad.kinds import ArrayKind

from .registry import BY_REVERSE_PASS, primitive
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


_VJP = {"_vjp_all": (("g", "x"), _float_array_of(1)),
        "_vjp_all_keepdims": (("g", "x"), _float_array_of(1)),
        "_vjp_axis": (("g", "x", "axis"), _float_array_of(1)),
        "_vjp_axis_keepdims": (("g", "x", "axis"), _float_array_of(1))}
_LINEAR_REDUCTIONS = {"_axis": (("x", "axis"), _reduced(False)),
                      "_axis_keepdims": (("x", "axis"), _reduced(True)),
                      "_all_keepdims": (("x",), _float_array_of(0))}

#: helper -> (parameters, the operands it is linear in, each on its own; result kind)
LINEAR_IN = {
    "materialize": (("cotangent", "like"), ("cotangent",), same),
    "as_float64": (("a",), ("a",), _float_like_first),
    "unbroadcast_to_shape": (("c", "shape"), ("c",), same),
    "unbroadcast_scalar": (("c",), ("c",), _a_number),
    "broadcast_tangent": (("tangent", "like"), ("tangent",), _float_array_of(1)),
    "grow": (("tape", "position"), ("tape",), same),
    "reshape": (("x", "shape"), ("x",), _shaped_by(1)),
    "block_read": (("block", "at", "shape"), ("block",), _shaped_by(2)),
    "reshape_like": (("g", "x"), ("g",), _float_array_of(1)),
    # the pullbacks of sum and mean read only x's shape; those of max and min a mask of
    # x, constant between ties (norm's and prod's are not linear in g alone: no rule)
    **{f"{r}{form}": (params, ("g",), kind) for r in ("sum", "mean", "max", "min")
       for form, (params, kind) in _VJP.items() if hasattr(runtime, f"{r}{form}")},
    **{f"{r}{form}": (params, ("x",), kind) for r in ("sum", "mean")
       for form, (params, kind) in _LINEAR_REDUCTIONS.items()},
}

#: helper -> (parameters, the operands it is linear in together, result kind)
JOINTLY_LINEAR_IN = {
    "accumulate": (("cotangent", "contribution"), ("cotangent", "contribution"), same),
    "accumulate_to_shape": (("cotangent", "contribution", "shape"),
                            ("cotangent", "contribution"), same),
    # a tape of array values: the tangent tape grows exactly as the tape does
    "block_push": (("block", "at", "value", "expected"), ("block", "value"), same),
}


def _slice_reduction(r: str, form: str) -> str:
    """``J t`` of the reduction ``r`` in ``form``: its pullback's weights times the
    tangent, summed as the reduction sums (the pullback's convention at ties)."""
    if form == "_all_keepdims":
        return f"rt.sum_all_keepdims(rt.{r}_vjp_all(1.0, x) * g)"
    if form == "_all":
        return f"np.sum(rt.{r}_vjp_all(1.0, x) * g)"
    return f"rt.sum{form}(rt.{r}_vjp{form}(1.0 + 0.0 * z, x, axis) * g, axis)"


#: helper -> (parameters, {parameter: tangent template}, result kind)
SLOPES = {
    **{f"{r}{form}": (params, {"x": _slice_reduction(r, form)}, kind)
       for r in ("max", "min", "prod", "norm")
       for form, (params, kind) in {**_LINEAR_REDUCTIONS,
                                    "_all": (("x",), _a_number)}.items()
       if hasattr(runtime, f"{r}{form}")},
    "log_or_zero": (("a",), {"a": "g / a"}, floats),
    "pow_slope": (("a", "b"), {"a": "g * b * rt.pow_slope(a, b - 1.0)",
                               "b": "g * a ** (b - 1.0) * (1.0 + b * rt.log_or_zero(a))"},
                  floats),
    "cbrt": (("x",), {"x": "g / (3.0 * z * z)"}, floats),
    "fmod": (("x", "y"), {"x": "g", "y": "-g * np.trunc(x / y)"}, floats),
}

#: The scalar pieces of adjoint templates among ``SLOPES`` (reverse mode goes through
#: them too: a derivative called inside differentiated code, ``gradient_calls``).
SCALAR_PIECES = ("log_or_zero", "pow_slope", "cbrt", "fmod")

#: Pieces of the adjoint templates whose derivative is zero where it exists.
FLAT = {"sign": (("x",), joined), "heaviside": (("x", "at_zero"), joined),
        "int_pow": (("a", "b"), _a_number),
        "range_length": (("start", "stop", "step"), lambda kinds, operands: "int")}

LINEAR_HELPERS = {getattr(runtime, name) for name in LINEAR_IN}
JOINTLY_LINEAR_HELPERS = {getattr(runtime, name) for name in JOINTLY_LINEAR_IN}
#: Every helper function with a rule here (tests check each is used and right).
HELPERS = LINEAR_HELPERS | JOINTLY_LINEAR_HELPERS | {
    getattr(runtime, name) for name in (*SLOPES, *FLAT) if hasattr(runtime, name)}


def _register() -> None:
    for name, (params, linear, kind) in {**LINEAR_IN, **JOINTLY_LINEAR_IN}.items():
        primitive(getattr(runtime, name), params, dict.fromkeys(linear, BY_REVERSE_PASS),
                  kind=kind, name=f"rt.{name}")
    for name, (params, tangent, kind) in SLOPES.items():
        # a scalar piece's 1x1 Jacobian is its own transpose: its tangent is its adjoint
        adjoints = dict(tangent) if name in SCALAR_PIECES else dict.fromkeys(tangent,
                                                                            BY_REVERSE_PASS)
        primitive(getattr(runtime, name), params, adjoints, kind=kind, tangent=tangent,
                  name=f"rt.{name}", elementwise=name in SCALAR_PIECES)
    for name, (params, kind) in FLAT.items():
        if hasattr(runtime, name):
            primitive(getattr(runtime, name), params, kind=kind, name=f"rt.{name}")


_register()
