"""First use: what a new user meets before any gradient is right or wrong.

Deterministic generated source (the disk cache hits in every new process), a
second process that compiles nothing, concurrent first calls, damaged cache
files, calls with keywords and defaults, ``wrt=`` on every entry point,
``source``/``explain`` before a call, and integer arguments.
"""

import inspect
import math
import os
import platform
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad as ad

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _run(code: str, cache: Path, hash_seed: str = "0") -> str:
    """Run ``code`` as the file ``program.py`` beside ``cache`` in a new process."""
    program = cache.parent / "program.py"
    program.write_text(textwrap.dedent(code))
    env = dict(os.environ, S2S_AD_CACHE_DIR=str(cache), PYTHONHASHSEED=hash_seed,
               PYTHONPATH=os.pathsep.join([str(ROOT), str(TESTS), str(TESTS / "compiler")]))
    env.pop("NUMBA_CACHE_DIR", None)  # Numba's index files beside the generated modules
    done = subprocess.run([sys.executable, str(program)], env=env, cwd=TESTS,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ---- the generated source does not depend on PYTHONHASHSEED --------------------------------
_SOURCES = """
import hashlib
import numpy as np
import s2s_ad as ad
from catalogue import CATALOGUE
import test_growing_lists as lists
texts = [ad.source(c.fn, *c.args) for c in CATALOGUE[::7]]
texts.append(ad.source(lists.iterated_and_enumerated, lists.V))
texts.append(ad.source(lists.hidden_states, lists.V[:3], lists.W))
print(len(texts), hashlib.sha256("".join(texts).encode()).hexdigest())
"""


def test_generated_source_is_the_same_under_every_hash_seed(tmp_path):
    outputs = {_run(_SOURCES, tmp_path / "cache", hash_seed=seed) for seed in ("1", "2", "3")}
    assert len(outputs) == 1, outputs
    assert int(next(iter(outputs)).split()[0]) > 20


# ---- a second process loads what the first compiled ------------------------------------------
_COMPILES = """
import numpy as np
import s2s_ad as ad

@ad.differentiable(jit=True)
def energy(x, lam):
    e = 0.0
    for i in range(1, x.shape[0] - 1):
        d2 = x[i - 1] - 2.0 * x[i] + x[i + 1]
        e += lam * d2 * d2 + (x[i] - 1.0) ** 2
    return e

x = np.linspace(0.0, 1.0, 7)
value, (grad, dlam) = ad.value_and_gradient(energy)(x, 0.5)
dispatchers = [entry[1] for entry in energy._entries.values()]
hits = sum(sum(d.stats.cache_hits.values()) for d in dispatchers)
misses = sum(sum(d.stats.cache_misses.values()) for d in dispatchers)
print(hits, misses, repr(value), repr(dlam), grad.tolist())
"""


def test_a_second_process_compiles_nothing(tmp_path):
    first = _run(_COMPILES, tmp_path / "cache").split(maxsplit=2)
    second = _run(_COMPILES, tmp_path / "cache").split(maxsplit=2)
    assert first[1] != "0"  # the first process compiled (cache misses)...
    assert second[:2] == ["1", "0"], second  # ...the second loaded it: one hit, no miss
    assert first[2] == second[2]


# ---- damaged cache files are compiled again, never a crash ----------------------------------
_DAMAGE = {
    "truncated": lambda data: data[:len(data) // 3],
    "garbled": lambda data: bytes(b ^ 0x5A for b in data),
    "empty": lambda data: b"",
}


@pytest.mark.parametrize("damage", list(_DAMAGE))
def test_damaged_cache_files_are_rebuilt(damage, tmp_path):
    cache = tmp_path / "cache"
    expected = _run(_COMPILES, cache).split(maxsplit=2)[2]
    files = [p for p in (cache / "generated").rglob("*") if p.is_file()]
    assert any(p.suffix == ".nbi" for p in files) and any(p.suffix == ".py" for p in files)
    for path in files:
        path.write_bytes(_DAMAGE[damage](path.read_bytes()))
    assert _run(_COMPILES, cache).split(maxsplit=2)[2] == expected
    assert _run(_COMPILES, cache).split(maxsplit=2)[:2] == ["1", "0"]  # cached again


# ---- eight threads make the first call at once ---------------------------------------------
def ripple(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(w * x[i]) * x[i]
    return s


def test_concurrent_first_calls(tmp_path):
    x, w = np.linspace(-1.0, 1.0, 5), 0.7
    expected_dx = np.sin(w * x) + w * x * np.cos(w * x)
    expected_dw = np.sum(x * x * np.cos(w * x))
    df = ad.differentiable(ripple)
    results, errors = [], []
    start = threading.Barrier(8)

    def first_call():
        start.wait()
        try:
            results.append(ad.gradient(df)(x, w))
        except Exception as exc:  # collected: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 8
    for dx, dw in results:
        np.testing.assert_allclose(dx, expected_dx, rtol=1e-13)
        assert dw == pytest.approx(expected_dw, rel=1e-13)


# ---- defaults, keywords and keyword-only parameters -----------------------------------------
def scaled(x, y=2.0, *, scale=3.0, shift=0.5):
    return x * y * scale + shift * x


def positional_only(x, /, y):
    return x * x * y


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_every_call_the_original_accepts(jit):
    f = ad.differentiable(scaled, jit=jit)
    assert f(1.5) == scaled(1.5)
    assert f(1.5, 4.0, shift=1.0) == scaled(1.5, 4.0, shift=1.0)
    assert f(y=1.0, x=2.0, scale=0.5) == scaled(y=1.0, x=2.0, scale=0.5)
    # d/dx = y scale + shift; d/dy = x scale; d/dscale = x y; d/dshift = x
    assert ad.gradient(f)(1.5) == 2.0 * 3.0 + 0.5  # defaults are not differentiated
    assert ad.gradient(f)(1.5, y=4.0) == (4.0 * 3.0 + 0.5, 1.5 * 3.0)
    assert ad.gradient(f)(1.5, 4.0, scale=1.0, shift=2.0) == (6.0, 1.5, 6.0, 1.5)
    assert ad.value_and_gradient(f)(2.0, scale=1.0) == (scaled(2.0, scale=1.0), (2.5, 4.0))
    value, pb = ad.value_with_pullback(f, 1.5, y=4.0)
    assert value == scaled(1.5, y=4.0) and pb(2.0) == (2 * 12.5, 2 * 4.5)
    assert ad.pullback(f, 1.5, shift=1.0)(1.0) == (7.0, 1.5)
    g = ad.differentiable(positional_only, jit=jit)
    assert g(2.0, y=3.0) == 12.0 and ad.gradient(g)(2.0, y=3.0) == (12.0, 4.0)
    with pytest.raises(TypeError, match="scaled\\(\\): missing a required argument: 'x'"):
        f(y=1.0)
    with pytest.raises(TypeError, match="positional_only\\(\\): 'x' parameter is positional"):
        g(x=1.0, y=2.0)


def calls_with_keywords(x, v):
    return np.sum(v * scaled(x, scale=2.0)) + scaled(x, y=v[0], shift=x)


def test_differentiated_code_calls_with_keywords():
    from s2s_ad.testing import check_grads
    check_grads(calls_with_keywords, 0.7, np.array([1.0, -2.0, 0.5]), seed=3)


# ---- wrt= on every entry point (names or positions, as jax.grad's argnums) ----------------
def product(x, y, z):
    return x * y * z * z


def test_wrt_on_every_entry_point():
    args = (2.0, 3.0, 0.5)  # value 1.5; d/dx = y z^2 = 0.75, d/dy = x z^2 = 0.5, d/dz = 6
    assert ad.gradient(product, wrt=("y",))(*args) == 0.5
    assert ad.gradient(product, wrt="z")(*args) == 6.0
    assert ad.gradient(product, wrt=(2, 0))(*args) == (6.0, 0.75)
    assert ad.gradient(product, wrt=-1)(*args) == 6.0
    assert ad.value_and_gradient(product, wrt=("x", "y"))(*args) == (1.5, (0.75, 0.5))
    value, pb = ad.value_with_pullback(product, *args, wrt="y")
    assert (value, pb(2.0)) == (1.5, 1.0)
    assert ad.pullback(product, *args, wrt=(0,))(1.0) == 0.75
    assert ad.gradient(ad.differentiable(product, wrt=("x",)), wrt="z")(*args) == 6.0
    with pytest.raises(ad.ArgumentError, match="not parameters of product"):
        ad.gradient(product, wrt="w")(*args)


# ---- source and explain before any call -------------------------------------------------------
def annotated(v: np.ndarray, n: int, scale=2.0):
    return np.sum(v * scale) * n


def test_source_and_explain_before_a_call():
    text = ad.source(annotated)
    assert "def annotated_pullback(" in text and "d_v" in text and "d_n" not in text
    explanation = ad.explain(annotated)
    assert explanation.function == "annotated" and explanation.path in ("numba", "python")
    assert ad.source(lambda a, b: a * b, stage="anf").startswith("def lambda_(a, b):")


# ---- integer arguments are never differentiated: said, not silent ----------------------------
def times(x, y):
    return x * y


def power_sum(x, n):
    s = 0.0
    for i in range(n):  # n is a count: no float could take its place
        s += x ** i
    return s


def test_counts_are_not_warned_about():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ad.gradient(power_sum)(0.5, 3) == 1.0 + 2 * 0.5  # d/dx (1 + x + x^2)


def test_integer_arguments_are_named():
    with pytest.raises(ad.ArgumentError, match=r"times: no argument is differentiated: "
                       r"x=1, y=2 are ints.*\(x=1\.0\)"):
        ad.gradient(times)(1, 2)
    with pytest.raises(ad.ArgumentError, match="no argument is differentiated"):
        ad.gradient(times)(1, 2)  # at every call, not only the first
    with pytest.warns(ad.IntegerArgumentWarning, match=r"the int argument x=1 is not "
                      r"differentiated; pass floats to differentiate them \(x=1\.0\)"):
        assert ad.gradient(times)(1, 2.0) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ad.gradient(times)(1, 2.0) == 1.0  # said once per argument types
        assert ad.gradient(times)(1.0, 2.0) == (2.0, 1.0)


# ---- messages that name the user's line or argument, never an internal error ----------------
class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return x * self.w


def uses_a_generator_method(x):
    rng = np.random.default_rng(0)
    return rng.standard_normal() * x


def scales_by_a_numpy_float(x):
    return np.float64(2.0) * x


def loops_over_gathered_items(v, idx):
    s = 0.0
    for w in v[idx]:
        s += w * w
    return s


def doubled(v):
    return v * 2.0


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_bound_method_is_named_at_its_def():
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(Model(2.0).loss)(1.5)
    err = info.value
    assert (err.location.filename, err.location.lineno) == (__file__, _line_of(Model, "def loss"))
    assert "'Model.loss' is a bound method" in err.problem and "def loss(w, x)" in err.hint


def test_a_library_function_asks_for_a_python_function():
    with pytest.raises(ad.NonDifferentiableError, match="'sin' is a function of math"):
        ad.gradient(math.sin)(1.0)
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(np.tanh)(1.0)
    assert "ad.gradient(lambda x: numpy.tanh(x))" in info.value.hint


def test_a_method_of_something_else_than_an_array():
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(uses_a_generator_method)(1.0)
    err = info.value
    assert err.location.lineno == _line_of(uses_a_generator_method, "standard_normal")
    assert "the method 'standard_normal' is not supported" in err.problem
    assert "pass it in as an argument" in err.hint and "{" not in err.hint


def test_numpy_scalars_and_loops_over_gathers_just_work():
    assert ad.gradient(scales_by_a_numpy_float)(1.5) == 2.0
    grad = ad.gradient(loops_over_gathered_items)(np.array([1.0, 2.0, 3.0]), np.array([0, 2]))
    np.testing.assert_array_equal(grad, [2.0, 0.0, 6.0])  # d/dv (v0^2 + v2^2)


def test_a_pullback_names_the_cotangent_it_needs():
    pb = ad.pullback(doubled, np.ones(3))
    with pytest.raises(ad.ArgumentError, match=r"the pullback of doubled takes a cotangent "
                       r"shaped like its result \(an array of shape \(3,\)\), not 1\.0"):
        pb(1.0)
    np.testing.assert_array_equal(pb(np.array([1.0, 0.0, 2.0])), [2.0, 0.0, 4.0])


# ---- an exception in generated code names the user's line -----------------------------------
def log_of(y):
    return math.log(y - 3.0)


def divides(x):
    a = x * 2.0
    b = 1.0 / (a - 2.0)
    return b + log_of(x)


def test_an_exception_names_the_users_line():
    f = ad.differentiable(divides, jit=False)
    for call in (f, ad.gradient(f), lambda x: ad.value_with_pullback(f, x)):
        with pytest.raises(ZeroDivisionError) as info:
            call(1.0)  # 1 / (2 - 2)
        assert info.value.__notes__ == [
            f"s2s_ad: raised by {__file__}:{_line_of(divides, '1.0 / (a')}: "
            "b = 1.0 / (a - 2.0)"]
        with pytest.raises(ValueError, match="math domain error") as info:
            call(2.0)  # log(-1), in the callee
        assert info.value.__notes__ == [
            f"s2s_ad: raised by {__file__}:{_line_of(log_of, 'math.log')}: "
            "return math.log(y - 3.0)"]


def test_an_exception_in_compiled_code_names_the_function():
    with pytest.raises(ZeroDivisionError) as info:
        ad.gradient(ad.differentiable(divides, jit=True))(1.0)
    note, = info.value.__notes__
    assert note.startswith("s2s_ad: raised inside the Numba-compiled code of divides (")
    assert note.endswith("run it with jit=False to see the line")


# ---- compiled code keeps CPython's math domain errors ----------------------------------------
def sums_logs(x):
    s = 0.0
    for i in range(5):
        s += math.log(x - i)  # x = 3.0: log(0.0), then log(-1.0)
    return s


DOMAINS = [  # (function of a user, an argument in its domain, one outside it)
    (lambda u: math.log(u), 0.5, -0.5), (lambda u: math.log(u, 3.0), 2.0, 0.0),
    (lambda u: math.log(2.0, u), 0.5, -1.0), (lambda u: math.log2(u), 3.0, -3.0),
    (lambda u: math.log10(u), 3.0, 0.0), (lambda u: math.log1p(u), -0.5, -1.0),
    (lambda u: math.sqrt(u), 2.0, -1e-300), (lambda u: math.acos(u), 0.5, 1.5),
    (lambda u: math.asin(u), -0.5, -1.5), (lambda u: math.acosh(u), 1.5, 0.5),
    (lambda u: math.atanh(u), 0.5, 1.0),
]


def test_compiled_code_raises_math_domain_errors_as_python_does():
    f = ad.differentiable(sums_logs, jit=True)
    for call in (f, ad.gradient(f), lambda x: ad.value_with_pullback(f, x)[1](1.0)):
        with pytest.raises(ValueError, match="math domain error"):
            call(3.0)
    python = ad.differentiable(sums_logs, jit=False)
    assert f(10.0) == python(10.0)
    assert ad.gradient(f)(10.0) == pytest.approx(ad.gradient(python)(10.0), rel=1e-15)


@pytest.mark.parametrize("index", range(len(DOMAINS)))
def test_each_checked_math_function(index):
    fn, inside, outside = DOMAINS[index]
    compiled, python = ad.differentiable(fn, jit=True), ad.differentiable(fn, jit=False)
    assert compiled(inside) == pytest.approx(fn(inside), rel=1e-15)
    assert ad.gradient(compiled)(inside) == pytest.approx(ad.gradient(python)(inside), rel=1e-14)
    for call in (fn, compiled, ad.gradient(compiled)):
        with pytest.raises(ValueError, match="math domain error"):
            call(outside)
    assert math.isnan(compiled(math.nan))  # NaN passes, as in CPython


# ---- freed memory stays in the process (tapes do not page-fault on every call) ----------
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
@pytest.mark.parametrize(("setting", "kept"), [(None, "True"), ("0", "False")])
def test_freed_memory_is_kept_unless_asked_not_to(setting, kept, tmp_path):
    script = tmp_path / "square.py"
    script.write_text("import s2s_ad as ad\n"
                      "from s2s_ad.compiler import memory\n"
                      "ad.gradient(ad.differentiable(lambda x: x * x, jit=True))(2.0)\n"
                      "print(memory._state)\n")
    env = {k: v for k, v in os.environ.items() if k != "S2S_AD_KEEP_MEMORY"}
    env["S2S_AD_CACHE_DIR"] = str(tmp_path / "cache")
    if setting is not None:
        env["S2S_AD_KEEP_MEMORY"] = setting
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == kept
