"""The reverse stages, part: ``run_kernel`` calls, primitives with a registered gradient.

``y = run_kernel("conv2d", x, w, strides=s, padding="same")`` becomes::

    y = conv2d_kernel_1a2b3c(x, w, strides=s, padding='same')       # forward
    ...
    y_cotangents = conv2d_gradient_4d5e6f(d_y, (x, w), strides=s, padding='same')
    d_x = d_x + y_cotangents[0]                                       # pullback
    d_w = d_w + y_cotangents[1]

The forward keeps the inputs the gradient registered to save (and the output
if asked), and the attributes.  The kernel is bound to a
:class:`~s2s_ad.kernels.registry.KernelOp`: in Python it runs the active
backend's kernel, in compiled code the "numba" backend's (see
``linking``).  The bound names end in a fingerprint of the functions they
name, so code bound to another kernel or gradient is another module.
"""

from __future__ import annotations

from typing import Any

import gast

from s2s_ad.compiler.kernel_ops import kernel_name
from s2s_ad.compiler.primitives import Primitive
from s2s_ad.compiler.reverse import arrays, saving
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.builders import (
    assign,
    call,
    call_node,
    const,
    keyword,
    load,
    subscript_of,
    tuple_of,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kernels.gradients import Gradient, gradient_of
from s2s_ad.kernels.registry import backends_of, kernel_op
from s2s_ad.kinds import ArrayKind


def _name(cx: Context, call: gast.Call) -> str:
    """The kernel's name, or a located error when the call names none that exists."""
    name = kernel_name(call)
    loc = cx.norm.parsed.location(call)
    if name is None:
        raise NonDifferentiableError(
            "run_kernel needs the kernel's name as a string constant first argument", loc,
            "write run_kernel(\"name\", *inputs, **attrs)")
    if not backends_of(name):
        raise NonDifferentiableError(
            f"kernel '{name}' is not registered for any backend", loc,
            f"register it with ad.register_kernel('{name}', backend, fn) first")
    return name


def bind(cx: Context, obj: Any, base: str) -> str:
    """A name in the generated module bound to ``obj`` (one per object)."""
    for name, known in cx.externals.items():
        if known is obj:
            return name
    name = cx.namer.fresh(base)
    cx.externals[name] = obj
    return name


def _kernel_call(cx: Context, call: gast.Call, name: str) -> gast.Call:
    op = kernel_op(name)
    func = bind(cx, op, f"{name}_kernel_{op.fingerprint()}")
    return call_node(load(func), list(call.args[1:]), list(call.keywords))


def primal_kernel_call(cx: Context, call: gast.Call) -> gast.Call:
    """The forward value of a ``run_kernel`` call: the bound kernel op called."""
    return _kernel_call(cx, call, _name(cx, call))


def _gradient(cx: Context, call: gast.Call, name: str) -> Gradient:
    grad = gradient_of(name)
    if grad is None:
        raise NonDifferentiableError(
            f"kernel '{name}' has no registered gradient", cx.norm.parsed.location(call),
            f"register one with ad.register_gradient('{name}', grad_fn), or mark the value "
            "with ad.without_derivative(...)")
    return grad


def _checkable(cx: Context, atom: gast.expr) -> bool:
    """Whether the cotangent given for ``atom`` is checked (a number or an array input;
    tuples and structures pass as they are)."""
    kind = cx.kind(atom)
    return isinstance(kind, ArrayKind) or kind == "float"


def given_contributions(cx: Context, grads: str, inputs: list[gast.expr], label: str,
                        kept) -> list[gast.stmt]:
    """``d_input += cotangent`` for each active input, from ``grads``, what a registered
    gradient or derivative returned: one cotangent per input as a tuple or list (for one
    input also the cotangent itself), ``None`` for none; the count and each cotangent's
    shape are checked at run time (``rt.given_cotangents``, ``rt.given_cotangent``), an
    error naming ``label``.  ``kept(atom, reference)`` saves an input for the pullback."""
    out: list[gast.stmt] = []
    checked = len(inputs) > 1 or all(_checkable(cx, a) for a in inputs)
    if checked:
        out.append(assign(grads, call("rt.given_cotangents", load(grads), const(len(inputs)),
                                      const(label)), cx.line))
    for pos, atom in enumerate(inputs):
        if not cx.active(atom):
            continue
        part = subscript_of(load(grads), pos) if checked else load(grads)
        if _checkable(cx, atom):
            part = call("rt.given_cotangent", part, kept(atom, True), const(label), const(pos))
        out += cx.accumulate(atom.id, cx.kind(atom), part)
    return out


def call_kernel(cx: Context, s: gast.Assign, target: str, prim: Primitive, where: Where):
    """Forward and adjoint statements of ``target = run_kernel(name, *inputs, **attrs)``."""
    call = s.value
    name = _name(cx, call)
    grad = _gradient(cx, call, name)
    inputs = prim.operands
    try:
        positions = grad.saved_positions(len(inputs))
    except ValueError as exc:
        raise NonDifferentiableError(str(exc), cx.norm.parsed.location(call)) from None
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []

    def kept(atom: gast.expr, reference: bool = False) -> gast.expr:
        return saving.keep(cx, atom, where, fwd, pops, reference)

    saved = [kept(inputs[i]) for i in positions]
    attrs = [keyword(k.arg, kept(k.value)) for k in call.keywords]
    forward = assign(target, _kernel_call(cx, call, name), cx.line)
    after: list[gast.stmt] = []
    if grad.outputs_to_save:
        saving.rebound(cx, [target])
        saved = saved + [saving.keep(cx, load(target), where, after, pops)]
    head, g = cx.grad_source(target, prim)
    grads = cx.namer.fresh(f"{target}_cotangents")
    grad_fn = bind(cx, grad.grad_fn, f"{name}_gradient_{grad.fingerprint()}")
    grad_call = call_node(load(grad_fn), [g, tuple_of(saved)], attrs)
    contributions = [assign(grads, grad_call, cx.line)] + given_contributions(
        cx, grads, inputs, f"kernel {name!r}", kept)
    # an array cotangent no use reached is still empty: the gradient must not read it
    contributions = arrays.guard(cx, target, g, contributions)
    return fwd + [forward] + after, [cx.header()] + pops + head + contributions + cx.reset(
        target, prim)
