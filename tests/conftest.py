"""Test setup: the examples directory is importable (tests reuse its workloads), and
the modules with the longest tests run first, so that two workers finish together."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

# the longest tests (Numba compiles of whole models), started first (pytest-xdist
# hands tests out in collection order)
FIRST = ("test_nn.py", "test_kernel_gradients.py", "test_structures.py", "test_fuzz.py",
         "test_rules_more.py", "test_issue20_rules.py")


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        name = item.path.name
        return FIRST.index(name) if name in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: the order within a module is kept
