"""The tangent stage, part: ``run_kernel`` calls, primitives with a registered tangent.

Forward mode runs the kernel as reverse mode's forward does, then its tangent
(:mod:`s2s_ad.kernels.tangents`).  A kernel registered as linear in each of some
inputs is its own tangent, one call per input that carries one::

    y = conv2d_kernel_1a2b3c(x, w, strides=s, padding='same')
    t_y = conv2d_kernel_1a2b3c(t_x, w, strides=s, padding='same') + \\
        conv2d_kernel_1a2b3c(x, t_w, strides=s, padding='same')

and any other calls its ``tangent_fn`` with the inputs, their tangents (zeros for
float inputs without one, ``None`` for integer ones) and the attributes, the
result checked against the value (``rt.given_tangent``)::

    y = max_pool2d_kernel_4d5e6f(x, pool_size=p, strides=s, padding='valid')
    t_y = rt.given_tangent(max_pool2d_tangent_7a8b9c((x,), (t_x,), pool_size=p, ...),
                           y, "kernel 'max_pool2d'")

The bound functions are :class:`~s2s_ad.kernels.registry.KernelOp` objects where
the tangent is a kernel (the "numba" one in compiled code).  A kernel without a
registered tangent is refused with a located message.
"""

from __future__ import annotations

import copy
from typing import Any

import gast

from s2s_ad.compiler.kernel_ops import kernel_name
from s2s_ad.compiler.primitives import KernelCall
from s2s_ad.compiler.reverse.kernel_calls import bind, primal_kernel_call
from s2s_ad.compiler.syntax.builders import binop, call, call_node, const, load, tuple_of
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kernels.tangents import Tangent, tangent_of
from s2s_ad.kinds import ArrayKind

TangentPass = Any  # s2s_ad.compiler.tangent.TangentPass (which imports this module)


def kernel_tangent(tp: TangentPass, s: gast.Assign, prim: KernelCall,
                   result: str) -> gast.expr | None:
    """The tangent of ``result = run_kernel(name, *inputs, **attrs)`` (``s``), or None
    when no input carries one."""
    inputs = prim.operands
    carrying = [i for i, atom in enumerate(inputs) if tp.carries(atom)]
    if not carrying:
        return None
    name = kernel_name(s.value)
    entry = tangent_of(name)
    if entry is None:
        raise NonDifferentiableError(
            f"forward mode: kernel '{name}' has no registered tangent", tp.location(s.value),
            f"register one with ad.register_tangent('{name}', tangent_fn) (tangent_fn(inputs, "
            f"tangents, **attrs) returns the output's tangent), or "
            f"ad.register_tangent('{name}', linear_in=...) for a kernel linear in its inputs; "
            "or use reverse mode (ad.gradient)")
    if entry.tangent_fn is None:
        return _linear(tp, s, entry, carrying)
    return _by_function(tp, s, entry, result)


def kernel_note(node: gast.Call) -> str:
    """What ``s2s-ad check`` notes of a ``run_kernel`` call whose result carries a
    tangent: that forward mode needs the kernel's tangent, when none is registered."""
    name = kernel_name(node)
    if name is None or tangent_of(name) is not None:
        return ""
    return (f"kernel '{name}' has no registered tangent: forward mode (ad.jvp / "
            f"ad.jacobian / ad.hessian) through this call needs "
            f"ad.register_tangent('{name}', ...)")


def _linear(tp: TangentPass, s: gast.Assign, entry: Tangent,
            carrying: list[int]) -> gast.expr:
    """The kernel called once per input that carries a tangent, with that input replaced
    by its tangent, summed."""
    inputs = s.value.args[1:]
    try:
        linear = entry.linear_positions(len(inputs))
    except ValueError as exc:
        raise NonDifferentiableError(str(exc), tp.location(s.value)) from None
    outside = [i for i in carrying if i not in linear]
    if outside:
        raise NonDifferentiableError(
            f"forward mode: kernel '{entry.name}' is registered as linear in input(s) "
            f"{', '.join(map(str, linear))}, but a tangent reaches input {outside[0]}",
            tp.location(s.value),
            f"register a tangent function with ad.register_tangent('{entry.name}', "
            "tangent_fn), or keep that input constant (ad.without_derivative)")
    kernel = primal_kernel_call(tp.cx, s.value)
    total: gast.expr | None = None
    for pos in carrying:
        args = [load(tp.tangent(a.id)) if i == pos else copy.deepcopy(a)
                for i, a in enumerate(inputs)]
        term = call_node(copy.deepcopy(kernel.func), args, copy.deepcopy(kernel.keywords))
        total = term if total is None else binop(total, gast.Add(), term)
    return total


def _by_function(tp: TangentPass, s: gast.Assign, entry: Tangent, result: str) -> gast.expr:
    """``rt.given_tangent(tangent_fn((inputs...), (tangents...), **attrs), value, label)``."""
    cx = tp.cx
    inputs = list(s.value.args[1:])
    tangents = [_tangent_or_zero(tp, atom) for atom in inputs]
    fn = bind(cx, entry.tangent_fn, f"{entry.name}_tangent_{entry.fingerprint()}")
    keywords = [copy.deepcopy(k) for k in s.value.keywords]
    value = call_node(load(fn), [tuple_of([copy.deepcopy(a) for a in inputs]),
                                 tuple_of(tangents)], keywords)
    return call("rt.given_tangent", value, load(result), const(f"kernel {entry.name!r}"))


def _tangent_or_zero(tp: TangentPass, atom: gast.expr) -> gast.expr:
    """The tangent of an input: its own, a zero for a float without one, else None."""
    if tp.carries(atom):
        return load(tp.tangent(atom.id))
    kind = tp.cx.kind(atom)
    if kind == "float" or (isinstance(kind, ArrayKind) and kind.floating):
        return tp.zero_atom(atom)
    return const(None)
