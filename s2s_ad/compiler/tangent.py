"""The tangent stage (forward mode): ANF -> ``<name>_jvp(params, globals, tangents)``.

Each statement of the normalized function is kept as the primal runs it, and a
statement computing the tangent of its target from the tangents of its operands
follows it (or precedes it, when the statement overwrites an operand the tangent
reads): no tape, the control flow as written.  Tangent variables are ``t_<name>``;
a value that does not depend on the differentiated parameters has none (its
tangent is zero and no code is made for it).

>>> import math
>>> import s2s_ad as ad
>>> def f(x, y):
...     return math.sin(x) * y
>>> print(ad.source(f, 1.0, 2.0, mode="forward"))
def f_jvp(x, y, t_x, t_y):
    # line 2: return math.sin(x) * y
    sin_x = math.sin(x)
    # tangent of line 2: return math.sin(x) * y
    t_sin_x = t_x * math.cos(x)
    result = sin_x * y
    t_result = t_sin_x * y + t_y * sin_x
    return (result, t_result)

Rules say how a tangent goes through each primitive (:mod:`s2s_ad.rules.tangent_rules`).
Calls of other Python functions go through their own jvp functions, calls of
functions with a registered differential through it (:mod:`tangent_custom`),
``run_kernel`` calls through the kernel's registered tangent (:mod:`tangent_kernels`); a
growing list gets a tangent list appended beside it.  What has no tangent --
custom derivatives with only a pullback, ``with_derivative`` hooks, kernels without
a registered tangent, rules without a tangent -- is refused with a located message.
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.infer_kinds import static_slice
from s2s_ad.compiler.primitives import (
    Copy,
    CustomCall,
    CutCall,
    FunctionCall,
    HookCall,
    Index,
    KernelCall,
    Opaque,
    Primitive,
    RuleOp,
    TupleDisplay,
    classify,
)
from s2s_ad.compiler.reverse import calls
from s2s_ad.compiler.reverse.context import Context
from s2s_ad.compiler.syntax.annotations import comment_of, line_of, set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    attribute,
    binop,
    call,
    call_node,
    comment,
    const,
    expr_stmt,
    function_def,
    load,
    pass_stmt,
    return_stmt,
    store,
    store_item,
    store_tuple,
    subscript_of,
    substitute,
    tuple_of,
)
from s2s_ad.compiler.syntax.names import module_function_name
from s2s_ad.compiler.tangent_custom import custom_call, refused_hook
from s2s_ad.compiler.tangent_directions import directions_function
from s2s_ad.compiler.tangent_in_place import effect_tangent
from s2s_ad.compiler.tangent_kernels import kernel_tangent
from s2s_ad.compiler.tangent_tapes import (
    TapeGroup,
    group_item,
    group_kind,
    group_statements,
    tape_groups,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind, ListKind
from s2s_ad.rules.registry import lookup, parse_template
from s2s_ad.rules.tangent_rules import JOINTLY_LINEAR, LINEAR, MATRIX_TANGENTS, tangent_form

NUMBERS = ("float", "int", "bool")


class TangentPass:
    """Builds the jvp function of one normalized function (see the module docstring)."""

    def __init__(self, cx: Context):
        self.cx = cx
        self.varied = set(cx.activity.varied)
        self.names: dict[str, str] = {}
        self.line: int | None = None
        self.commented: set[int] = set()
        self.shown: int | None = None  # the source line the last "# line N" comment named
        self.pre: list[gast.stmt] = []  # statements a tangent expression needs first
        self.callees: dict[str, object] = {}  # bound name -> the called function's transform
        self.groups: dict[str, TapeGroup] = {}  # growing tape -> its group (tangent_tapes)

    # -- names --------------------------------------------------------------------------
    def tangent(self, name: str) -> str:
        """``t_<name>``: the tangent variable of ``name`` (renamed apart if taken)."""
        if name not in self.names:
            fresh = self.cx.namer.fresh(f"t_{name}")
            self.names[name] = fresh
            self.cx.kinds[fresh] = self.cx.kinds.get(name, "unknown")
        return self.names[name]

    def carries(self, atom: gast.expr) -> bool:
        return isinstance(atom, gast.Name) and atom.id in self.varied

    def location(self, node: gast.AST):
        return self.cx.norm.parsed.location(node)

    # -- the function -------------------------------------------------------------------
    def build(self) -> gast.FunctionDef:
        norm = self.cx.norm
        *body, ret = norm.node.body
        wrt = self.cx.wrt
        copied = [p for p in wrt if p in norm.written_params]  # written: the caller's stays
        entry = [assign(self.tangent(p), call("np.copy", load(f"{self.tangent(p)}_in")))
                 for p in copied]
        params = norm.params + list(self.cx.hidden)
        tangent_params = [f"{self.tangent(p)}_in" if p in copied else self.tangent(p)
                          for p in wrt]
        stmts = self.block(body)
        self.line = line_of(ret, self.line)
        result = ret.value
        out = load(self.tangent(result.id)) if self.carries(result) else \
            self.zero_like(result, self.cx.kind(result))
        name = module_function_name(norm.node.name)
        return function_def(f"{name}_jvp", params + tangent_params,
                            entry + stmts +
                            [return_stmt(tuple_of([result, out]))])

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            self.line = line_of(s, self.line)
            if self.line is not None and self.line != self.shown:
                self.shown = self.line
                node = comment(f"line {self.line}")
                set_line(node, self.line)
                out.append(node)
            out += self.statement(s)
        return out

    def statement(self, s: gast.stmt) -> list[gast.stmt]:
        if isinstance(s, gast.If):
            node = copy.copy(s)
            node.body, node.orelse = self.nested(s.body), self.nested(s.orelse, optional=True)
            return [node]
        if isinstance(s, gast.While):
            node = copy.copy(s)
            node.body = self.nested(s.body)
            return [node]
        if isinstance(s, gast.For):
            if isinstance(s.target, gast.Name) and s.target.id in self.varied:
                raise NonDifferentiableError(
                    "forward mode: a loop over the items of a differentiated value is not "
                    "supported yet", self.location(s), "loop over range(len(...)) instead")
            node = copy.copy(s)
            node.body = self.nested(s.body)
            return [node]
        if isinstance(s, gast.Assign):
            return self.assignment(s)
        if isinstance(s, gast.Expr):
            return [calls.primal_stmt(self.cx, s)] + effect_tangent(self, s)
        return [s]

    def nested(self, stmts: list[gast.stmt], optional: bool = False) -> list[gast.stmt]:
        """The block of a branch or loop body: ``pass`` when it keeps no statement but
        comments (nothing of it carries a tangent), none for an ``else`` then."""
        out = self.block(stmts)
        if all(comment_of(n) is not None for n in out):
            return [] if optional else out + [pass_stmt()]
        return out

    def header(self) -> list[gast.stmt]:
        """``# tangent of line N``, once per source line."""
        if self.line is None or self.line in self.commented:
            return []
        self.commented.add(self.line)
        node = comment(f"tangent of line {self.line}")
        set_line(node, self.line)
        return [node]

    # -- assignments --------------------------------------------------------------------
    def assignment(self, s: gast.Assign) -> list[gast.stmt]:
        target = s.targets[0]
        primal = calls.primal_stmt(self.cx, s)
        if isinstance(target, gast.Subscript):
            return [primal] + self.item_write(s)
        name = target.id
        if name not in self.varied:
            return [primal]
        if name in self.groups:  # a growing tape: its group's tangent tape, at the first
            grouped = group_statements(self.groups[name], s, self.line)
            return [primal] + (self.header() + grouped if grouped else [])
        prim = classify(s.value)
        if isinstance(prim, FunctionCall):
            return self.call_function(s, name, prim)
        if isinstance(prim, CustomCall):
            return custom_call(self, s, name, prim)
        if isinstance(prim, HookCall):
            raise refused_hook(self, s)
        if isinstance(prim, RuleOp) and prim.callee is runtime.appended:
            return [primal] + self.header() + [self.appended(prim)]
        if isinstance(prim, RuleOp) and prim.callee in (runtime.new_list, runtime.cotangent_list):
            return [primal] + self.header() + [  # a new list of its own, of the same items
                assign(self.tangent(name), copy.deepcopy(primal.value), self.line)]
        self.pre = []
        value = self.tangent_of(s, name, prim, name)
        if value is None:  # depends on nothing differentiated here: a zero tangent
            return [primal] + self.header() + [
                assign(self.tangent(name), self.zero_like(target, self.cx.kinds.get(name)),
                       self.line)]
        reads_target = any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(s.value))
        if not reads_target or name not in {n.id for n in gast.walk(value)
                                            if isinstance(n, gast.Name)}:
            return [primal] + self.header() + self.pre + [
                assign(self.tangent(name), value, self.line)]
        # x = np.exp(x): the tangent reads a value named x, so the new value is named apart
        result = self.cx.namer.fresh(f"{name}_next")
        self.cx.kinds[result] = self.cx.kinds.get(name, "unknown")
        self.pre = []
        value = self.tangent_of(s, name, prim, result)
        return [assign(result, primal.value, self.line)] + self.header() + self.pre + [
            assign(self.tangent(name), value, self.line), assign(name, load(result), self.line)]

    def item_write(self, s: gast.Assign) -> list[gast.stmt]:
        """``x[i] = v``: ``t_x[i] = t_v`` (zero when ``v`` carries no tangent)."""
        target = s.targets[0]
        array = target.value.id
        if array not in self.varied:
            return []
        value = load(self.tangent(s.value.id)) if self.carries(s.value) else const(0.0)
        tape, index = (load(self.groups[array].name),
                       group_item(self.groups[array], array, target.slice)) \
            if array in self.groups else (load(self.tangent(array)), target.slice)
        node = assignment([store_item(tape, index)], value)
        set_line(node, self.line)
        return self.header() + [node]

    def tangent_of(self, s: gast.Assign, name: str, prim: Primitive,
                   result: str) -> gast.expr | None:
        """The tangent of ``name = s.value`` (its value held in ``result``), or None when
        no operand carries one."""
        if isinstance(prim, Opaque | CutCall):
            return None
        if isinstance(prim, Copy):
            atom = prim.operands[0]
            return load(self.tangent(atom.id)) if self.carries(atom) else None
        if isinstance(prim, TupleDisplay):
            if not any(self.carries(a) for a in prim.operands):
                return None
            return tuple_of([load(self.tangent(a.id)) if self.carries(a)
                             else self.zero_like(a, self.cx.kind(a)) for a in prim.operands])
        if isinstance(prim, Index):
            return self.item_read(s, prim)
        if isinstance(prim, RuleOp) and prim.rule.emit == "+" and all(
                isinstance(self.cx.kind(a), tuple) for a in prim.operands):
            # t + s of tuples: the tangents side by side, a zero for each item of one
            # without (the items must stay where the tuple has them)
            if not any(self.carries(a) for a in prim.operands):
                return None
            left, right = (load(self.tangent(a.id)) if self.carries(a) else
                           self.zero_like(a, self.cx.kind(a)) for a in prim.operands)
            return binop(left, gast.Add(), right)
        if isinstance(prim, RuleOp):
            return self.rule_tangent(s, result, prim)
        if isinstance(prim, KernelCall):
            return kernel_tangent(self, s, prim, result)
        callee = getattr(prim.callee, "__qualname__", None) or getattr(prim.callee, "__name__",
                                                                       "it")
        raise NonDifferentiableError(f"forward mode through the call of '{callee}' is not "
                                     "supported yet", self.location(s),
                                     "use reverse mode (ad.gradient) for now")

    def item_read(self, s: gast.Assign, prim: Index) -> gast.expr | None:
        base = prim.operands[0]
        if not self.carries(base):
            return None
        kind = self.cx.kind(base)
        if isinstance(kind, tuple) and isinstance(s.value.slice, gast.Slice) and \
                static_slice(s.value.slice) is None:
            raise NonDifferentiableError("a tuple slice needs constant bounds", self.location(s))
        node = copy.copy(s.value)
        if base.id in self.groups:
            node.value = load(self.groups[base.id].name)
            node.slice = group_item(self.groups[base.id], base.id, s.value.slice)
            return node
        node.value = load(self.tangent(base.id))
        return node

    def rule_tangent(self, s: gast.Assign, result: str, prim: RuleOp) -> gast.expr | None:
        cx = self.cx
        if prim.rule.reverse is not None and prim.callee not in LINEAR | JOINTLY_LINEAR \
                and not prim.rule.tangent:
            raise NonDifferentiableError(f"forward mode: {prim.rule.emit} has no tangent rule "
                                         "yet", self.location(s), "use reverse mode for now")
        rule = calls.specialized(cx, prim, s.value)
        kinds = [cx.kind(a) for a in prim.operands]
        scalars = all(k in NUMBERS for k in kinds) and cx.kinds.get(result) in NUMBERS
        terms: list[gast.expr] = []
        for pos, atom in prim.differentiable_operands():
            if not self.carries(atom):
                continue
            param = rule.params[pos]
            form, text = tangent_form(rule, param, scalars, prim.callee)
            if prim.callee in MATRIX_TANGENTS and getattr(kinds[0], "ndim", 2) != 2:
                raise NonDifferentiableError(
                    f"forward mode: {rule.emit} of a stack of matrices is not supported yet",
                    self.location(s), "use reverse mode, or loop over the matrices")
            if form == "none":
                raise NonDifferentiableError(
                    f"forward mode: {rule.emit} has no tangent rule yet", self.location(s),
                    "use reverse mode (ad.gradient) for this function")
            if form == "linear":
                terms.append(self.linear_term(s, [atom]))
                continue
            if form == "jointly linear":
                return self.linear_term(s, [a for _, a in prim.differentiable_operands()])
            if form == "reduction":
                terms.append(self.reduction_term(s, result, prim, rule, atom, text))
                continue
            values = {p: o for p, o in zip(rule.params, prim.operands, strict=False)}
            values["z"] = load(result)
            values["g"] = load(self.tangent(atom.id))
            terms.append(substitute(parse_template(text), values))
        if not terms:
            return None
        total = terms[0]
        for term in terms[1:]:
            total = binop(total, gast.Add(), term)
        # the result's shape may come from an operand without a tangent
        arrays = [self.carries(a) for a in prim.operands if isinstance(cx.kind(a), ArrayKind)]
        if isinstance(cx.kinds.get(result), ArrayKind) and rule.elementwise and \
                not (arrays and all(arrays)):
            return call("rt.broadcast_tangent", total, load(result))
        return total

    def linear_term(self, s: gast.Assign, operands: list[gast.expr]) -> gast.expr:
        """The call of ``s`` with each of ``operands`` (those nodes) replaced by its
        tangent (a zero when it has none)."""
        tangents = {id(o): load(self.tangent(o.id)) if self.carries(o) else
                    self.zero_atom(o) for o in operands}
        replaced = _replace_nodes(s.value, tangents)
        return calls.primal_stmt(self.cx, assign("_", replaced)).value

    def reduction_term(self, s: gast.Assign, result: str, prim: RuleOp, rule,
                       atom: gast.Name, adjoint: str) -> gast.expr:
        """``sum(J^T(ones) * t)`` over the reduced axes (see ``SLICE_REDUCTIONS``)."""
        cx = self.cx
        ones = const(1.0) if cx.kinds.get(result) in NUMBERS else call("np.ones_like",
                                                                        load(result))
        values = {p: o for p, o in zip(rule.params, prim.operands, strict=False)}
        values.update(z=load(result), g=ones)
        weights = cx.namer.fresh(f"{atom.id}_slope")
        cx.kinds[weights] = cx.kind(atom)
        weighted = binop(substitute(parse_template(adjoint), values), gast.Mult(),
                         load(self.tangent(atom.id)))
        self.pre.append(assign(weights, weighted, self.line))
        by_name = dict(zip(rule.params, prim.operands, strict=False))
        operands = [load(weights)] + [by_name.get(p, const(d)) for p, d in
                                      (("axis", None), ("keepdims", False))]
        summing = lookup(np.sum, 3).specialize(operands, [cx.kind(a) for a in operands])
        template = summing.forward_template()
        if template is None:
            return call(summing.emit, *operands)
        return substitute(template, dict(zip(summing.params, operands, strict=True)))

    def call_function(self, s: gast.Assign, name: str, prim: FunctionCall) -> list[gast.stmt]:
        """``y = helper(a, b)``: ``y, t_y = helper_jvp(a, b, <globals>, t_a, t_b)``."""
        cx = self.cx
        primal = calls.primal_stmt(cx, s)
        if not any(self.carries(a) for a in prim.operands):
            return [primal] + self.header() + [
                assign(self.tangent(name), self.zero_like(load(name), cx.kinds.get(name)),
                       self.line)]
        link = calls.link_callee(cx, prim, call=s)
        callee = link.transform
        bound = f"{link.primal}_jvp"
        if bound not in self.callees:
            bound = cx.namer.fresh(bound)
            self.callees[bound] = callee
        tangents = [load(self.tangent(prim.operands[p].id)) if self.carries(prim.operands[p])
                    else self.zero_like(prim.operands[p], cx.kind(prim.operands[p]))
                    for p in callee.wrt_positions]
        args = list(prim.operands) + calls.passed_globals(cx, link) + tangents
        node = assignment([store_tuple([store(name), store(self.tangent(name))])],
                          call_node(load(bound), args))
        set_line(node, self.line)
        return self.header() + [node]

    def appended(self, prim: RuleOp) -> gast.stmt:
        """``items.append(v)``: ``t_items.append(t_v)`` (a zero when ``v`` has none), so
        the tangent list stays item for item beside the list."""
        items, value = prim.operands
        item = load(self.tangent(value.id)) if self.carries(value) else \
            self.zero_like(value, self.cx.kind(value))
        kind = self.cx.kinds.get(items.id)
        if isinstance(kind, ListKind) and kind.element == "float" and \
                self.cx.kind(value) in ("int", "bool"):
            item = const(0.0)
        node = expr_stmt(call_node(attribute(load(self.tangent(items.id)), "append"), [item]))
        set_line(node, self.line)
        return node

    def zero_atom(self, atom: gast.expr) -> gast.expr:
        """A zero like ``atom``, as an atom (an array's is computed first, in ``pre``)."""
        kind = self.cx.kind(atom)
        if not isinstance(kind, ArrayKind):
            return self.zero_like(atom, kind)
        name = self.cx.namer.fresh(f"zero_{getattr(atom, 'id', 'operand')}")
        self.cx.kinds[name] = kind
        self.pre.append(assign(name, self.zero_like(atom, kind), self.line))
        return load(name)

    def zero_like(self, atom: gast.expr, kind: Kind) -> gast.expr:
        if isinstance(kind, tuple):
            return tuple_of([self.zero_like(subscript_of(atom, i), k)
                             for i, k in enumerate(kind)])
        if isinstance(kind, ArrayKind):
            return call("np.zeros_like", copy.deepcopy(atom))
        if isinstance(kind, ListKind):  # its items came from elsewhere: no zero list here
            raise NonDifferentiableError("forward mode: a list that does not start empty "
                                         "(items = []) is not supported yet", None)
        return const(0.0)


def _replace_nodes(tree: gast.expr, new: dict[int, gast.expr]) -> gast.expr:
    """A copy of ``tree`` with each node whose ``id`` is a key of ``new`` replaced."""
    if id(tree) in new:
        return new[id(tree)]
    node = copy.copy(tree)
    for field in tree._fields:
        value = getattr(tree, field, None)
        if isinstance(value, gast.AST):
            setattr(node, field, _replace_nodes(value, new))
        elif isinstance(value, list):
            setattr(node, field, [_replace_nodes(v, new) if isinstance(v, gast.AST) else v
                                  for v in value])
    return node


def tangent_function(cx: Context, directions: bool = False) -> tuple[gast.FunctionDef, dict]:
    """The jvp function of the function ``cx`` reverses (after the reverse stages ran, so
    that the globals and helpers the primal statements need are bound), and the
    transforms of the functions it calls by their bound names (their jvp functions);
    with ``directions``, its form carrying several directions per run
    (:mod:`s2s_ad.compiler.tangent_directions`)."""
    tangent_pass = TangentPass(cx)
    if not directions:  # (the directions form keeps a tangent tape per tape)
        tangent_pass.groups = tape_groups(cx.norm.node, tangent_pass.varied, cx.namer.fresh)
        cx.kinds.update((g.name, group_kind()) for g in tangent_pass.groups.values())
    fdef = tangent_pass.build()
    if not directions:
        return fdef, tangent_pass.callees
    params = [a.id for a in fdef.args.args][len(cx.norm.params) + len(cx.hidden):]
    if not params:
        raise NonDifferentiableError("several tangent directions need a differentiated "
                                     "argument", cx.norm.parsed.location(cx.norm.node))
    renamed = {bound: f"{bound}_directions" for bound in tangent_pass.callees}
    fdef = directions_function(cx, fdef, set(tangent_pass.names.values()) | set(params),
                               params, renamed)
    return fdef, {renamed[b]: t for b, t in tangent_pass.callees.items()}
