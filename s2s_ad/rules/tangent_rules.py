"""Tangent (JVP) rules: how forward mode carries a tangent through each primitive.

Forward mode needs, for ``z = f(a, b, ...)``, the tangent of ``z`` from the tangents
of the operands.  Three sources, tried in order (:func:`tangent_form`):

1. an explicit template in the rule's ``tangent`` slot (``TANGENTS`` below), in
   the notation of the adjoints with ``t`` the operand's tangent (``z`` the result);
2. for a rule whose Jacobian is diagonal -- element-wise functions, and any rule of
   scalars -- the adjoint template itself with ``g`` read as ``t``: a diagonal
   Jacobian is its own transpose;
3. for a rule linear in an operand (``LINEAR``: sums, reshapes, products, indexing),
   the call itself with that operand replaced by its tangent.

A rule with none of these has no tangent yet: forward mode through it is refused
with a message naming it.

>>> import numpy as np
>>> from s2s_ad.rules import lookup
>>> tangent_form(lookup(np.sin, 1), "x", False, np.sin)
('template', 'g * np.cos(x)')
>>> tangent_form(lookup(np.sum, 1), "x", False, np.sum)
('linear', None)
>>> tangent_form(lookup(np.linalg.inv, 1), "A", False, np.linalg.inv)
('template', '-np.dot(np.dot(z, g), z)')
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import runtime
from .registry import BY_REVERSE_PASS, Rule
from .runtime_rules import JOINTLY_LINEAR_HELPERS, LINEAR_HELPERS
from .stack_rules import STACKS

#: Functions linear in each of their (differentiable) operands: the tangent of
#: ``f(a, b)`` is ``f(t_a, b) + f(a, t_b)``.
LINEAR = {
    np.sum, np.mean, np.cumsum, np.reshape, np.ravel, np.transpose, np.copy, np.concatenate,
    np.stack, np.take, np.array, np.dot, np.matmul, np.outer, np.einsum, *STACKS,
    np.dstack, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.float64,
    runtime.astype_float, runtime.list_array, runtime.list_concatenate,
    runtime.list_hstack, runtime.list_vstack, builtins.float,
    builtins.sum, math.fsum,
}

#: Functions linear in all their operands at once, not in each: the tangent of
#: ``np.append(a, b)`` is ``np.append(t_a, t_b)`` (a zero for an operand without one).
JOINTLY_LINEAR = {np.append, np.linspace, np.select} | JOINTLY_LINEAR_HELPERS

#: Operators linear in each operand (``a @ b``), by the rule's emitted name.
LINEAR_OPERATORS = {"@"}

#: Reductions along an axis whose output depends only on its own slice (max, min, prod,
#: norms): ``J t = sum(J^T(ones) * t)`` over the reduced axes, with the pullback's own
#: convention at ties, so forward and reverse mode agree everywhere.
SLICE_REDUCTIONS = {np.max, np.min, np.amax, np.amin, np.prod, np.linalg.norm, np.var, np.std}

#: Explicit tangent templates, ``{function: {parameter: template}}`` (``g`` is the
#: operand's tangent, as in the adjoint templates, so one notation serves both).
TANGENTS = {
    np.linalg.inv: {"A": "-np.dot(np.dot(z, g), z)"},
    np.linalg.det: {"A": "z * np.trace(np.linalg.solve(A, g))"},
    np.linalg.solve: {"A": "-np.linalg.solve(A, np.dot(g, z))", "b": "np.linalg.solve(A, g)"},
    np.linalg.cholesky: {"a": "rt.cholesky_tangent(g, z)"},
    # the sign is piecewise constant; d log|det a| = trace(a^-1 t)
    np.linalg.slogdet: {"a": "(0.0 * z[0], np.trace(np.linalg.solve(a, g)))"},
    # max(t) and min(t) of a tuple: the tangent of the first extreme item (the pullback's
    # rt.at_max / rt.at_min convention at ties)
    builtins.max: {"t": "np.asarray(g)[np.argmax(np.asarray(t))]"},
    builtins.min: {"t": "np.asarray(g)[np.argmin(np.asarray(t))]"},
}
#: The matrix functions of ``TANGENTS``: their templates are of one matrix (a stack is
#: refused in forward mode).
MATRIX_TANGENTS = {np.linalg.inv, np.linalg.det, np.linalg.solve, np.linalg.cholesky,
                   np.linalg.slogdet}  # and SciPy's (scipy_linalg_rules, loaded with SciPy)


def _optional_linear() -> set:
    """Functions that are linear but may not be in every NumPy version (``np.pad``
    without ``constant_values``, the only form its rule takes, pads with zeros)."""
    names = ("row_stack", "trace", "diagonal", "diff", "flip", "roll", "squeeze",
             "expand_dims", "swapaxes", "moveaxis", "broadcast_to", "tile", "repeat",
             "tensordot", "inner", "kron", "vdot", "real", "conj", "conjugate", "tril", "triu",
             "diag", "rot90", "flipud", "fliplr", "rollaxis", "cumsum", "pad")
    helpers = ("section",)  # a piece of np.split and its kin
    return {getattr(np, n) for n in names if hasattr(np, n)} | {
        getattr(runtime, n) for n in helpers if hasattr(runtime, n)}


LINEAR |= _optional_linear() | LINEAR_HELPERS


def tangent_form(rule: Rule, param: str, scalars: bool, callee=None) -> tuple[str, str | None]:
    """How forward mode computes the tangent contribution of ``param`` of ``rule``:
    ``("template", text)`` (``g`` standing for the tangent), ``("linear", None)`` (the
    call with the operand replaced by its tangent), ``("jointly linear", None)`` (the call
    with every operand replaced by its tangent), ``("reduction", text)`` (``text``
    the adjoint template: see ``SLICE_REDUCTIONS``) or ``("none", None)``.

    ``scalars``: every operand and the result are numbers (a 1x1 Jacobian).
    """
    if rule.tangent and param in rule.tangent:
        return "template", rule.tangent[param]
    if callee is not None and callee in TANGENTS and param in TANGENTS[callee]:
        return "template", TANGENTS[callee][param]
    if (rule.elementwise or scalars) and rule.adjoints.get(param, BY_REVERSE_PASS) != \
            BY_REVERSE_PASS:
        return "template", rule.adjoints[param]
    if (callee is not None and callee in LINEAR) or rule.emit in LINEAR_OPERATORS:
        return "linear", None
    if callee is not None and callee in JOINTLY_LINEAR:
        return "jointly linear", None
    if callee is not None and callee in SLICE_REDUCTIONS and param in rule.adjoints:
        return "reduction", rule.adjoints[param]
    return "none", None

