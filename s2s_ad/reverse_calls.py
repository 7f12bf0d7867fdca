"""Stage 5 (reverse), part: calls.

Python functions (through their transforms), registered ``@derivative``s
(split or black-box), ``with_derivative`` hooks, and the primal form of every
call in generated code (canonical rule names, injected objects).
"""

from __future__ import annotations

import builtins
import copy
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gast

from .errors import NonDifferentiableError
from .ir import set_anno
from .rules.classify import Primitive, classify
from .trees import (
    assign,
    call,
    load,
    store,
    subscript_of,
    substitute,
)

if TYPE_CHECKING:
    from .reverse import _Ctx


@dataclass
class CalleeLink:
    """A call from generated code to another transformed function."""

    transform: Any
    primal: str
    forward: str
    pullback: str
    wrt_positions: list[int]


def _is_library(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "scipy", "math", "builtins")


class CallsMixin:
    """Methods of the reverse pass (see :mod:`s2s_ad.reverse`)."""

    def primal_stmt(self, s: gast.stmt) -> gast.stmt:
        """``s`` computing the original value with names the generated module has:
        rules by their canonical name, Python functions by their generated primal,
        anything else through an injected name."""
        value = s.value
        if isinstance(value, gast.Lambda):
            self.bind_globals(value)
        if not isinstance(value, gast.Call):
            return s
        new = copy.copy(s)
        new.value = self.primal_value(value)
        return new

    def primal_value(self, value: gast.Call) -> gast.expr:
        prim = classify(value)
        args = list(value.args)
        if prim.what in ("hook", "cut"):
            return prim.operands[0]
        if prim.what == "rule":
            template = self.specialized(prim, value).forward_template()
            if template is not None:
                return substitute(template, dict(zip(prim.rule.params, prim.operands,
                                                      strict=False)))
            return gast.Call(func=gast.parse(prim.rule.emit, mode="eval").body, args=args,
                             keywords=value.keywords)
        if prim.what == "function" or (prim.what == "custom" and isinstance(
                prim.callee, types.FunctionType)):
            return gast.Call(func=load(self.link(prim, primal_only=True).primal), args=args,
                             keywords=[])
        name = self.external(prim.callee)
        return gast.Call(func=load(name), args=args, keywords=value.keywords)

    def external(self, obj: Any) -> str:
        """A name in the generated module bound to ``obj`` when it is loaded."""
        for name, known in self.externals.items():
            if known is obj:
                return name
        name = self.namer.fresh(getattr(obj, "__name__", "external"))
        self.externals[name] = obj
        return name

    def bind_globals(self, node: gast.AST) -> None:
        """Bind the module-level names that Python code kept as written reads."""
        namespace = self.norm.parsed.namespace
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id not in self.norm.locals and n.id in namespace and \
                    n.id not in dir(builtins):
                self.externals.setdefault(n.id, namespace[n.id])

    def link(self, prim: Primitive, callee: Any = None, kinds: list | None = None,
             primal_only: bool = False) -> CalleeLink:
        kinds = kinds if kinds is not None else [self.kind(a) for a in prim.operands]
        transform = self.linker(callee if callee is not None else prim.callee, kinds,
                                primal_only)
        key = id(transform)
        if key not in self.links:
            base = transform.name
            self.links[key] = CalleeLink(
                transform=transform, primal=self.namer.fresh(base),
                forward=self.namer.fresh(f"{base}_forward"),
                pullback=self.namer.fresh(f"{base}_pullback"),
                wrt_positions=transform.wrt_positions)
        return self.links[key]

    def call_function(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        link = self.link(prim)
        res = self.namer.fresh(f"{link.primal}_residuals")
        self.kinds[res] = "unknown"
        call = gast.Call(func=load(link.forward), args=list(prim.operands), keywords=[])
        fwd_call = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(res)],
                                                   ctx=gast.Store())],
                               value=call, type_comment=None)
        set_anno(fwd_call, "line", self.line)
        f, p, res_expr = self.save_residuals(res, link, ctx)
        head, g = self._grad_source(target, prim)
        grads = self.namer.fresh(f"{link.primal}_grads")
        rev = [self._header()] + p + head + [
            assign(grads, gast.Call(func=load(link.pullback), args=[res_expr, g], keywords=[]),
                    self.line)]
        for out_index, pos in enumerate(link.wrt_positions):
            atom = prim.operands[pos]
            if self.active(atom):
                part = subscript_of(load(grads), out_index)
                rev += self.accumulate(atom.id, self.kind(atom), part)
        return [fwd_call] + f, rev + self._reset(target, prim)

    def call_hook(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        """``v = with_derivative(x, hook)``: the pullback runs the hook on ``d_v``."""
        x, hook = prim.operands
        f, p, hook_expr = self.save(hook, ctx)
        head, g = self._grad_source(target, prim)
        cotangent = g if head else load(self.adj(target))
        rev = [self._header()] + p + head + [
            assign(cotangent.id, call("rt.run_hook", hook_expr, cotangent), self.line)]
        if self.active(x):
            rev += self.accumulate(x.id, self.kind(x), cotangent)
        return f + [self.primal_stmt(s)], rev + self._reset(target, prim)

    def call_custom(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        """A call of a function with a registered derivative (Swift's form)."""
        custom = prim.custom
        res = self.namer.fresh(f"{target}_pullback" if custom.split is None
                               else f"{target}_residuals")
        self.kinds[res] = "unknown"
        if custom.split is not None:
            fwd_part, pb_part = custom.split
            fwd_link = self.link(prim, fwd_part, primal_only=True)
            func = load(fwd_link.primal)
        else:
            func = load(self.external(custom.derivative))
        call = gast.Call(func=func, args=list(prim.operands), keywords=[])
        fwd_call = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(res)],
                                                   ctx=gast.Store())],
                               value=call, type_comment=None)
        set_anno(fwd_call, "line", self.line)
        if custom.split is not None:
            res_kind = fwd_link.transform.result_kind
            if isinstance(res_kind, tuple):
                self.kinds[res] = res_kind[1]
            f, p, res_expr = self.save(load(res), ctx)
            pb_link = self.link(prim, pb_part, [self.kinds[res], self.kinds.get(target)],
                                primal_only=True)
            pullback_fn = load(pb_link.primal)
            args = [res_expr]
        else:
            f, p, res_expr = self.save(load(res), ctx)
            pullback_fn, args = res_expr, []
        head, g = self._grad_source(target, prim)
        grads = self.namer.fresh(f"{target}_cotangents")
        rev = [self._header()] + p + head + [
            assign(grads, gast.Call(func=pullback_fn, args=args + [g], keywords=[]),
                    self.line)]
        positions = custom.positions(len(prim.operands))
        for k, pos in enumerate(positions):
            atom = prim.operands[pos]
            if self.active(atom):
                part = load(grads) if len(positions) == 1 else subscript_of(load(grads), k)
                rev += self.accumulate(atom.id, self.kind(atom), part)
        return [fwd_call] + f, rev + self._reset(target, prim)

    def _unknown_call(self, s: gast.stmt, prim: Primitive) -> NonDifferentiableError:
        callee = prim.callee
        name = getattr(callee, "__name__", repr(callee))
        loc = self.norm.parsed.location(s.value if hasattr(s.value, "lineno") else s)
        return NonDifferentiableError(
            f"'{name}' has no derivative rule" + ("" if _is_library(callee) else
                                                " and no Python source to differentiate"), loc,
            f"register one with @ad.derivative(of={name}), or mark the value with "
            "ad.without_derivative(...)")
