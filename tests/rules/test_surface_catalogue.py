"""The NumPy/SciPy surface catalogue (tests/surface_catalogue.py), both paths (issue 23).

Every case either passes all checks (value, finite differences of every entry, the
dot-product identity, gradient shapes and dtypes, and on the Numba path Numba = Python)
or is listed in ``REFUSED`` with the reason, and is then refused with a message located
in the case's own source (file:line:col). A listed case that passes fails too (the list
must shrink with the code), and the listed cases stay under 5% of the catalogue.

The default run checks every case on the Python path; the slow tier
(``pytest -m slow``) checks every case on the Numba path (each function's rules are
also compiled by the rule table's Numba subset in the default run).
``python tests/surface_report.py`` prints the counts per path.
"""

from __future__ import annotations

import pytest
from surface_catalogue import CASES, Case, check

_KEEPDIMS = "norm(x, keepdims=True) without an axis: give axis=None's shape by reshaping"
_RANK = "the rank of the result must be known when compiling: give the axis"
#: Cases that are refused, by exact case name or by function (every case of it), and why.
REFUSED: dict[str, str] = {
    "reduction:np.linalg.norm({a},keepdims=True):(6,)": _KEEPDIMS,
    "reduction:np.linalg.norm({a},keepdims=True):(3,4)": _KEEPDIMS,
    "shape:np.transpose({a},axes=(2,0,1)):(2,3,4)": "the axes= keyword (positional works)",
    "shape:np.squeeze({a}):(3,1,4)": _RANK,
    "shape:{a}.squeeze():(1,3,1)": _RANK,
    "shape:np.pad({a},1,mode='constant',constant_values=0.5):(3,4)":
        "constant_values= (padding with zeros works)",
    "np.broadcast_to": "no rule yet (arithmetic broadcasting works)",
    "np.asarray": "no rule yet (np.array of an array works)",
    "join:np.concatenate(({a},{b}),axis=None):(2,3),(4,)":
        "axis=None: flatten the pieces first (the message says how)",
    "np.dstack": "no rule yet",
    "indexing:{a}[{b},{c}]:(5,4),(3,),(3,)": "two index arrays in one subscript",
    "special:scipy.special.logsumexp({a},axis=0,b={b}):(3,4),(3,4)":
        "b=: the message says to write logsumexp(a + np.log(b))",
    "scipy.special.log_softmax": "no rule yet (log of softmax, or x - logsumexp, works)",
}

#: Cases whose Python path works and whose Numba path cannot compile, and why.
NUMBA_FALLBACKS: dict[str, str] = {}

def _listed(case: Case, table: dict[str, str]) -> bool:
    return case.name in table or case.function in table


def _assert_outcome(case: Case, jit: bool) -> None:
    outcome = check(case, jit)
    if _listed(case, REFUSED):
        assert outcome.status == "refused", (
            f"{case.name} is listed in REFUSED but ended {outcome.status!r}: "
            f"{outcome.detail or 'remove it from the list'}")
    elif jit and _listed(case, NUMBA_FALLBACKS):
        assert outcome.status == "no numba", (
            f"{case.name} is listed in NUMBA_FALLBACKS but ended {outcome.status!r}")
    else:
        assert outcome.status == "pass", f"{case.name}: {outcome.status}: {outcome.detail}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_python_path(case):
    _assert_outcome(case, jit=False)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_numba_path(case):
    _assert_outcome(case, jit=True)


def test_at_least_95_percent_of_the_catalogue_differentiates():
    refused = [c for c in CASES if _listed(c, REFUSED)]
    fallbacks = [c for c in CASES if _listed(c, NUMBA_FALLBACKS)]
    assert len(CASES) >= 1000
    assert len(refused) + len(fallbacks) <= 0.05 * len(CASES), (len(refused), len(fallbacks))


def test_every_table_entry_names_cases():
    names = {c.name for c in CASES} | {c.function for c in CASES}
    stale = [key for key in [*REFUSED, *NUMBA_FALLBACKS] if key not in names]
    assert not stale, f"entries naming no catalogue case: {stale}"
