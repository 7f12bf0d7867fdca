"""The gradient fuzzer as a test: random programs with colliding names, checked by the oracle.

``S2S_AD_FUZZ_N`` programs (default 90) on the Python path and
``S2S_AD_FUZZ_JIT`` (default 4) of them also on the Numba path, from a fixed
seed (``S2S_AD_FUZZ_SEED``, default 1), so every run checks the same programs.
The test fails listing every WRONG and CRASH program (source, arguments,
expected, got); REFUSED (``NonDifferentiableError``) and SKIP (no smooth
evaluation point) are fine. See ``run_fuzz.py`` for a report with
renaming and shrinking, and ``README.md``.

Round 4 adds ``S2S_AD_FUZZ_STRUCT_N`` structure programs (default 60; dataclasses,
dicts and named tuples, ``struct_programs.py``) on the Python path and
``S2S_AD_FUZZ_STRUCT_JIT`` (default 5) on the Numba path, checked by
``struct_oracle.py``; there a refusal must also name its line.

Round 5 (issue 20) checks each family of ``round5_programs.FAMILIES`` (or those
named in ``S2S_AD_FUZZ_R5_FAMILIES``, comma-separated) as its own test:
``S2S_AD_FUZZ_R5_N`` programs in all (default 100, split evenly) on the Python
path and ``S2S_AD_FUZZ_R5_JIT`` per family with Numba (default 1; 2 for
``numba-mix``), checked by ``round5_oracle.py``; a refusal where the family
must work (a redefined helper, a read-only alias, a 0-d read, ...) fails too.

Parallel loops (issue 25): the hand-made adversarial programs of ``parallel_fuzz.py``,
and in the slow tier ``S2S_AD_FUZZ_PARALLEL_N`` programs (default 30) whose top-level
range loops become ``numba.prange``, checked on the Python path (right, or refused at a
line of the program).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle  # noqa: E402
import parallel_fuzz  # noqa: E402
from programs import program_from_seed  # noqa: E402
from round5_oracle import check_round5_program  # noqa: E402
from round5_programs import (  # noqa: E402
    FAMILIES,
    round5_program_from_seed,
    without_changes,
)
from struct_oracle import check_struct_program  # noqa: E402
from struct_programs import struct_program_from_seed  # noqa: E402

N = int(os.environ.get("S2S_AD_FUZZ_N", "90"))
N_JIT = int(os.environ.get("S2S_AD_FUZZ_JIT", "4"))
SEED = int(os.environ.get("S2S_AD_FUZZ_SEED", "1"))
STRUCT_N = int(os.environ.get("S2S_AD_FUZZ_STRUCT_N", "60"))
STRUCT_JIT = int(os.environ.get("S2S_AD_FUZZ_STRUCT_JIT", "5"))
R5_FAMILIES = tuple(f for f in os.environ.get("S2S_AD_FUZZ_R5_FAMILIES", ",".join(FAMILIES))
                    .split(",") if f)
R5_N = int(os.environ.get("S2S_AD_FUZZ_R5_N", "100"))
R5_JIT = int(os.environ.get("S2S_AD_FUZZ_R5_JIT", "1"))
PARALLEL_N = int(os.environ.get("S2S_AD_FUZZ_PARALLEL_N", "30"))
# Programs on the Numba path are smaller: each costs a Numba compilation.
JIT_STATEMENTS = 3


def _run(numbers, directory: Path, jit: bool, max_statements: int,
         structures: bool = False, family: str | None = None) -> tuple[dict, list[str]]:
    counts: dict[str, int] = {}
    failures: list[str] = []
    generate = struct_program_from_seed if structures else program_from_seed
    check = check_struct_program if structures else oracle.check_program
    if family is not None:
        check = check_round5_program

        def generate(seed, max_statements):
            return round5_program_from_seed(seed, (family,))
    for k in numbers:
        seed = SEED * 1_000_000 + k
        program = generate(seed, max_statements=max_statements)
        if jit:  # a hard crash in compiled code must not end the test run
            outcome = oracle.check_isolated(program, directory, jit=True, seed=seed,
                                            check=check)
        else:
            outcome = check(program, directory, jit=False, seed=seed)
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if jit and outcome.jit:
            key = f"numba {outcome.jit}"
            counts[key] = counts.get(key, 0) + 1
        if outcome.status in ("WRONG", "CRASH") or outcome.check == "unlocated" or \
                outcome.check.startswith("must-work"):
            steps = f"then: {program.describe_updates()}\n" if family and program.updates else ""
            failures.append(
                f"--- program {k} (seed {seed}): {outcome.signature}\n{program.source}"
                f"args: {program.fname}({program.describe_point(outcome.args or ())})\n"
                f"{steps}{oracle.describe(outcome)}\n")
    return counts, failures


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    os.environ.setdefault("S2S_AD_CACHE_DIR", str(tmp_path_factory.mktemp("s2s_cache")))
    return tmp_path_factory.mktemp("fuzz_programs")


def test_python_path(fuzz_dir):
    counts, failures = _run(range(N), fuzz_dir, jit=False, max_statements=6)
    summary = f"{N} programs (seed {SEED}), Python path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


@pytest.mark.skipif(N_JIT == 0, reason="S2S_AD_FUZZ_JIT=0")
def test_numba_path(fuzz_dir):
    # numbers after the Python-path ones, so these are other programs
    counts, failures = _run(range(N, N + N_JIT), fuzz_dir, jit=True,
                            max_statements=JIT_STATEMENTS)
    summary = f"{N_JIT} programs (seed {SEED}), Numba path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


@pytest.mark.skipif(STRUCT_N == 0, reason="S2S_AD_FUZZ_STRUCT_N=0")
def test_structures_python_path(fuzz_dir):
    counts, failures = _run(range(STRUCT_N), fuzz_dir, jit=False, max_statements=6,
                            structures=True)
    summary = f"{STRUCT_N} structure programs (seed {SEED}), Python path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


@pytest.mark.skipif(STRUCT_JIT == 0, reason="S2S_AD_FUZZ_STRUCT_JIT=0")
def test_structures_numba_path(fuzz_dir):
    counts, failures = _run(range(STRUCT_N, STRUCT_N + STRUCT_JIT), fuzz_dir, jit=True,
                            max_statements=JIT_STATEMENTS, structures=True)
    summary = f"{STRUCT_JIT} structure programs (seed {SEED}), Numba path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


def _r5_jit_count(family: str) -> int:
    return 2 * R5_JIT if family == "numba-mix" else R5_JIT


@pytest.mark.skipif(R5_N == 0, reason="S2S_AD_FUZZ_R5_N=0")
@pytest.mark.parametrize("family", R5_FAMILIES)
def test_round5_python_path(fuzz_dir, family):
    count = max(1, R5_N // len(R5_FAMILIES))
    # program numbers apart from the other rounds' (each family draws its own programs)
    numbers = range(700_000, 700_000 + count)
    counts, failures = _run(numbers, fuzz_dir, jit=False, max_statements=0, family=family)
    summary = f"{count} round-5 {family} programs (seed {SEED}), Python path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


@pytest.mark.skipif(R5_JIT == 0, reason="S2S_AD_FUZZ_R5_JIT=0")
@pytest.mark.parametrize("family", R5_FAMILIES)
def test_round5_numba_path(fuzz_dir, family):
    count = _r5_jit_count(family)
    numbers = range(800_000, 800_000 + count)
    counts, failures = _run(numbers, fuzz_dir, jit=True, max_statements=0, family=family)
    summary = f"{count} round-5 {family} programs (seed {SEED}), Numba path: {counts}"
    print(summary)
    assert not failures, f"{summary}\n{len(failures)} failing programs:\n" + "\n".join(failures)


@pytest.mark.parametrize("family", ("redefine", "rebind", "register", "pullback-mutation",
                                    "alias-write"))
def test_round5_oracle_without_the_change(fuzz_dir, family):
    """The oracle's expectations hold where nothing changes between calls (final state
    decorated afresh, no in-place change, no alias): these pass before issue 20's fixes,
    so a failure here is the fuzzer's, not the compiler's."""
    for k in range(5):
        seed = SEED * 1_000_000 + 900_000 + k
        program = without_changes(round5_program_from_seed(seed, (family,)))
        outcome = check_round5_program(program, fuzz_dir, jit=False, seed=seed)
        assert outcome.status == "OK" or (outcome.status == "REFUSED" and program.refusal_ok), (
            f"{program.source}\n{oracle.describe(outcome)}")


@pytest.mark.slow  # about 13 s; the adversarial programs below run by default (2 s)
@pytest.mark.skipif(PARALLEL_N == 0, reason="S2S_AD_FUZZ_PARALLEL_N=0")
def test_parallel_loops_python_path(fuzz_dir):
    counts: dict[str, int] = {}
    failures = []
    for k, seed, made in parallel_fuzz.check_numbers(SEED, range(PARALLEL_N), fuzz_dir,
                                                     jit=False):
        for label, status, detail, source in made:
            counts[status] = counts.get(status, 0) + 1
            if status in parallel_fuzz.FAILURES:
                failures.append(f"--- program {k} (seed {seed}) {label}: {status}\n"
                                f"{source}\n{detail}\n")
    summary = f"{PARALLEL_N} programs (seed {SEED}) with prange loops: {counts}"
    print(summary)
    assert not failures, f"{summary}\n" + "\n".join(failures)


@pytest.mark.parametrize("name", [a[0] for a in parallel_fuzz.ADVERSARIAL])
def test_parallel_adversarial_program(fuzz_dir, name):
    _, source, args = next(a for a in parallel_fuzz.ADVERSARIAL if a[0] == name)
    status, detail = parallel_fuzz.check_adversarial(source, args, fuzz_dir, jit=False)
    assert status not in parallel_fuzz.FAILURES, f"{source}\n{status}: {detail}"
