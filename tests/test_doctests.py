"""Every docstring example in ``s2s_ad`` runs and prints what it shows.

The stage modules show their own before/after on a small example (as
Pythran's passes do), so this is also a golden test of each stage.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from s2s_ad.compiler.pipeline import PIPELINE

ROOT = Path(__file__).resolve().parent.parent / "s2s_ad"
MODULES = sorted(".".join(p.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(
    ".__init__") for p in ROOT.rglob("*.py"))
STAGES = list(dict.fromkeys(stage.module for stage in PIPELINE))  # the modules, in order


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"


@pytest.mark.parametrize("name", STAGES)
def test_every_stage_shows_an_example(name):
    module = importlib.import_module(name)
    examples = doctest.DocTestParser().get_examples(module.__doc__)
    assert len(examples) >= 2, f"{name}'s docstring has no before/after example"
