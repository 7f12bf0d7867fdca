"""Forward mode on the fuzzer's random programs: ``jvp`` against finite differences and
against the pullback (the dot-product identity), or with ``--hvp`` Hessian-vector
products (forward over reverse) against finite differences of the gradient and
``<w, H v> == <v, H w>``; the Python path (``--jit`` for Numba).

    python tests/fuzz/jvp_fuzz.py --seed 1 --count 500 [--round5] [--hvp] [--jit]

Programs are the base fuzzer's (``program_from_seed``) or round 5's; each is loaded as
a file and checked at the point the base oracle chooses. Prints the counts and every
WRONG or CRASH with its program.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))

from forward_checks import check_jvp  # noqa: E402
from hvp_checks import check_hvp  # noqa: E402
from oracle import Unreliable, choose_point, instrumented_module, load_source, unload  # noqa: E402
from programs import program_from_seed  # noqa: E402
from round5_programs import FAMILIES, round5_program_from_seed  # noqa: E402


def check_one(program, directory: Path, hvp: bool = False, jit: bool = False
              ) -> tuple[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            module = load_source(program.source, directory)
            namespace, holder = instrumented_module(program.source)
        except Exception as exc:  # noqa: BLE001
            return "invalid", str(exc)
    try:
        fn = getattr(module, program.fname)
        try:
            point = choose_point(fn, namespace, holder, program.fname, program.points)[0]
        except Unreliable:
            return "skip", ""
        except Exception as exc:  # noqa: BLE001
            return "invalid", str(exc)
        if hvp:
            return check_hvp(fn, point, jit)
        return check_jvp(fn, point, jit, program.fname)
    finally:
        unload(module)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--round5", action="store_true")
    parser.add_argument("--hvp", action="store_true", help="check ad.hvp instead of ad.jvp")
    parser.add_argument("--jit", action="store_true", help="the Numba path")
    options = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="s2s_jvp_fuzz_"))
    counts: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    for k in range(options.count):
        seed = options.seed * 1_000_000 + k
        program = (round5_program_from_seed(seed, tuple(FAMILIES)) if options.round5
                   else program_from_seed(seed, max_statements=6))
        status, detail = check_one(program, directory, options.hvp, options.jit)
        counts[status] += 1
        if status == "refused":
            reasons[detail.split("error: ", 1)[-1][:90]] += 1
        if status in ("wrong", "crash"):
            print(f"### program {k} (seed {seed}): {status}\n{program.source}\n{detail}\n")
    print(dict(counts))
    for reason, n in reasons.most_common(15):
        print(f"{n:5d}  {reason}")


if __name__ == "__main__":
    main()
