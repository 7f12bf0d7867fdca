"""Checking forward mode against reverse mode and finite differences (shared by the
forward-mode tests).

``check_jvp(fn, args, jit)`` runs ``ad.jvp`` along a random direction ``v`` of the float
arguments and returns what happened: "pass" when the tangent equals central finite
differences of the original along ``v`` and ``<u, J v> == <J^T u, v>`` holds with the
pullback of a random ``u`` to 1e-10; "refused" for a located NonDifferentiableError; else
"wrong" or "crash" with the detail.
"""

from __future__ import annotations

import math
import warnings
import zlib

import numpy as np

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import fresh_copies, in_float64, random_cotangent
from s2s_ad.testing.differences import directional_difference, relative_step


def direction(args, rng) -> tuple:
    """A random tangent per argument: float arguments get one, the others None."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(rng.uniform(-1.0, 1.0, a.shape))
        elif isinstance(a, float):
            out.append(float(rng.uniform(-1.0, 1.0)))
        else:
            out.append(None)
    return tuple(out)


def _inner(a, b) -> float:
    return math.fsum(np.ravel(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def _compare(fn, args, jit: bool, seed: int) -> str:
    rng = np.random.default_rng(seed)
    v = direction(args, rng)
    df = ad.differentiable(fn, jit=jit)
    value, tangent = ad.jvp(df, fresh_copies(args), v)
    positions = [i for i, t in enumerate(v) if t is not None]
    if not positions:
        return "pass"
    base = in_float64(args)
    h = max(relative_step(base[i]) for i in positions)
    u = random_cotangent(value, rng)
    estimate, rounding = directional_difference(fn, base, {i: v[i] for i in positions}, h, u)
    forward = _inner(u, tangent)
    scale = abs(estimate) + 1e-7
    assert abs(forward - estimate) <= 1e-5 * scale + rounding + 1e-7, (
        f"<u, jvp> = {forward!r}, finite differences {estimate!r}")
    _, pullback = ad.value_with_pullback(df, *fresh_copies(args))
    cotangents = pullback(u)
    cotangents = cotangents if len(positions) > 1 else (cotangents,)
    reverse = math.fsum(_inner(c, v[i]) for c, i in zip(cotangents, positions, strict=True))
    terms = math.fsum(abs(x) for x in np.ravel(np.asarray(tangent, np.float64) *
                                               np.asarray(u, np.float64))) + abs(reverse)
    single = any(getattr(a, "dtype", None) == np.float32 for a in args)
    rtol = 1e-5 if single else 1e-10  # float32 primal values: each mode rounds its own way
    # a derivative that cancels to zero inside the program (0.25 * 3 t - 0.75 t) leaves
    # each mode a rounding error of its own, of the directions' scale
    floor = 1e-13 * math.sqrt(_inner(u, u) * math.fsum(_inner(v[i], v[i]) for i in positions))
    assert abs(forward - reverse) <= rtol * max(terms, 1e-300) + floor + 1e-300, (
        f"<u, J v> = {forward!r} (jvp) but <J^T u, v> = {reverse!r} (pullback)")
    return "pass"


def check_jvp(fn, args, jit: bool, name: str) -> tuple[str, str]:
    """(status, detail) of forward mode on ``fn`` at ``args`` (see the module docstring)."""
    seed = zlib.crc32(name.encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _compare(fn, args, jit, seed), ""
        except AssertionError as failure:
            return "wrong", str(failure)
        except NonDifferentiableError as refusal:
            located = refusal.location is not None
            return ("refused" if located else "crash"), str(refusal).splitlines()[0]
        except Exception as error:  # noqa: BLE001  (every other error is a crash)
            return "crash", f"{type(error).__name__}: {error}"
