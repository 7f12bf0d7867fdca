"""The runtime's helpers are found by name and by reference (issue 21).

Every helper generated code calls as ``rt.<name>`` is bound to that name in its
module (``def sum_items`` or ``sum_vjp_axis = SUM.vjp_axis``: grep finds it), its
``__name__`` is that name (the rules derive the emitted name from the object), and
the index in ``s2s_ad/runtime/__init__.py``'s docstring names every module and
exactly each one's helpers.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from s2s_ad import runtime
from s2s_ad.runtime import reductions

MODULES = sorted(m.name for m in pkgutil.iter_modules(runtime.__path__))
HELPERS = sorted(name for m in MODULES
                 for name in getattr(importlib.import_module(f"s2s_ad.runtime.{m}"), "__all__", []))
# names bound to another helper: (alias, the helper it is)
ALIASES = {"expand_reduced": "sum_vjp_axis",
           **{f"{r}_vjp_all_keepdims": f"{r}_vjp_all"
              for r in ("sum", "mean", "prod", "max", "min")}}


def _index() -> dict[str, str]:
    """``{module: its bullet's text}`` of the docstring's index."""
    doc = runtime.__doc__
    text = doc[doc.index("by topic"):doc.index("What Numba")]
    index = {}
    for bullet in re.split(r"\n- ", text)[1:]:
        if bullet.startswith("private: "):
            index.update(dict.fromkeys(re.findall(r"``(\w+)``", bullet), "private"))
        else:
            index[re.match(r"``(\w+)``", bullet).group(1)] = bullet
    return index


def test_every_helper_is_bound_in_its_module_source_under_its_own_name():
    unbound = []
    for module_name in MODULES:
        module = importlib.import_module(f"s2s_ad.runtime.{module_name}")
        source = Path(module.__file__).read_text()
        for name in getattr(module, "__all__", []):
            found = re.search(rf"^(def {name}\(|class {name}\(|{name} = |\w+ = {name} = )",
                              source,
                              re.MULTILINE)
            if not found:
                unbound.append(f"{module_name}.{name}")
    assert not unbound, f"helpers no `def name` or `name = ` defines: {unbound}"


def test_each_helper_is_named_what_generated_code_calls():
    misnamed = [name for name in HELPERS
                if getattr(runtime, name).__name__ != ALIASES.get(name, name)]
    assert not misnamed


def test_the_reduction_forms_are_their_rows():
    for row, forms in zip(reductions.REDUCTIONS, (reductions.SUM, reductions.MEAN,
                                                   reductions.PROD, reductions.MAX,
                                                   reductions.MIN, reductions.NORM), strict=True):
        assert all(f.__name__.startswith(row.name + "_") for f in forms)
        assert forms.vjp_axis is getattr(runtime, f"{row.name}_vjp_axis")


def test_the_docstring_index_names_every_module_and_its_helpers():
    index = _index()
    assert sorted(index) == MODULES
    for name, text in index.items():
        if text == "private":
            continue
        module = importlib.import_module(f"s2s_ad.runtime.{name}")
        mentioned = set(re.findall(r"``(\w+)``", text.removeprefix(f"``{name}``:")))
        helpers = set(getattr(module, "__all__", []))
        assert mentioned <= helpers | set(vars(module)), (name, mentioned - helpers)
        if name == "reductions":  # forms named by pattern: every row must be named
            assert all(row.name in text for row in reductions.REDUCTIONS)
        else:
            assert helpers <= mentioned, (name, helpers - mentioned)


def test_the_numba_table_names_helpers_that_exist():
    doc = runtime.__doc__
    table = doc[doc.index("What Numba"):]
    named = []
    for part in re.findall(r"->\s*([^;\n]*)", table):
        for word in part.split(","):
            found = re.fullmatch(r"\s*(\w+)(?:\s*\(.*)?\s*", word)
            if found and not found.group(1).isdigit():
                named.append(found.group(1))
    assert "sum_axis_keepdims" in named and "take_axis" in named
    missing = [n for n in named if not hasattr(runtime, n)]
    assert not missing, f"the Numba table names helpers that do not exist: {missing}"
