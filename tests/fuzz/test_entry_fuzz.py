"""The entry-point fuzzer (``entry_fuzz.py``) as a test: every variation through two entry
points and every entry point through several variations on the Python path, and a few
on the Numba path, from fixed seeds.

Each (variation, mode) pair is checked on the first program of ``S2S_AD_FUZZ_ENTRY_SEED``
(default 3) that the variation applies to; ``S2S_AD_FUZZ_ENTRY_JIT`` pairs (default 3,
spread over the variations) also run with Numba. Larger runs: ``entry_fuzz.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from entry_cases import VARIATIONS  # noqa: E402
from entry_fuzz import FAILURES, MODES, run_one  # noqa: E402

SEED = int(os.environ.get("S2S_AD_FUZZ_ENTRY_SEED", "3"))
JIT = int(os.environ.get("S2S_AD_FUZZ_ENTRY_JIT", "3"))
# each variation through two entry points, every entry point through four or five
# variations (the whole grid: entry_fuzz.py --variation/--mode, or larger runs)
PAIRS = [(v, MODES[(k + shift) % len(MODES)]) for k, v in enumerate(VARIATIONS)
         for shift in (0, 3)]
# every len(PAIRS) // JIT-th pair, so the Numba ones cover several variations and modes
JIT_PAIRS = PAIRS[::max(1, len(PAIRS) // JIT)][:JIT] if JIT else []


@pytest.fixture(scope="module")
def entry_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("entry_programs")


def _check(variation: str, mode: str, directory: Path, jit: bool) -> None:
    for k in range(40):
        seed = SEED * 1_000_000 + 500_000 + k
        status, detail, case, _ = run_one(seed, directory, jit, variation, mode)
        if status == "skip" and case is None:
            continue  # no reliable point, or the variation does not apply: the next program
        assert status not in FAILURES, f"{status}\n{case.source if case else ''}\n{detail}"
        return
    pytest.fail(f"no program of seed {SEED} takes {variation}")


@pytest.mark.parametrize(("variation", "mode"), PAIRS)
def test_entry_point_python_path(entry_dir, variation, mode):
    _check(variation, mode, entry_dir, jit=False)


@pytest.mark.parametrize(("variation", "mode"), JIT_PAIRS)
def test_entry_point_numba_path(entry_dir, variation, mode):
    _check(variation, mode, entry_dir, jit=True)
