"""Dependencies: nothing stale after a change (the notebook workflow), and no
silent aliasing between the caller's arrays and what the generated code keeps or writes.

Notebook cells are simulated as in IPython: each cell is its own file, executed into
one shared namespace, so a later cell redefines what an earlier one defined.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.compiler import transforms
from s2s_ad.errors import ArgumentError
from s2s_ad.testing import assert_vjp_matches_fd, check_grads

PATHS = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


class Notebook:
    """A namespace shared by cells, each cell written to its own file and run in it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.ns: dict = {"__name__": "notebook"}
        self.cells = 0

    def run(self, text: str) -> None:
        self.cells += 1
        path = self.folder / f"cell{self.cells}.py"
        path.write_text(textwrap.dedent(text))
        exec(compile(path.read_text(), str(path), "exec"), self.ns)

    def __getitem__(self, name: str):
        return self.ns[name]


@pytest.fixture
def notebook(tmp_path: Path) -> Notebook:
    nb = Notebook(tmp_path)
    nb.run("import numpy as np\nimport s2s_ad as ad\n")
    return nb


def _check(fn, jit: bool, *args: float) -> None:
    """Value and gradient of ``fn`` (a scalar function) against plain Python and
    finite differences of plain Python."""
    vg = ad.value_and_gradient(ad.differentiable(fn, jit=jit))
    value, grad = vg(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert_vjp_matches_fd(fn, args, 1.0, grad)


# -- item 1: helpers and global functions changed between calls ----------------------


@pytest.mark.parametrize("jit", PATHS)
def test_a_helper_redefined_between_calls_is_seen(notebook, jit):
    notebook.run("""
        def squash(x):
            return x * x

        def energy(x):
            return squash(x) + 1.0
    """)
    energy = ad.differentiable(notebook["energy"], jit=jit)
    grad = ad.gradient(energy)
    assert grad(3.0) == pytest.approx(6.0)
    notebook.run("""
        def squash(x):
            return x * x * x
    """)
    assert energy(3.0) == pytest.approx(28.0)
    assert grad(3.0) == pytest.approx(27.0)
    _check(notebook["energy"], jit, 1.5)


@pytest.mark.parametrize("jit", PATHS)
def test_a_global_name_holding_a_function_rebound_is_seen(notebook, jit):
    notebook.run("""
        def cube(v):
            return v * v * v

        def halve(v):
            return 0.5 * v

        activation = np.tanh
        helper = cube

        def layer(w):
            return activation(w) * helper(w)
    """)
    layer = notebook["layer"]
    vg = ad.value_and_gradient(ad.differentiable(layer, jit=jit))
    first = vg(0.7)
    assert first[0] == pytest.approx(np.tanh(0.7) * 0.7 ** 3)
    notebook.ns["activation"] = np.sin
    assert vg(0.7)[0] == pytest.approx(np.sin(0.7) * 0.7 ** 3)
    _check(layer, jit, 0.7)
    notebook.ns["helper"] = notebook["halve"]
    assert vg(0.7)[0] == pytest.approx(np.sin(0.7) * 0.35)
    _check(layer, jit, 0.7)


def test_a_helper_of_a_user_module_rebound_is_seen(notebook, tmp_path, monkeypatch):
    (tmp_path / "stale_helpers.py").write_text(textwrap.dedent("""
        def bump(v):
            return v * v

        def flat(v):
            return 2.0 * v
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    notebook.run("""
        import stale_helpers

        def through_module(x):
            return stale_helpers.bump(x) + x
    """)
    grad = ad.gradient(ad.differentiable(notebook["through_module"], jit=False))
    assert grad(2.0) == pytest.approx(5.0)
    helpers = notebook["stale_helpers"]
    monkeypatch.setattr(helpers, "bump", helpers.flat)
    assert grad(2.0) == pytest.approx(3.0)


@pytest.mark.parametrize("jit", PATHS)
def test_a_helpers_default_changed_is_seen(notebook, jit):
    notebook.run("""
        def scaled(v, factor=2.0):
            return factor * v * v

        def loss(v):
            return scaled(v)
    """)
    grad = ad.gradient(ad.differentiable(notebook["loss"], jit=jit))
    assert grad(1.5) == pytest.approx(6.0)
    notebook["scaled"].__defaults__ = (5.0,)
    assert grad(1.5) == pytest.approx(15.0)
    notebook.run("""
        def scaled(v, factor=-1.0):
            return factor * v * v
    """)
    assert grad(1.5) == pytest.approx(-3.0)
    _check(notebook["loss"], jit, 1.5)


def test_the_differentiated_functions_own_default_changed_is_seen(notebook):
    notebook.run("""
        def weighted(v, weight=2.0):
            return weight * v * v
    """)
    weighted = notebook["weighted"]
    grad = ad.gradient(ad.differentiable(weighted, jit=False))
    assert grad(1.0) == pytest.approx(4.0)
    weighted.__defaults__ = (3.0,)
    assert grad(1.0) == pytest.approx(6.0)


def test_a_differentiable_function_called_from_differentiated_code(notebook):
    notebook.run("""
        @ad.differentiable(jit=False)
        def doubled(v):
            return 2.0 * v * v

        def outer(v):
            return doubled(v) * v
    """)
    _check(notebook["outer"], False, 1.25)


def test_nothing_is_transformed_again_when_nothing_changed(notebook):
    notebook.run("""
        OFFSET = 1.0
        weights = np.ones(3)

        def inner(v):
            return np.tanh(v)

        def model(x):
            return np.sum(inner(x) * weights) + OFFSET
    """)
    vg = ad.value_and_gradient(ad.differentiable(notebook["model"], jit=False))
    x = np.linspace(0.1, 0.3, 3)
    vg(x)
    made = transforms.transforms_made[0]
    for step in range(3):  # a training loop rebinding global numbers and arrays
        notebook.ns["OFFSET"] = float(step)
        notebook.ns["weights"] = notebook["weights"] * 0.5
        value, _ = vg(x)
        assert value == pytest.approx(notebook["model"](x))
    assert transforms.transforms_made[0] == made
    notebook.run("""
        def inner(v):
            return np.sin(v)
    """)
    vg(x)
    assert transforms.transforms_made[0] > made


# -- item 2: registrations after first use ---------------------------------------------


@pytest.mark.parametrize("jit", PATHS)
def test_a_derivative_registered_after_first_use_is_used(notebook, jit):
    notebook.run("""
        def rough(v):
            return v * v

        def objective(v):
            return rough(v) + v
    """)
    grad = ad.gradient(ad.differentiable(notebook["objective"], jit=jit))
    assert grad(3.0) == pytest.approx(7.0)
    notebook.run("""
        @ad.derivative(of=rough)
        def rough_vjp(v):
            # a deliberately different derivative: the registration must win
            return rough(v), lambda cot: 10.0 * cot
    """)
    assert grad(3.0) == pytest.approx(11.0)


@numba.njit
def _twice_numba(x):
    return 2.0 * x


def _stale_program(x):
    return np.sum(ad.run_kernel("stale_twice", x) * x)


@pytest.mark.parametrize("jit", PATHS)
def test_a_kernel_gradient_registered_after_first_use_is_used(jit):
    ad.register_kernel("stale_twice", "numpy", lambda x: 2.0 * x)
    ad.register_kernel("stale_twice", "numba", _twice_numba)
    try:
        ad.register_gradient("stale_twice", numba.njit(lambda dy, saved: 3.0 * dy),
                             inputs_to_save=[])
        grad = ad.gradient(ad.differentiable(_stale_program, jit=jit))
        x = np.array([1.0, 2.0])
        np.testing.assert_allclose(grad(x), 3.0 * x + 2.0 * x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "already registered"
            ad.register_gradient("stale_twice", numba.njit(lambda dy, saved: 2.0 * dy),
                                 inputs_to_save=[])
        np.testing.assert_allclose(grad(x), 4.0 * x)
    finally:
        ad.unregister_gradient("stale_twice")
        for backend in ("numpy", "numba"):
            ad.unregister_kernel("stale_twice", backend)


# -- item 3: the pullback keeps its own copy of what it needs from the caller's arrays --


def _batch_loss(w, batch, pair):
    """d/dw needs ``batch`` (kept as it is), a view of it, and the arrays of a tuple."""
    return (np.sum(np.tanh(w * batch)) + np.sum(w * batch[1:] ** 2)
            + np.sum(w * pair[0] * pair[1]))


def _appended(w, batch):
    parts = []
    for _ in range(2):
        parts.append(batch)
    total = 0.0
    for part in parts:
        total += np.sum(np.sin(w * part))
    return total


@pytest.mark.parametrize("jit", PATHS)
def test_changing_an_argument_after_the_forward_does_not_change_the_pullback(jit):
    batch = np.array([0.3, -0.2, 0.5])
    pair = (np.array([1.0, 2.0]), np.array([0.5, -1.0]))
    frozen = (batch.copy(), (pair[0].copy(), pair[1].copy()))
    loss = ad.differentiable(_batch_loss, jit=jit)
    value, pullback = ad.value_with_pullback(loss, 0.8, batch, pair, wrt="w")
    batch[:] = 7.0  # the batch buffer is reused before the backward pass
    pair[0][:] = -3.0
    pair[1][:] = 4.0
    expected = ad.gradient(loss, wrt="w")(0.8, *frozen)
    assert pullback(1.0) == pytest.approx(expected, rel=1e-12)
    assert_vjp_matches_fd(lambda w: _batch_loss(w, *frozen), (0.8,), 1.0, pullback(1.0))
    assert value == pytest.approx(_batch_loss(0.8, *frozen))


@pytest.mark.parametrize("jit", PATHS)
def test_a_list_holding_the_argument_is_kept_as_it_was(jit):
    batch = np.array([0.1, 0.4])
    original = batch.copy()
    _, pullback = ad.value_with_pullback(ad.differentiable(_appended, jit=jit), 0.6, batch,
                                         wrt="w")
    batch[:] = 2.0
    assert_vjp_matches_fd(lambda w: _appended(w, original), (0.6,), 1.0, pullback(1.0))


# -- item 4: an argument written into may not share memory with another ----------------


def smooth(out, src):
    for i in range(1, src.shape[0] - 1):
        out[i] = 0.5 * (src[i - 1] + src[i + 1])
    return np.sum(out * out)


def overlap(left, right):
    return np.sum(left * right)


@pytest.mark.parametrize("jit", PATHS)
def test_an_argument_written_into_and_passed_twice_is_refused(jit):
    fn = ad.differentiable(smooth, jit=jit)
    signal = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    for call in (fn, ad.gradient(fn), lambda *a: ad.value_with_pullback(fn, *a)):
        with pytest.raises(ArgumentError, match=r"writes into its argument 'out', and "
                                                 r"argument 'src' shares memory with it"):
            call(signal, signal)
        with pytest.raises(ArgumentError, match="'src' shares memory"):
            call(signal[1:], signal[:-1])  # overlapping views
    np.testing.assert_array_equal(signal, [1.0, 3.0, 2.0, 5.0, 4.0])  # nothing written


@pytest.mark.parametrize("jit", PATHS)
def test_distinct_and_read_only_aliases_still_work(jit):
    fn = ad.differentiable(smooth, jit=jit)
    signal = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    out, expected_out = signal.copy(), signal.copy()
    assert fn(out, signal) == pytest.approx(smooth(expected_out, signal))
    np.testing.assert_array_equal(out, expected_out)
    check_grads(smooth, signal.copy(), signal.copy(),
                           paths=("python", "numba") if jit else ("python",))
    evens, odds = np.arange(8.0)[::2], np.arange(8.0)[1::2]  # one buffer, no overlap
    again = evens.copy()
    assert fn(evens, odds) == pytest.approx(smooth(again, odds))
    grads = ad.gradient(ad.differentiable(overlap, jit=jit))(signal, signal)
    np.testing.assert_allclose(grads[0], signal)
    np.testing.assert_allclose(grads[1], signal)
