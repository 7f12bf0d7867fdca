"""The primitive model (issue 21): one rule object carries everything about a primitive.

The name generated code calls is derived from the function object; the array-method
spellings (``x.sum()``), the views (``np.reshape``) and the reverse-pass builders are
fields of the rules, and the compiler reads them from there, so no second list can
fall out of step.
"""

from __future__ import annotations

import builtins
import re
from pathlib import Path

import gast
import numpy as np
import pytest

import s2s_ad
from s2s_ad import runtime
from s2s_ad.compiler.normalize.expressions import ARRAY_METHODS
from s2s_ad.rules import all_rules, array_methods, lookup, returns_view
from s2s_ad.rules.registry import Rule, primitive, register, rt_name, spelled

# emitted names that are not the object's own: List() is how Numba spells a typed list,
# and np.amax/np.amin are other names of np.max/np.min (their rule is np.max's)
RENAMED = {runtime.new_list: "List", np.amax: "np.max", np.amin: "np.min"}


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
    assert ARRAY_METHODS == {**declared, "astype": None}
    assert {"sum", "max", "reshape", "flatten", "take", "cumsum"} <= set(ARRAY_METHODS)
    assert array_methods()["flatten"] is np.ravel


def test_views_are_the_rules_that_say_so():
    views = {obj for obj, _, rule in _calls() if rule.view}
    assert views == {np.reshape, np.transpose, np.ravel, np.atleast_1d, np.atleast_2d,
                     np.atleast_3d}
    assert all(returns_view(v) for v in views)
    assert not any(returns_view(f) for f in (np.copy, np.sum, np.sin, None))


def test_the_tangent_slot_is_empty_until_forward_mode():
    assert all(rule.tangent is None for _, _, rule in all_rules())


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
