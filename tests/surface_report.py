"""Run the whole NumPy/SciPy surface catalogue in both paths and print the counts.

    python tests/surface_report.py [--jobs 2] [--out report.md]

Prints a Markdown table of cases per family and outcome per path, then every case that
did not pass with the first line of what happened (the README's table comes from here).
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import surface_catalogue as catalogue  # noqa: E402

PATHS = {"python": False, "numba": True}


def _run(chunk: list[int]) -> list[tuple[int, str, str, str]]:
    results = []
    for index in chunk:
        case = catalogue.CASES[index]
        for path, jit in PATHS.items():
            outcome = catalogue.check(case, jit)
            first = outcome.detail.strip().splitlines()[0] if outcome.detail.strip() else ""
            results.append((index, path, outcome.status, first[:300]))
    return results


def table(results) -> str:
    counts = collections.defaultdict(collections.Counter)
    for index, path, status, _ in results:
        family = catalogue.CASES[index].family
        counts[family, path][status] += 1
        counts["all", path][status] += 1
    sizes = catalogue.counts_by(lambda c: c.family)
    sizes["all"] = len(catalogue.CASES)
    lines = ["| family | cases | Python path: pass | Numba path: pass | refused | no numba | "
             "wrong | crash |", "|---|---|---|---|---|---|---|---|"]
    for family, size in sizes.items():
        py, nb = counts[family, "python"], counts[family, "numba"]
        lines.append(f"| {family} | {size} | {py['pass']} | {nb['pass']} | "
                     f"{py['refused']}/{nb['refused']} | {nb['no numba']} | "
                     f"{py['wrong'] + nb['wrong']} | {py['crash'] + nb['crash']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    start = time.time()
    chunks = [list(range(k, len(catalogue.CASES), options.jobs)) for k in range(options.jobs)]
    with multiprocessing.get_context("fork").Pool(options.jobs) as pool:
        results = [r for part in pool.map(_run, chunks) for r in part]
    results.sort()
    lines = [table(results), "", f"{len(catalogue.CASES)} cases, "
             f"{time.time() - start:.0f} s with {options.jobs} processes", ""]
    lines += [f"- {path} {status}: `{catalogue.CASES[i].name}`: {detail}"
              for i, path, status, detail in results if status != "pass"]
    text = "\n".join(lines)
    print(text)
    if options.out:
        options.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
