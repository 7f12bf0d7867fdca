"""Run the gradient fuzzer: generate programs, check them, report the failures.

    python tests/fuzz/run_fuzz.py --seed 1 --count 10000 [--jit 500] [--out report.md]

Program ``k`` of a run is ``program_from_seed(seed * 1_000_000 + k)``, so any
program of a report can be regenerated alone (``--only K``). The first
``--jit`` programs are also checked on the Numba path (``jit=True``).

The report has, for each failing program (WRONG or CRASH), its source, the
arguments, expected and got, the same check on the program with every
user-chosen name replaced by a neutral one (does renaming fix it?), and, with
``--shrink``, a smaller program that fails the same way.

Set ``S2S_AD_CACHE_DIR`` to a private directory: every program writes its
generated modules there.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle  # noqa: E402
from oracle import (  # noqa: E402
    Outcome,
    check_source_at,
    describe,
    renamed_program,
)
from programs import Program, program_from_seed  # noqa: E402
from round5_oracle import check_round5_program  # noqa: E402
from round5_programs import FAMILIES, Round5Program, round5_program_from_seed  # noqa: E402
from struct_oracle import check_struct_program  # noqa: E402
from struct_programs import StructProgram, struct_program_from_seed  # noqa: E402

# Construct groups whose outcomes the summary breaks down (round 3): a program is in a
# group when one of its features starts with the prefix.
GROUPS = {"growing lists": ("list-grow", "list-display-grown"),
          "comprehensions": ("comp-",),
          "index/mask writes": ("index-write-",)}


def groups_of(program: Program) -> list[str]:
    return [g for g, prefixes in GROUPS.items()
            if any(f.startswith(prefixes) for f in program.features)]


def families_of(program) -> bool:
    """Is this a round-5 program (with a family)?"""
    return isinstance(program, Round5Program)


def generate(seed: int, max_statements: int, structures: bool,
             families: tuple[str, ...] | None = None) -> Program | StructProgram:
    if families is not None:  # round 5
        return round5_program_from_seed(seed, families)
    if structures:
        return struct_program_from_seed(seed, max_statements=max_statements)
    return program_from_seed(seed, max_statements=max_statements)


def run_one(seed: int, directory: Path, jit: bool, max_statements: int,
            structures: bool = False, families: tuple[str, ...] | None = None
            ) -> tuple[Program | StructProgram | Round5Program, Outcome]:
    program = generate(seed, max_statements, structures, families)
    check = check_struct_program if structures else oracle.check_program
    if families is not None:
        check = check_round5_program
    if jit:  # compiled code can kill the process: check it in a child
        outcome = oracle.check_isolated(program, directory, jit=True, seed=seed, check=check)
    else:
        outcome = check(program, directory, jit=False, seed=seed)
    return program, outcome


def rename_check(program: Program, outcome: Outcome, directory: Path, jit: bool,
                 seed: int) -> tuple[str, Outcome]:
    neutral = renamed_program(program)
    renamed = check_source_at(neutral.source, neutral.fname, outcome.args,
                              program.array_result, directory, jit=jit, seed=seed,
                              updates=neutral.updates, twin=neutral.twin)
    return neutral.source, renamed


def report_entry(k: int, seed: int, program: Program, outcome: Outcome,
                 renamed: tuple[str, Outcome] | None, shrunk: str | None) -> str:
    lines = [f"### program {k} (seed {seed}): {outcome.signature}", "",
             f"features: {', '.join(sorted(program.features))}", "", "```python",
             program.source.rstrip(), "```", "",
             f"args: `{program.fname}({program.describe_point(outcome.args or ())})`", ""]
    if families_of(program):
        lines[2] = f"family: {program.family}, variant {program.variant}"
    if program.twin:
        lines += [f"second closure: `{program.twin}`", ""]
    if program.updates:
        lines += [f"globals changed between calls: `{program.describe_updates()}`", ""]
    lines += ["```", describe(outcome), "```"]
    for note in outcome.notes:
        lines += ["", "```", note.rstrip(), "```"]
    if renamed is not None:
        source, r = renamed
        lines += ["", f"with neutral names: **{r.status}** ({r.check})", "", "```python",
                  source.rstrip(), "```"]
        if r.status == "OK":
            lines += ["", "renaming fixes it"]
        elif r.got is not None:
            lines += ["", "```", describe(r), "```"]
    if shrunk is not None:
        lines += ["", "shrunk:", "", "```python", shrunk.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--jit", type=int, default=0,
                        help="check the first JIT programs on the Numba path too")
    parser.add_argument("--start", type=int, default=0, help="first program number")
    parser.add_argument("--jit-statements", type=int, default=None,
                        help="statement budget of the programs checked with Numba")
    parser.add_argument("--only", type=int, default=None, help="run program K alone")
    parser.add_argument("--max-statements", type=int, default=6)
    parser.add_argument("--out", type=Path, default=None, help="write a Markdown report")
    parser.add_argument("--shrink", action="store_true",
                        help="shrink the first failure of each distinct signature")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where program files go (default: a temporary directory)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--structures", action="store_true",
                        help="round 4: programs over dataclasses, dicts and named tuples "
                             "(struct_programs.py, checked by struct_oracle.py; no renaming "
                             "or shrinking)")
    parser.add_argument("--round5", action="store_true",
                        help="round 5 (issue 20): redefinitions, registrations, in-place "
                             "changes before the pullback, aliases, list indices, int/bool "
                             "mixing, nested lambdas, 0-d arrays (round5_programs.py, checked "
                             "by round5_oracle.py; no renaming or shrinking)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="with --round5: the comma-separated families to generate "
                             f"(default all: {', '.join(FAMILIES)})")
    parser.add_argument("--renamed", action="store_true",
                        help="also check every program with neutral names (v0, v1, ...) "
                             "and count those outcomes separately: failures that remain "
                             "do not depend on the names")
    parser.add_argument("--hash-seed", default="0",
                        help="PYTHONHASHSEED to run under (default 0). s2s_ad's generated "
                             "code depends on set iteration order, so a run is only "
                             "reproducible with a fixed hash seed; 'random' leaves it unset")
    args = parser.parse_args(argv)
    if args.hash_seed != "random" and os.environ.get("PYTHONHASHSEED") != args.hash_seed:
        env = dict(os.environ, PYTHONHASHSEED=args.hash_seed)
        os.execve(sys.executable, [sys.executable, *sys.argv], env)

    if "S2S_AD_CACHE_DIR" not in os.environ:
        print("warning: S2S_AD_CACHE_DIR is not set; generated code goes to ~/.cache/s2s_ad",
              file=sys.stderr)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="s2s_fuzz_"))
    families = tuple(args.families.split(",")) if args.round5 else None
    if families is not None and not set(families) <= set(FAMILIES):
        parser.error(f"unknown families: {sorted(set(families) - set(FAMILIES))}")
    plain = args.structures or args.round5  # no renaming or shrinking
    numbers = [args.only] if args.only is not None else range(args.start,
                                                               args.start + args.count)
    counts: collections.Counter = collections.Counter()
    jit_counts: collections.Counter = collections.Counter()
    signatures: collections.Counter = collections.Counter()
    jit_reasons: collections.Counter = collections.Counter()
    refusals: collections.Counter = collections.Counter()
    refused_programs: dict[str, list[int]] = {}  # reason -> program numbers
    features: collections.Counter = collections.Counter()  # programs using each construct
    by_group: dict[str, collections.Counter] = {g: collections.Counter() for g in GROUPS}
    by_family: dict[str, collections.Counter] = {}  # round 5: outcomes per family
    failures: list[tuple[int, int, Program, Outcome]] = []
    renamed_counts: collections.Counter = collections.Counter()
    renamed_signatures: collections.Counter = collections.Counter()
    renamed_failures: list[tuple[int, int, Program, Outcome]] = []
    started = time.time()
    for n, k in enumerate(numbers):
        seed = args.seed * 1_000_000 + k
        jit = n < args.jit
        size = args.jit_statements if jit and args.jit_statements else args.max_statements
        try:
            program, outcome = run_one(seed, directory, jit, size, args.structures, families)
        except Exception as exc:  # a harness bug must not end a long run
            program = generate(seed, size, args.structures, families)
            outcome = Outcome("INVALID", "harness", f"{type(exc).__name__}: {exc}")
        if families is not None:  # signatures per family
            outcome.check = f"{program.family}/{outcome.check}"
        counts[outcome.status] += 1
        features.update(program.features)
        for group in groups_of(program):
            by_group[group][outcome.status] += 1
        if families is not None:
            family = by_family.setdefault(program.family, collections.Counter())
            family[outcome.status] += 1
            if jit and outcome.jit:
                family[f"numba {outcome.jit}"] += 1
        if outcome.status == "REFUSED":
            reason = oracle.refusal_reason(outcome.detail)
            if outcome.check == "unlocated":
                reason = f"(NOT LOCATED) {reason}"
            if families is not None:
                must = " (MUST WORK)" if "must-work" in outcome.check else ""
                reason = f"{program.family}{must}, {outcome.error_type}: {reason}"
            refusals[reason] += 1
            refused_programs.setdefault(reason, []).append(k)
        if jit and outcome.status in ("OK", "WRONG", "CRASH") and outcome.jit:
            jit_counts[outcome.jit] += 1
            if outcome.jit == "JIT_REFUSED":
                jit_reasons[outcome.jit_detail[:160]] += 1
        if args.renamed and not plain:
            neutral = renamed_program(program)
            # the neutral-name twin runs on the Python path only (it is about names)
            try:
                r = oracle.check_program(neutral, directory, jit=False, seed=seed)
            except Exception as exc:
                r = Outcome("INVALID", "harness", f"{type(exc).__name__}: {exc}")
            renamed_counts[r.status] += 1
            if r.status in ("WRONG", "CRASH"):
                renamed_signatures[r.signature] += 1
                renamed_failures.append((k, seed, neutral, r))
        if outcome.status in ("WRONG", "CRASH") or "must-work" in outcome.check:
            signatures[outcome.signature] += 1
            failures.append((k, seed, program, outcome))
            if not args.quiet:
                print(f"[{k}] {outcome.signature}", flush=True)
        if not args.quiet and (n + 1) % 100 == 0:
            rate = (n + 1) / (time.time() - started)
            print(f"... {n + 1} programs, {rate:.1f}/s, {dict(counts)}", flush=True)
    elapsed = time.time() - started

    hash_seed = os.environ.get("PYTHONHASHSEED", "random")
    summary = [f"seed {args.seed}, PYTHONHASHSEED={hash_seed}, "
               f"programs {args.start}..{args.start + len(numbers) - 1} "
               f"({len(numbers)}), Numba on the first {min(args.jit, len(numbers))}, "
               f"{elapsed:.0f} s, {datetime.date.today().isoformat()}",
               "outcomes: " + ", ".join(f"{s} {counts[s]}" for s in
                                        ("OK", "WRONG", "CRASH", "REFUSED", "SKIP", "INVALID")),
               "numba: " + (", ".join(f"{s} {c}" for s, c in sorted(jit_counts.items()))
                            or "not run")]
    for family, c in sorted(by_family.items()):
        summary.append(f"family {family}: " + ", ".join(f"{s} {n}" for s, n in sorted(c.items())))
    for group, c in by_group.items():
        if families is not None:
            break
        summary.append(f"programs with {group}: {sum(c.values())} (" + ", ".join(
            f"{s} {c[s]}" for s in ("OK", "WRONG", "CRASH", "REFUSED", "SKIP", "INVALID")
            if c[s]) + ")")
    round3 = ("list-", "comp-", "index-write-", "scratch-array", "struct-")
    if families is not None:
        round3 = ("@",)  # round 5 programs' features are their families and variants
    summary.append("constructs (programs using each): " + ", ".join(
        f"{f} {c}" for f, c in sorted(features.items()) if f.startswith(round3)))
    if args.renamed:
        summary.append("with neutral names: " + ", ".join(
            f"{s} {renamed_counts[s]}" for s in
            ("OK", "WRONG", "CRASH", "REFUSED", "SKIP", "INVALID")))
    print("\n".join(summary))
    for sig, c in signatures.most_common():
        print(f"  {c:5d}  {sig}")
    if args.renamed:
        print("with neutral names:")
        for sig, c in renamed_signatures.most_common():
            print(f"  {c:5d}  {sig}")

    def programs_of(reason: str) -> str:
        numbers = refused_programs[reason]
        more = ", ..." if len(numbers) > 10 else ""
        return f"programs {', '.join(map(str, numbers[:10]))}{more}"

    for reason, c in refusals.most_common(10):
        print(f"  refused {c}x: {reason} ({programs_of(reason)})")
    for reason, c in jit_reasons.most_common(10):
        print(f"  numba refused {c}x: {reason}")

    if args.out is not None:
        entries = []
        shrunk_done: set[str] = set()
        per_signature: collections.Counter = collections.Counter()
        for k, seed, program, outcome in failures:
            per_signature[outcome.signature] += 1
            if families is not None and per_signature[outcome.signature] > 2:
                continue  # round 5: two examples per signature
            jit = outcome.check.startswith("numba")
            renamed = None
            if not plain:
                try:
                    renamed = rename_check(program, outcome, directory, jit, seed)
                except Exception as exc:  # keep the report going
                    renamed = ("", Outcome("CRASH", "rename", str(exc)))
            shrunk = None
            if args.shrink and not plain and outcome.signature not in shrunk_done:
                from shrink import shrink_program

                shrunk_done.add(outcome.signature)
                shrunk = shrink_program(program, outcome, directory, jit=jit, seed=seed)
            entries.append(report_entry(k, seed, program, outcome, renamed, shrunk))
        text = ["# s2s_ad fuzz report", "", *[f"- {s}" for s in summary], "",
                "## Failure signatures", ""]
        text += [f"- {c} x `{sig}`" for sig, c in signatures.most_common()]
        if refusals:
            text += ["", "## Refusals (NonDifferentiableError)", ""]
            text += [f"- {c} x {reason} ({programs_of(reason)})"
                     for reason, c in refusals.most_common()]
        text += ["", "## Constructs (programs using each)", "",
                 ", ".join(f"{f} {c}" for f, c in sorted(features.items()))]
        if jit_reasons:
            text += ["", "## Numba refusals (JitError)", ""]
            text += [f"- {c} x {reason}" for reason, c in jit_reasons.most_common()]
        if args.renamed:
            text += ["", "## Failure signatures with neutral names", ""]
            text += [f"- {c} x `{sig}`" for sig, c in renamed_signatures.most_common()]
        text += ["", "## Failing programs", ""] + entries
        if args.renamed and renamed_failures:
            text += ["", "## Failing programs with neutral names", ""]
            seen: collections.Counter = collections.Counter()
            for k, seed, program, outcome in renamed_failures:
                seen[outcome.signature] += 1
                if seen[outcome.signature] > 3:
                    continue  # three examples per signature
                shrunk = None
                if args.shrink and seen[outcome.signature] == 1:
                    from shrink import shrink_program

                    jit = outcome.check.startswith("numba")
                    shrunk = shrink_program(program, outcome, directory, jit=jit, seed=seed)
                text.append(report_entry(k, seed, program, outcome, None, shrunk))
        args.out.write_text("\n".join(text))
        print(f"report written to {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
