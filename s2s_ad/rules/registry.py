"""The registry of primitives: one :class:`Rule` object per primitive, keyed by the
function it stands for.

A rule is a template in the notation of the generated code.  For ``z = f(x, y)``
the adjoint of each argument is an expression in the argument names, ``z``
(the result) and ``g`` (the cotangent of ``z``); the reverse pass substitutes
the saved values and emits ``d_x += <expression>``.  :func:`primitive` makes the
rule and registers it, spelling the function once: the name generated code
calls is derived from the object (``np.sin`` -> ``"np.sin"``, ``math.sin`` ->
``"math.sin"``, a runtime helper -> ``"rt.<name>"``).

>>> rule = Rule("math.sin", ("x",), {"x": "g * math.cos(x)"})
>>> rule.needs("x")
frozenset({'x'})
>>> spelled(np.linalg.norm), spelled(math.sin), spelled(runtime.reshape_like), spelled(abs)
('np.linalg.norm', 'math.sin', 'rt.reshape_like', 'abs')

Everything the compiler knows about a primitive is on its rule: the array
methods that spell it (``x.sum()`` is ``np.sum(x)``: :func:`array_methods`),
whether its result may be a view of its first argument (:func:`returns_view`),
and, for a pullback that is not a template, the reverse-pass builder
(:func:`reverse_pass`).  A template naming a runtime helper that does not exist
fails when the template is read (at import for the tables), not in generated code:

>>> Rule("np.sin", ("x",), {"x": "rt.no_such_helper(g)"}).template("x")
Traceback (most recent call last):
...
ValueError: template 'rt.no_such_helper(g)': s2s_ad.runtime has no helper 'no_such_helper'
"""

from __future__ import annotations

import builtins
import importlib
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import gast
import numpy as np

from .. import runtime
from ..errors import NonDifferentiableError
from ..registry import Table

#: The adjoint of a parameter whose cotangent the rule's ``reverse`` builder writes
#: (statements of the reverse pass, not a template): activity analysis reads only
#: that the parameter carries a derivative.
BY_REVERSE_PASS = "<written by the rule's reverse pass>"


@dataclass(frozen=True)
class Rule:
    """Everything about one primitive: how to emit it, its result kind, its
    adjoints, its spellings, and the slots other modes fill.

    ``kind`` is the kind of the result: ``"float"``, ``"int"``, ``"bool"``,
    ``"none"``, or a function of the argument kinds and operands (see
    :mod:`s2s_ad.rules.result_kinds`; ``joined`` is the join of the argument kinds).
    A rule with no adjoints is non-differentiable (``floor``, ``round``,
    comparisons): nothing flows back through it, and activity analysis knows it.
    """

    emit: str
    params: tuple[str, ...]
    adjoints: dict[str, str] = field(default_factory=dict)
    kind: Any = "float"
    forward: str | None = None  # how generated code computes the value, when not emit(...)
    defaults: dict[str, Any] = field(default_factory=dict)  # keyword parameters
    elementwise: bool = False  # broadcasting: cotangents are summed back to each shape
    variant: Callable | None = None  # (constants, kinds) -> {"forward", "adjoints"}
    methods: tuple[str, ...] = ()  # array-method spellings: ``x.sum()`` is ``np.sum(x)``
    view: bool = False  # the result may be a view of the first argument (reshape, .T)
    # The tangent (JVP) templates, one per parameter, in the notation of the adjoints
    # (``g`` the parameter's tangent); a variant may give them too (``"tangent"``).
    tangent: dict[str, str] | None = None
    # The reverse step when the pullback is no template (growing lists): a builder
    # (cx, stmt, target, primitive, where) -> (forward, reverse), set by the compiler
    # with :func:`reverse_pass`; its adjoints then read BY_REVERSE_PASS.
    reverse: Callable | None = None

    def specialize(self, operands: list, kinds: list) -> Rule:
        """This rule with the templates for these operands (constant ``axis``, ndims)."""
        if self.variant is None:
            return self
        consts = {p: o.value if isinstance(o, gast.Constant) else NOT_CONSTANT
                  for p, o in zip(self.params, operands, strict=False)}
        parts = self.variant(consts, dict(zip(self.params, kinds, strict=False)))
        tangent = {**(self.tangent or {}), **parts.get("tangent", {})} or None
        return replace(self, variant=None, forward=parts.get("forward", self.forward),
                       adjoints={**self.adjoints, **parts.get("adjoints", {})}, tangent=tangent)

    @property
    def differentiable(self) -> bool:
        return bool(self.adjoints)

    def template(self, param: str) -> gast.expr:
        """The adjoint template of ``param`` as a gast expression."""
        return parse_template(self.adjoints[param])

    def forward_template(self) -> gast.expr | None:
        """The template computing the value, if the rule has one."""
        return parse_template(self.forward) if self.forward else None

    def needs(self, param: str) -> frozenset[str]:
        """Template names (arguments and ``z``) the adjoint of ``param`` reads."""
        tree = self.template(param)
        names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        return frozenset(names & (set(self.params) | {"z"}))

    def result_kind(self, kinds: list, operands: list) -> Any:
        """The kind of the result for arguments of these kinds (None: not known yet)."""
        if getattr(self.kind, "sees_unknown", False):
            return self.kind(kinds, operands)
        if callable(self.kind):
            return None if None in kinds else self.kind(kinds, operands)
        return self.kind

    def templates(self) -> list[str]:
        """The fixed templates (adjoints and forward; not those a variant makes)."""
        texts = [t for t in self.adjoints.values() if t != BY_REVERSE_PASS]
        return texts + ([self.forward] if self.forward else [])


NOT_CONSTANT = object()  # an operand whose value is only known at run time

_templates: dict[str, gast.expr] = {}


def parse_template(text: str) -> gast.expr:
    if text not in _templates:
        tree = gast.parse(text, mode="eval").body
        for node in gast.walk(tree):
            if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) \
                    and node.value.id == "rt" and not hasattr(runtime, node.attr):
                raise ValueError(f"template {text!r}: s2s_ad.runtime has no helper "
                                 f"{node.attr!r}")
        _templates[text] = tree
    return _templates[text]


# ---- names --------------------------------------------------------------------------------
_NAMESPACES = (("np.", np), ("np.linalg.", np.linalg), ("math.", math), ("rt.", runtime),
               ("", builtins))


def spelled(obj: Any) -> str:
    """The name generated code calls ``obj`` by (``np.sin``, ``rt.reshape_like``...);
    for a ``scipy.special`` function, the name messages give it (its rule's forward
    calls a runtime helper: generated code does not import SciPy, and Numba compiles
    none of its functions)."""
    name = getattr(obj, "__name__", None)
    for prefix, namespace in (*_NAMESPACES, ("scipy.special.", sys.modules.get("scipy.special"))):
        if name and getattr(namespace, name, None) is obj:
            return prefix + name
    raise ValueError(f"{obj!r} is not a function of numpy, math, builtins or s2s_ad.runtime "
                     "under its own name: give the name generated code calls it by")


def rt_name(helper: Callable) -> str:
    """``"rt.<name>"`` of a runtime helper given by reference (a typo fails at import)."""
    name = spelled(helper)
    if not name.startswith("rt."):
        raise ValueError(f"{helper!r} is not a helper of s2s_ad.runtime")
    return name


# ---- the registry -------------------------------------------------------------------------
# Tables of the one registry (s2s_ad.registry): a change bumps the generation every
# transform checks, so code built before a registration is rebuilt after it.
_RULES = Table("rules")  # (callee, nargs or None) -> Rule
_BINOPS = Table("binary operators")  # gast operator class -> Rule
_UNARYOPS = Table("unary operators")
_METHODS = Table("array methods")  # method name -> the function it spells
_VIEWS = Table("views")  # a function whose result may be a view of its argument -> True
_REFUSALS = Table("refusals")  # a function refused with a reason -> (problem, what to do)


def register(obj: Any, rule: Rule, nargs: int | None = None) -> None:
    """Register ``rule`` for calls of ``obj`` (with ``nargs`` arguments, or any)."""
    if rule.emit.startswith("scipy.") and rule.forward is None and rule.variant is None:
        raise ValueError(f"{rule.emit}: give the rule a forward= calling a runtime helper "
                         "(generated code does not import SciPy)")
    for text in rule.templates():
        parse_template(text)  # a syntax error or unknown helper fails here, at import
    for method in rule.methods:  # np.amax shares np.max's rule, and np.max is x.max()
        if method not in _METHODS:
            _METHODS[method] = obj
        spelling = _METHODS.get(method)
        if spelling is not obj and all(r is not rule for (o, _), r in _RULES if o is spelling):
            raise ValueError(f"the array method {method!r} already spells {spelling!r}")
    if rule.view:
        _VIEWS[obj] = True
    _RULES[obj, nargs] = rule


def primitive(obj: Any, params: tuple[str, ...], adjoints: dict[str, str] | None = None, *,
              nargs: int | None = None, also: tuple = (), name: str | None = None,
              **fields: Any) -> Rule:
    """Make and register the rule of ``obj`` (and of the objects ``also``, other names of
    the same function such as ``np.amax``) for calls with ``nargs`` arguments (or any).

    The emitted name is ``spelled(obj)`` unless ``name`` is given; ``fields`` are the
    other fields of :class:`Rule`.
    """
    rule = Rule(name or spelled(obj), params, dict(adjoints or {}), **fields)
    for each in (obj, *also):
        register(each, rule, nargs)
    return rule


def unregister(obj: Any) -> None:
    """Remove every rule of ``obj`` (and the array methods that spell it)."""
    for key in [key for key, _ in _RULES if key[0] is obj]:
        del _RULES[key]
    for method in [m for m, other in _METHODS if other is obj]:
        del _METHODS[method]
    if obj in _VIEWS:
        del _VIEWS[obj]


def refuse(obj: Any, problem: str, instead: str) -> None:
    """Refuse calls of ``obj`` (which has no rule) with ``problem`` and what to do
    ``instead``, rather than the generic "no derivative rule"."""
    _REFUSALS[obj] = (problem, instead)


def refusal(obj: Any) -> tuple[str, str] | None:
    """(problem, what to do instead) of a function refused with :func:`refuse`."""
    return _REFUSALS.get(obj)


def register_binop(op: type, rule: Rule) -> None:
    _BINOPS[op] = rule


def register_unaryop(op: type, rule: Rule) -> None:
    _UNARYOPS[op] = rule


def reverse_pass(obj: Any) -> Callable[[Callable], Callable]:
    """Decorator: the builder of the reverse step of every rule of ``obj`` (the
    compiler's ``reverse/lists.py`` sets those of growing lists)."""

    def setting(builder: Callable) -> Callable:
        keys = [key for key, _ in _RULES if key[0] is obj]
        if not keys:
            raise ValueError(f"{obj!r} has no rule")
        for key in keys:
            _RULES[key] = replace(_RULES.get(key), reverse=builder)
        return builder

    return setting


# Tables of a library the project does not import itself, loaded once the user's code has
# imported the library (importing scipy.special costs about 0.3 s): module -> its table.
_LIBRARY_TABLES = {"scipy.special": "s2s_ad.rules.special_rules"}


def load_library_tables() -> None:
    """Register the tables of the libraries the user's code has imported by now."""
    for module, table in _LIBRARY_TABLES.items():
        if module in sys.modules and table not in sys.modules:
            importlib.import_module(table)


def lookup(obj: Any, nargs: int) -> Rule | None:
    """The rule for calling ``obj`` with ``nargs`` arguments, if any."""
    load_library_tables()
    for key in ((obj, nargs), (obj, None)):
        rule = _RULES.get(key)
        if rule is not None:
            return rule
    return None


def arities(obj: Any) -> list[int]:
    """The argument counts ``obj`` has rules for, when each rule is for one count
    (empty when ``obj`` has none, or one for any count)."""
    load_library_tables()
    counts = [nargs for (other, nargs), _ in _RULES if other is obj]
    return [] if None in counts else sorted(counts)


def array_methods() -> dict[str, Any]:
    """``{method name: function}``: ``x.<name>(...)`` on an array is ``function(x, ...)``
    (from the rules' ``methods``)."""
    return dict(iter(_METHODS))


def returns_view(obj: Any) -> bool:
    """Whether a call of ``obj`` may return memory of its first argument."""
    return obj in _VIEWS


def operator_rule(op: gast.operator | gast.unaryop, where: Any = None) -> Rule:
    """The rule of a binary or unary operator (an error naming it if there is none)."""
    table = _UNARYOPS if isinstance(op, gast.unaryop) else _BINOPS
    rule = table.get(type(op))
    if rule is None:
        raise NonDifferentiableError(f"the operator {type(op).__name__} has no derivative "
                                     "rule", where)
    return rule


def all_rules() -> list[tuple[Any, int | None, Rule]]:
    """Every registered rule as (callee or operator class, nargs or None, rule)."""
    load_library_tables()
    calls = [(obj, nargs, rule) for (obj, nargs), rule in _RULES]
    ops = [(op, None, rule) for op, rule in [*_BINOPS, *_UNARYOPS]]
    return calls + ops
