"""Test setup: the examples directory is importable (tests reuse its workloads),
Numba optimises less, and the modules with the longest tests run first, so that two
workers finish together."""

import os
import sys
from pathlib import Path

# Tests check values, not speed: LLVM at level 0 compiles the generated code several times
# faster than the default 3 (a tests/nn/test_nn.py conv2d gradient: 48 s at 3, 14 s at 1;
# rule-table and dense-layer compiles: 43 s of CPU at 1, 30 s at 0, 2026-11-27), and
# IEEE arithmetic is the same at every level (no fastmath). These less optimised builds go
# to a compile cache of their own, never the user's.
os.environ.setdefault("NUMBA_OPT", "0")
os.environ.setdefault("S2S_AD_CACHE_DIR",
                      os.path.join(os.path.expanduser("~"), ".cache", "s2s_ad-tests"))

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

# pytest-xdist's controller imports the module of each warning a worker reports, in the
# thread that receives it: two workers' first warnings at once imported Numba twice
# concurrently ("partially initialized module 'numba.core.types'", an INTERNALERROR
# that stopped a run). Imported here first, the modules are complete before any report.
import numba  # noqa: E402, F401
import pytest  # noqa: E402

import s2s_ad  # noqa: E402, F401

# the longest tests (Numba compiles of whole models), started first (pytest-xdist
# hands tests out in collection order)
FIRST = ("test_nn.py", "test_kernel_gradients.py", "test_structures.py", "test_fuzz.py",
         "test_numpy_rules.py", "test_rule_semantics.py")


# modules whose Numba cases (parameter jit=True) the default run samples as the catalogues
# do (tests/numba_sample.py): the slow tier runs the others
SAMPLED_NUMBA = ("test_entry_points.py", "test_ragged_lists.py",
                 "test_second_order_markers.py", "test_second_order_refusals.py")


@pytest.hookimpl(tryfirst=True)  # before -m deselects the slow ones
def pytest_collection_modifyitems(config, items):
    from numba_sample import numba_marks

    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.path.name in SAMPLED_NUMBA and params.get("jit") is True:
            for mark in numba_marks(item.name):
                item.add_marker(mark)
    _longest_first(items)


def _longest_first(items):
    def rank(item) -> int:
        name = item.path.name
        return FIRST.index(name) if name in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: the order within a module is kept
