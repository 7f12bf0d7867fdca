"""Several tangent directions per run (issue 24): ``jvp_directions`` carries ``k``
directions along a leading axis through one run, and each direction's tangent equals
``ad.jvp`` along it alone (to 1e-12 relative: the same expressions, in the same order),
on every case of both catalogues on the Python path and every seventh with Numba (the
slow tier; the default run takes every fourth case and two with Numba). Where
the directions form is refused (a list of tangents read as a whole), the refusal is
located.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
from array_catalogue import CATALOGUE as ARRAY_CASES
from catalogue import CATALOGUE as SCALAR_CASES

import s2s_ad as ad
from s2s_ad.api import as_differentiable
from s2s_ad.errors import ArgumentError, NonDifferentiableError
from s2s_ad.forward_mode import jvp_directions
from s2s_ad.testing import fresh_copies

CASES = [c for c in (*SCALAR_CASES, *ARRAY_CASES)
         if any(isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
                for a in c.args)]
SAMPLE = CASES[::4]  # the default run; every case in the slow tier
NUMBA_SAMPLE = CASES[::58]
K = 3


def _directions(args, rng) -> tuple:
    return tuple(rng.uniform(-1.0, 1.0, (K,) + np.shape(a)).astype(
        a.dtype if isinstance(a, np.ndarray) else np.float64)
        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
        else None for a in args)


def _check(case, jit: bool) -> None:
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    directions = _directions(case.args, rng)
    f = ad.differentiable(case.fn, jit=jit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value, tangents = jvp_directions(as_differentiable(f), fresh_copies(case.args),
                                             directions)
        except NonDifferentiableError as refusal:
            assert refusal.location is not None, refusal
            return
        for j in range(K):
            one = tuple(None if d is None else d[j] for d in directions)
            alone = ad.jvp(f, fresh_copies(case.args), one)[1]
            got = tangents[j] if not isinstance(tangents, tuple) else \
                tuple(t[j] for t in tangents)
            for a, b in zip(np.atleast_1d(np.asarray(got, dtype=object)).ravel()
                            if isinstance(got, tuple) else [got],
                            np.atleast_1d(np.asarray(alone, dtype=object)).ravel()
                            if isinstance(alone, tuple) else [alone], strict=True):
                a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
                scale = np.max(np.abs(b), initial=0.0) + 1e-300
                np.testing.assert_allclose(a, b, rtol=0.0, atol=1e-12 * scale + 1e-300)


@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_each_direction_equals_its_own_jvp(case):
    _check(case, False)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_direction_equals_its_own_jvp_on_every_case(case):
    _check(case, False)


@pytest.mark.parametrize("case", NUMBA_SAMPLE, ids=[c.name for c in NUMBA_SAMPLE])
def test_each_direction_equals_its_own_jvp_with_numba(case):
    _check(case, True)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES[::7], ids=[c.name for c in CASES[::7]])
def test_each_direction_equals_its_own_jvp_with_numba_slow(case):
    _check(case, True)


def test_the_directions_source_loops_over_directions_per_tangent_statement():
    text = ad.source(SCALAR_CASES[0].fn, *SCALAR_CASES[0].args, mode="directions")
    assert "n_directions = t_" in text and "for direction in range(1, n_directions):" in text


def test_directions_of_the_wrong_shape_are_an_argument_error():
    f = as_differentiable(SCALAR_CASES[0].fn)
    with pytest.raises(ArgumentError, match="directions of argument 1"):
        jvp_directions(f, SCALAR_CASES[0].args, (np.ones((2, 3)), None))
