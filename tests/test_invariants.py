"""Invariants that used to be kept by hand, now derived (and checked here).

The generated-code format is a hash of s2s_ad's sources: any change to the
compiler, the rules or the runtime gives generated modules a new text, hence a
new cache key, so no module cached by another version is loaded.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import s2s_ad as ad
from s2s_ad.compiler import emit

ROOT = Path(emit.__file__).resolve().parent.parent


def test_format_is_the_hash_of_the_package_sources():
    assert emit.FORMAT == emit.sources_digest(ROOT)


def test_format_changes_when_any_source_changes(tmp_path):
    copy = tmp_path / "s2s_ad"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = emit.sources_digest(copy)
    runtime_file = copy / "runtime" / "tapes.py"
    runtime_file.write_text(runtime_file.read_text() + "\n# changed\n")
    assert emit.sources_digest(copy) != before


def test_generated_modules_carry_the_format():
    def squared(velocity):
        return velocity * velocity

    header = ad.source(squared, 2.0).splitlines()[1]
    assert header == f"# s2s_ad generated-code format {emit.FORMAT}"


def test_tests_mirror_the_package():
    """Tests live beside what they test: a folder per s2s_ad subpackage, ``api`` for the
    top-level modules (api, introspect, cli, testing, errors), ``fuzz`` for the fuzzer;
    at the top only the package-wide tests and the shared reference data."""
    tests = Path(__file__).resolve().parent
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders <= packages | {"api", "fuzz"}, folders - packages
    top = {p.name for p in tests.glob("test_*.py")}
    assert top == {"test_doctests.py", "test_examples.py", "test_invariants.py",
                   "test_layout.py", "test_workloads.py"}, top


def test_module_docstrings_name_stages_not_numbers():
    """Stages are named by the pipeline's table (``PIPELINE``); a "Stage 3" in a
    docstring would have to be renumbered by hand whenever a stage is added."""
    numbered = [f"{p.relative_to(ROOT)}: {line}" for p in sorted(ROOT.rglob("*.py"))
                for line in p.read_text().splitlines()[:3]
                if re.search(r"\b[Ss]tage \d", line)]
    assert not numbered, numbered
