"""Derivative rules of ``scipy.special`` functions, as a table (notation as in
math_rules).

Each rule's forward calls a runtime helper (``rt.gammaln``...), in both paths:
Numba compiles no ``scipy.special`` function (numba-scipy 0.4.0, the latest,
requires scipy <= 1.11), so a call spelled ``scipy.special.<name>`` would need a
helper under Numba anyway, and generated modules need no SciPy import.  Called
from Python the helper runs SciPy itself; compiled, it runs the kernels of
:mod:`s2s_ad.runtime.special`, tested against SciPy.  The rule's name
(``spelled``: ``scipy.special.gammaln``) is what messages say.  The registry
imports this table once the user's code has imported ``scipy.special``
(``registry.load_library_tables``), so ``import s2s_ad`` does not pay for SciPy's.

Conventions:

- ``xlogy(x, y)`` (``x log(y)``, 0 where ``x == 0``): slope ``log(y)`` in ``x`` and
  ``x / y`` in ``y``; where ``x == 0`` the slope in ``y`` is 0 (the value is 0 for
  every ``y``), and at ``x == y == 0`` the slope in ``x`` is 0 (``xlogy(t, 0)`` is
  0 at ``t = 0`` and ``-inf`` for ``t > 0``: not differentiable).
- ``logsumexp(a, axis, keepdims)``: its slope is the softmax of ``a`` along the
  axes; ``b=`` and ``return_sign=True`` are refused (write ``logsumexp(a +
  np.log(b))`` for positive weights).
- ``softmax(x, axis)``: ``axis=None`` is over all of ``x``, as SciPy.
- ``gammaln`` at its poles (0 and the negative integers) is inf, its slope
  (``digamma``) there inf or NaN, as SciPy's values.
"""

from __future__ import annotations

import scipy.special as sps

from ..kinds import NUMERIC, ArrayKind
from ..runtime import special
from .reduction_rules import reduced_axes, reduced_kind
from .registry import NOT_CONSTANT, primitive, rt_name
from .result_kinds import floats
from .tangent_rules import SLICE_REDUCTIONS

_TWO_OVER_SQRT_PI = "1.1283791670955126"
_UNARY = {
    sps.gammaln: (special.gammaln, "g * rt.digamma(x)"),
    sps.digamma: (special.digamma, "g * rt.trigamma(x)"),
    sps.erf: (special.erf, f"g * {_TWO_OVER_SQRT_PI} * np.exp(-x * x)"),
    sps.erfc: (special.erfc, f"-g * {_TWO_OVER_SQRT_PI} * np.exp(-x * x)"),
    sps.expit: (special.expit, "g * z * (1.0 - z)"),
    sps.logit: (special.logit, "g / (x * (1.0 - x))"),
}
for _fn, (_helper, _adjoint) in _UNARY.items():
    primitive(_fn, ("x",), {"x": _adjoint}, forward=f"{rt_name(_helper)}(x)", kind=floats,
              elementwise=True)
primitive(sps.xlogy, ("x", "y"), {"x": "g * rt.xlogy_dx(x, y)", "y": "g * rt.xlogy_dy(x, y)"},
          forward="rt.xlogy(x, y)", kind=floats, elementwise=True)


def _constant_axis(name: str, consts: dict):
    axis = consts.get("axis")
    if axis is NOT_CONSTANT or consts.get("keepdims") is NOT_CONSTANT:
        raise ValueError(f"{name}: axis and keepdims must be constants (an int, a tuple of "
                         "ints or None, and True or False)")
    return axis


def _logsumexp_variant(consts: dict, kinds: dict) -> dict:
    """Along the last axis of the reduced axes moved back and merged."""
    name = "scipy.special.logsumexp"
    axis = _constant_axis(name, consts)
    if consts.get("b") is not None:
        raise ValueError(f"{name}: b= is not supported: for positive weights write "
                         "logsumexp(a + np.log(b))")
    if consts.get("return_sign") is not False:
        raise ValueError(f"{name}: return_sign=True is not supported")
    if kinds.get("x") in NUMERIC:
        return {"forward": "x + 0.0", "adjoints": {"x": "g"}}
    axes = reduced_axes(name, axis, kinds.get("x"))
    merged = f"rt.axes_last(x, {axes!r})"
    forward = f"rt.logsumexp_last({merged})"
    if consts.get("keepdims"):
        forward = f"rt.axes_kept({forward}, x, {axes!r})"
    return {"forward": forward,
            "adjoints": {"x": f"rt.axes_back(rt.logsumexp_last_vjp(g, {merged}), x, {axes!r})"}}


SLICE_REDUCTIONS.add(sps.logsumexp)  # forward mode: a reduction of its slices
primitive(sps.logsumexp, ("x", "axis", "b", "keepdims", "return_sign"), {"x": "g"},
          defaults={"axis": None, "b": None, "keepdims": False, "return_sign": False},
          kind=reduced_kind(1, 3), variant=_logsumexp_variant)


def _softmax_variant(consts: dict, kinds: dict) -> dict:
    name = "scipy.special.softmax"
    axis = _constant_axis(name, consts)
    if kinds.get("x") in NUMERIC:  # the softmax of one number is 1
        return {"forward": "0.0 * x + 1.0", "adjoints": {"x": "0.0 * g"},
                "tangent": {"x": "0.0 * g"}}
    axes = reduced_axes(name, axis, kinds.get("x"))
    merged = f"rt.axes_last(x, {axes!r})"
    # the Jacobian diag(s) - s s^T is symmetric: the tangent is the pullback of t
    pullback = (f"rt.axes_back(rt.softmax_last_vjp(rt.axes_last(g, {axes!r}), {merged}), x, "
                f"{axes!r})")
    return {"forward": f"rt.axes_back(rt.softmax_last({merged}), x, {axes!r})",
            "adjoints": {"x": pullback}, "tangent": {"x": pullback}}


primitive(sps.softmax, ("x", "axis"), {"x": "g"},
          defaults={"axis": None},
          kind=lambda k, o: k[0] if isinstance(k[0], ArrayKind) else "float",
          variant=_softmax_variant)
