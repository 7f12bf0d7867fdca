"""The primitive model (issue 21): one rule object carries everything about a primitive.

The name generated code calls is derived from the function object; the array-method
spellings (``x.sum()``), the views (``np.reshape``) and the reverse-pass builders are
fields of the rules, and the compiler reads them from there, so no second list can
fall out of step.
"""

from __future__ import annotations

import builtins
import importlib.util
import re
from pathlib import Path

import gast
import numpy as np
import pytest
import scipy.linalg

import s2s_ad
from s2s_ad import runtime
from s2s_ad.compiler.normalize import expressions
from s2s_ad.rules import all_rules, array_methods, lookup, returns_view
from s2s_ad.rules.registry import (
    BY_REVERSE_PASS,
    Rule,
    primitive,
    register,
    rt_name,
    spelled,
    unregister,
)
from s2s_ad.rules.result_kinds import floats
from s2s_ad.rules.runtime_rules import HELPERS
from s2s_ad.testing import check_grads

# emitted names that are not the object's own: List() is how Numba spells a typed list,
# and np.amax/np.amin are other names of np.max/np.min (their rule is np.max's)
RENAMED = {runtime.new_list: "List", np.amax: "np.max", np.amin: "np.min",
           # SciPy has no emitted name (its rules compute through runtime helpers)
           **{getattr(scipy.linalg, n): f"scipy.linalg.{n}" for n in (
               "solve_triangular", "cholesky", "cho_factor", "cho_solve", "expm")},
           **{getattr(scipy.linalg, n): f"np.linalg.{n}" for n in ("det", "inv", "solve")},
           # np.row_stack is another name of np.vstack (gone from NumPy 2.x releases)
           **({np.row_stack: "np.vstack"} if hasattr(np, "row_stack") else {})}


def _calls():
    return [(obj, nargs, rule) for obj, nargs, rule in all_rules() if not isinstance(obj, type)]


def test_every_emitted_name_is_derived_from_its_function():
    wrong = [(obj, rule.emit) for obj, _, rule in _calls()
             if rule.emit != RENAMED.get(obj, None) and rule.emit != spelled(obj)]
    assert not wrong
    assert lookup(np.amax, 1) is lookup(np.max, 1)


def test_spelled_names_each_namespace():
    assert [spelled(f) for f in (np.sin, np.abs, np.linalg.solve, __import__("math").log,
                                 runtime.sum_vjp_axis, builtins.max)] == \
        ["np.sin", "np.absolute", "np.linalg.solve", "math.log", "rt.sum_vjp_axis", "max"]
    with pytest.raises(ValueError, match="not a function of numpy"):
        spelled(lambda v: v)
    with pytest.raises(ValueError, match="not a helper of s2s_ad.runtime"):
        rt_name(np.sum)


def test_array_methods_are_the_rules_spellings():
    declared = {m: obj for obj, _, rule in _calls() for m in rule.methods
                if obj not in (np.amax, np.amin)}
    assert array_methods() == declared
    assert {"sum", "max", "reshape", "flatten", "take", "cumsum"} <= set(declared)
    assert array_methods()["flatten"] is np.ravel
    assert not hasattr(expressions, "ARRAY_METHODS")  # normalize asks the rules each time


def test_views_are_the_rules_that_say_so():
    views = {obj for obj, _, rule in _calls() if rule.view}
    assert views == {np.reshape, np.transpose, np.ravel, np.atleast_1d, np.atleast_2d,
                     np.atleast_3d, np.real, np.real_if_close,
                     # issue 23: NumPy returns views of the operand (diag/diagonal: read-only)
                     np.moveaxis, np.swapaxes, np.rollaxis, np.squeeze, np.expand_dims,
                     np.flip, np.flipud, np.fliplr, np.rot90, np.diag, np.diagonal,
                     runtime.section}
    assert all(returns_view(v) for v in views)
    assert not any(returns_view(f) for f in (np.copy, np.sum, np.sin, None))


def test_only_the_gradient_code_helpers_fill_the_tangent_slot():
    """Forward mode reads a tangent template from the slot only for the helpers of
    generated gradient code (``runtime_rules.SLOPES``); the tables of users' functions
    say how a tangent goes through them by other means (``tangent_rules``)."""
    from s2s_ad.rules.runtime_rules import SLOPES

    assert {obj for obj, _, rule in all_rules() if rule.tangent is not None} == set(SLOPES)


def test_a_misspelt_runtime_helper_fails_when_registered():
    class Fresh:  # a callee no table knows
        pass

    with pytest.raises(ValueError, match="no helper 'reshape_lik'"):
        register(Fresh, Rule("fresh", ("x",), {"x": "rt.reshape_lik(g, x)"}))
    with pytest.raises(SyntaxError):
        register(Fresh, Rule("fresh", ("x",), {"x": "g *"}))
    assert lookup(Fresh, 1) is None


def test_a_method_cannot_spell_two_functions():
    with pytest.raises(ValueError, match="'sum' already spells"):
        primitive(np.nansum, ("x",), {"x": "g"}, methods=("sum",))
    assert lookup(np.nansum, 1) is None


def test_kind_functions_replace_the_join_and_pow_strings():
    kinds = {rule.kind for _, _, rule in all_rules() if isinstance(rule.kind, str)}
    assert kinds <= {"float", "int", "bool", "none"}
    pow_rule = lookup(builtins.pow, 2)
    two = gast.Constant(value=2, kind=None)
    assert pow_rule.result_kind(["int", None], [None, two]) == "int"
    assert pow_rule.result_kind(["float", None], [None, two]) is None
    add = [rule for op, _, rule in all_rules() if op is gast.Add][0]
    assert add.result_kind(["int", "float"], []) == "float"


def test_every_runtime_helper_named_in_the_compiler_or_rules_exists():
    """Rules and the compiler name helpers as ``rt.<name>`` in template text (checked
    when parsed) or by reference (``rt_name(SUM.vjp_axis)``), never built from parts."""
    root = Path(s2s_ad.__file__).parent
    missing, built = [], []
    for path in [*(root / "rules").glob("*.py"), *(root / "compiler").rglob("*.py")]:
        text = path.read_text()
        missing += [f"{path.name}: rt.{n}" for n in re.findall(r"\brt\.(\w+)", text)
                    if not hasattr(runtime, n) and n != "no_such_helper"]  # registry's doctest
        built += [f"{path.name}: {m}" for m in re.findall(r"rt\.\{\w*\}", text)]
    assert not missing, missing
    assert not built, f"helper names built from strings: {built}"


def test_list_rules_carry_their_reverse_step():
    """The pullbacks of growing lists are builders of reverse-pass statements, held by
    their rules (set by compiler/reverse/lists.py), not placeholders beside a table."""
    from s2s_ad.compiler.reverse import gradient_code, lists

    by_pass = {obj for obj, _, rule in _calls()
               if BY_REVERSE_PASS in rule.adjoints.values()}
    built = {obj: rule.reverse for obj, _, rule in _calls() if rule.reverse is not None}
    assert by_pass == set(built)
    lists_built = {obj: b for obj, b in built.items() if b is not gradient_code.no_transpose}
    assert lists_built == {runtime.appended: lists.append_item,
                           runtime.list_array: lists.as_array,
                           **dict.fromkeys((runtime.list_concatenate, runtime.list_hstack,
                                            runtime.list_vstack), lists.join_items)}
    # the helpers of gradient code forward mode reads again: their pullback raises
    assert set(built) - set(lists_built) <= HELPERS
    assert all(set(rule.adjoints.values()) == {BY_REVERSE_PASS}
               for obj, _, rule in _calls() if obj in built)


def _module(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_entry_makes_a_numpy_function_differentiable_on_both_paths(tmp_path):
    """The acceptance of issue 21: a NumPy function with a derivative is one entry."""
    survey = _module(tmp_path, "survey_bearings", (
        "def east_offset(bearings_deg, distances):\n"
        "    return np.sum(distances * np.sin(np.ldexp(bearings_deg, -6)))\n"))
    bearings, distances = np.array([10.0, 45.0, 170.0]), np.array([1.5, 2.0, 0.5])
    with pytest.raises(s2s_ad.NonDifferentiableError, match="ldexp"):
        s2s_ad.gradient(survey.east_offset)(bearings, distances)
    primitive(np.ldexp, ("x", "n"), {"x": "g * np.exp2(n)"}, kind=floats, elementwise=True)
    try:
        check_grads(survey.east_offset, bearings, distances)
    finally:
        unregister(np.ldexp)


def test_an_entry_without_its_rule_table_case_fails_the_audit():
    import test_rule_table

    primitive(np.ldexp, ("x", "n"), {"x": "g * np.exp2(n)"}, kind=floats, elementwise=True)
    try:
        with pytest.raises(AssertionError, match="ldexp"):
            test_rule_table.test_every_registered_rule_has_a_table_entry()
    finally:
        unregister(np.ldexp)
    test_rule_table.test_every_registered_rule_has_a_table_entry()


def test_the_readme_entry_is_a_working_entry():
    readme = (Path(s2s_ad.__file__).parent.parent / "README.md").read_text()
    entry = re.search(r"```python\n(primitive\(np\.ldexp.*?)```", readme, re.DOTALL).group(1)
    exec(entry, {"np": np, "primitive": primitive, "floats": floats})  # noqa: S102
    try:
        rule = lookup(np.ldexp, 2)
        assert (rule.emit, rule.params, rule.elementwise) == ("np.ldexp", ("x", "n"), True)
    finally:
        unregister(np.ldexp)


def test_a_rule_registered_or_removed_later_is_seen_by_the_same_function(tmp_path):
    """Rules are a table of the one registry: registering or removing one bumps the
    generation, so a function differentiated before is transformed again (not stale)."""
    survey = _module(tmp_path, "survey_again", (
        "def north_offset(bearings_deg, distances):\n"
        "    return np.sum(distances * np.cos(np.ldexp(bearings_deg, -6)))\n"))
    bearings, distances = np.array([20.0, 60.0, 135.0]), np.array([1.0, 2.5, 0.75])
    north = s2s_ad.differentiable(survey.north_offset, jit=False)
    with pytest.raises(s2s_ad.NonDifferentiableError, match="ldexp"):
        s2s_ad.gradient(north)(bearings, distances)
    primitive(np.ldexp, ("x", "n"), {"x": "g * np.exp2(n)"}, kind=floats, elementwise=True)
    try:
        d_bearings, _ = s2s_ad.gradient(north)(bearings, distances)
        # d/db sum(d * cos(b / 64)) = -d * sin(b / 64) / 64
        expected = -distances * np.sin(np.ldexp(bearings, -6)) / 64.0
        np.testing.assert_allclose(d_bearings, expected, rtol=1e-12)
    finally:
        unregister(np.ldexp)
    with pytest.raises(s2s_ad.NonDifferentiableError, match="ldexp"):
        s2s_ad.gradient(north)(bearings, distances)
