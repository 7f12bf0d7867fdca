"""Checking Hessian-vector products (forward over reverse) against finite differences
of the gradient (shared by the higher-order tests and the fuzzer).

``check_hvp(fn, args, jit, seed)`` runs ``ad.hvp`` along a random direction ``v`` of the
float arguments of a function returning a number and returns ``(status, detail)``:
"pass" when ``H v`` equals the extrapolated central difference of the gradient along
``v`` (entry by entry, to 1e-6 relative to the gradient's scale) and ``<v, H v>`` is
also ``<v, H v>`` of the transposed product (Hessians are symmetric: ``<w, H v> ==
<v, H w>`` for a second random ``w``, to 1e-9); "refused" for a located
NonDifferentiableError; "skip" when the function is not of one number; else "wrong"
or "crash" with the detail.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from forward_checks import direction

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.testing import fresh_copies, in_float64
from s2s_ad.testing.differences import extrapolated_difference, relative_step


def _flat(parts) -> np.ndarray:
    parts = parts if isinstance(parts, tuple) else (parts,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _moved(args: tuple, v: tuple, h: float) -> tuple:
    return tuple(a if t is None else a + h * np.asarray(t) if isinstance(a, np.ndarray)
                 else a + h * t for a, t in zip(args, v, strict=True))


def _compare(fn, args, jit: bool, seed: int) -> str:
    rng = np.random.default_rng(seed)
    base = in_float64(args)
    v, w = direction(base, rng), direction(base, rng)
    if all(t is None for t in v):
        return "skip"
    df = ad.differentiable(fn, jit=jit)
    product = _flat(ad.hvp(df, fresh_copies(base), v))
    other = _flat(ad.hvp(df, fresh_copies(base), w))
    gradient = ad.gradient(df)
    h = 1e-3 * max(relative_step(a, 1.0) for a, t in zip(base, v, strict=True)
                   if t is not None)
    estimate, error = extrapolated_difference(
        lambda step: _flat(gradient(*_moved(fresh_copies(base), v, step))), h)
    scale = np.max(np.abs(estimate), initial=0.0) + np.max(np.abs(product), initial=0.0) + 1.0
    worst = float(np.max(np.abs(product - estimate), initial=0.0))
    assert worst <= 1e-6 * scale + 10 * float(np.max(error, initial=0.0)), (
        f"H v = {product!r}, differences of the gradient {estimate!r}")
    wv, vw = float(np.dot(_flat(tuple(t for t in w if t is not None)), product)), \
        float(np.dot(_flat(tuple(t for t in v if t is not None)), other))
    assert math.isclose(wv, vw, rel_tol=1e-9, abs_tol=1e-9 * scale), (
        f"<w, H v> = {wv!r} but <v, H w> = {vw!r}")
    return "pass"


def check_hvp(fn, args, jit: bool, seed: int = 0) -> tuple[str, str]:
    """(status, detail) of ``ad.hvp`` of ``fn`` at ``args`` (see the module docstring)."""
    try:
        value = fn(*fresh_copies(args))
    except Exception as exc:  # noqa: BLE001 -- the original fails: nothing to check
        return "skip", f"{type(exc).__name__}: {exc}"
    if not isinstance(value, float | np.floating) or not math.isfinite(value):
        return "skip", "not a number"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _compare(fn, args, jit, seed), ""
    except NonDifferentiableError as exc:
        located = exc.location is not None
        return ("refused" if located else "crash"), str(exc).splitlines()[0]
    except AssertionError as exc:
        return "wrong", str(exc)
    except Exception as exc:  # noqa: BLE001 -- reported, not raised
        return "crash", f"{type(exc).__name__}: {exc}"
