"""The compiler's internal model: operations as types, typed annotations, one builder module.

These checks read the compiler (its classes and its source with ``ast``); they
compile nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
import re
from pathlib import Path

import custom_functions
import gast
import pytest

from s2s_ad import markers, runtime
from s2s_ad.compiler import primitives
from s2s_ad.compiler.primitives import classify
from s2s_ad.compiler.syntax import annotations
from s2s_ad.compiler.syntax.annotations import set_callee
from s2s_ad.kernels.registry import run_kernel

ROOT = Path(__file__).resolve().parents[2] / "s2s_ad"


def _call(text: str, callee) -> gast.Call:
    node = gast.parse(text, mode="eval").body
    set_callee(node, callee)
    return node


def _scaled(speed, time):
    return speed * time


OPERATIONS = [  # (expression, callee, kind, positions a derivative flows through)
    ("speed", None, "Copy", [0]),
    ("3.0", None, "Opaque", []),
    ("speed < time", None, "Opaque", []),
    ("speed * time", None, "RuleOp", [0, 1]),
    ("-speed", None, "RuleOp", [0]),
    ("speed // time", None, "RuleOp", []),
    ("(speed, time)", None, "TupleDisplay", [0, 1]),
    ("pair[0]", None, "Index", [0]),
    ("sin(speed)", math.sin, "RuleOp", [0]),
    ("scaled(speed, time)", _scaled, "FunctionCall", [0, 1]),
    ("scaled(speed, factor)", custom_functions.scaled, "CustomCall", [0]),  # wrt x only
    ("keep(speed, hook)", markers.with_derivative, "HookCall", [0]),
    ("cut(speed)", markers.without_derivative, "CutCall", []),
    ("run(kernel, speed, time)", run_kernel, "KernelCall", [0, 1]),
    ("foreign(speed)", functools.partial(_scaled, 2.0), "UnknownCall", [0]),
    ("appended(items, speed)", runtime.appended, "RuleOp", [0, 1]),
]


@pytest.mark.parametrize("text,callee,kind,positions", OPERATIONS,
                         ids=[o[0] for o in OPERATIONS])
def test_each_operation_is_classified_as_its_own_type(text, callee, kind, positions):
    node = _call(text, callee) if callee is not None else gast.parse(text, mode="eval").body
    prim = classify(node)
    assert type(prim).__name__ == kind
    assert [i for i, _ in prim.differentiable_operands()] == positions


def test_a_primitive_has_no_string_tag():
    names = {f.name for f in dataclasses.fields(primitives.Primitive)}
    assert "what" not in names
    kinds = [c for c in vars(primitives).values()
             if isinstance(c, type) and issubclass(c, primitives.Primitive)
             and c is not primitives.Primitive]
    assert len(kinds) == 11


def test_the_flags_of_each_kind_of_call():
    shares = {c.__name__ for c in primitives.Primitive.__subclasses__() if c.shares_operands}
    writes = {c.__name__ for c in primitives.Primitive.__subclasses__() if c.may_write}
    identity = {c.__name__ for c in primitives.Primitive.__subclasses__() if c.identity}
    assert shares == {"FunctionCall", "CustomCall", "HookCall", "CutCall", "KernelCall",
                      "UnknownCall"}
    assert writes == shares - {"KernelCall"}
    assert identity == {"HookCall", "CutCall"}
    assert [c.__name__ for c in primitives.Primitive.__subclasses__() if c.cuts] == ["CutCall"]


# -- annotations: one reader and one writer per fact ---------------------------------------


ANNOTATIONS = [  # (writer, reader, value)
    (annotations.set_callee, annotations.callee_of, math.sin),
    (annotations.set_line, annotations.line_of, 12),
    (annotations.set_attribute, annotations.attribute_of, "size"),
    (annotations.set_method, annotations.method_of, "norm"),
    (annotations.set_structure, annotations.structure_of, ("float", "float")),
    (annotations.set_comment, annotations.comment_of, "# forward"),
]


@pytest.mark.parametrize("write,read,value", ANNOTATIONS, ids=[a[1].__name__ for a in ANNOTATIONS])
def test_each_annotation_has_a_reader_and_a_writer(write, read, value):
    statement = gast.parse("velocity = speed * time").body[0]
    assert read(statement) is None and read(statement, "unset") == "unset"
    write(statement, value)
    assert read(statement) == value
    copied = annotations.copy_annos(statement, gast.parse("pass").body[0])
    assert read(copied) == value


def test_in_place_is_a_flag():
    statement = gast.parse("speed = speed * 2.0").body[0]
    assert annotations.is_in_place(statement) is False
    annotations.mark_in_place(statement)
    assert annotations.is_in_place(statement) is True


def test_annotations_are_read_only_through_their_accessors():
    assert not hasattr(annotations, "get_anno") and not hasattr(annotations, "set_anno")
    with pytest.raises(AttributeError):
        annotations.calee_of  # noqa: B018  a misspelt reader fails, never reads None
    raw = [f"{path.relative_to(ROOT.parent)}:{n}" for path in sorted(ROOT.rglob("*.py"))
           if path.name != "annotations.py"
           for n, line in enumerate(path.read_text().splitlines(), 1) if '"_s2s_' in line]
    assert not raw, "annotation attributes read by name:\n" + "\n".join(raw)


# -- the saves of one statement: one helper ------------------------------------------------


def test_the_pops_of_several_saves_are_ordered_in_one_place():
    """``saving.keep`` alone puts a save's pullback statements in front of those of
    the saves before it (the pullback reads the value saved last first)."""
    found = [f"{path.relative_to(ROOT)}: {line.strip()}"
             for path in sorted((ROOT / "compiler").rglob("*.py"))
             for line in path.read_text().splitlines() if re.search(r"pops\[:0\]", line)]
    assert found == ["compiler/reverse/saving.py: pops[:0] = p"]


# -- trees are built by syntax/builders.py only --------------------------------------------

BUILDERS = "compiler/syntax/builders.py"
# Modules that may still construct gast nodes themselves (explicit, to shrink to nothing).
CONSTRUCTION_ALLOWED = {
    BUILDERS,
    # at the 500-line limit: the builder imports need lines its split (by topic) would free
    "compiler/structure_access.py",
}
# Leaf tokens (contexts and operators) carry no tree: passing gast.Add() to a builder is fine.
TOKENS = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)


def gast_constructions(source: str) -> list[tuple[int, str]]:
    """(line, class name) of each ``gast.X(...)`` call in ``source`` that builds a node
    with children (a statement or an expression), not a token.

    >>> gast_constructions("import gast\\nn = gast.Name(id='a', ctx=gast.Load())")
    [(2, 'Name')]
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "gast":
            cls = getattr(gast, node.func.attr, None)
            if isinstance(cls, type) and issubclass(cls, gast.AST) \
                    and not issubclass(cls, TOKENS):
                found.append((node.lineno, node.func.attr))
    return sorted(found)


def test_only_the_builders_construct_gast_nodes():
    assert gast_constructions((ROOT / BUILDERS).read_text())  # the walk sees the package
    found = [f"s2s_ad/{path.relative_to(ROOT)}:{line} gast.{name}(...)"
             for path in sorted(ROOT.rglob("*.py"))
             if str(path.relative_to(ROOT)) not in CONSTRUCTION_ALLOWED
             for line, name in gast_constructions(path.read_text())]
    assert not found, ("build trees with s2s_ad/compiler/syntax/builders.py:\n"
                       + "\n".join(found))


def test_the_construction_check_sees_statements_and_expressions_but_not_tokens():
    source = ("import gast\n"
              "a = gast.Assign(targets=[], value=gast.Constant(value=1, kind=None))\n"
              "b = gast.Pass()\n"
              "c = builders.binop(x, gast.Add(), y)\n"
              "d = isinstance(n, gast.Name)\n")
    assert gast_constructions(source) == [(2, "Assign"), (2, "Constant"), (3, "Pass")]
