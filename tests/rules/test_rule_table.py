"""Every registered derivative rule, checked at random points (issue 3, acceptance 2).

The table in rule_table_cases.py is keyed by rule identity, exactly as
``s2s_ad.rules.all_rules()`` lists the rules, so a rule cannot land without cases and a
case cannot name a rule that does not exist. For each case a module file
``def f(<args>, u): return np.sum(<call> * u)`` (``<call> * u`` for a scalar result) is
written and imported, so the compiler reads it through its own source.

* Differentiable rules: ``ad.gradient`` in the Python path against central finite
  differences of the original function, element by element.
* Non-differentiable rules: the compiled value equals the original's, and the gradient
  through the rule alone is zero and comes with a ZeroDerivativeWarning.
* The Numba subset (at least one case per rule): grouped into a few functions so Numba
  compiles once per group (every third group in the default run, all in the slow
  tier); Numba's value and gradient agree with the Python path to 1e-12 relative, and
  ``explain`` says Numba. A group that falls back is split, so the fallback names its
  op, and the op must be listed in NUMBA_FALLBACKS with a reason.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
import itertools
import math
import os
import sys
import warnings
import zlib
from pathlib import Path

import gast
import numpy as np
import pytest
import scipy.linalg
import scipy.special
from rule_table_cases import NOT_FLOAT, TABLE, Case, cases, numba_cases

import s2s_ad as ad
from s2s_ad import runtime
from s2s_ad.compiler.jit import cache_dir
from s2s_ad.compiler.normalize.library_calls import SPLITS
from s2s_ad.rules import all_rules, array_methods, lookup
from s2s_ad.rules.runtime_rules import HELPERS as GRADIENT_CODE_HELPERS
from s2s_ad.testing import partial_derivatives

FD_RTOL = 1e-5
FD_ATOL = 1e-7
NUMBA_RTOL = 1e-12
NUMBA_GROUP_SIZE = 8

# Cases whose op Numba cannot compile (``explain`` then reports the Python path and why).
# A case listed here that compiles is fine; one that falls back and is not listed fails.
NUMBA_FALLBACKS: dict[str, str] = {
    "np.ndim": "Numba has no np.ndim (x.ndim would do); s2s_ad supplies no helper yet",
}


# ---- the rule keys ---------------------------------------------------------------------
def _key_name(key) -> str:
    callee, nargs = key
    name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", repr(callee))
    module = getattr(callee, "__module__", "") or ""
    return f"{module}.{name}" + ("" if nargs is None else f"/{nargs}")


#: the flags that make a bounds check conditional, which only the bounds stage writes
#: (tests/compiler/test_bounds.py reads them in generated source and runs them)
_BOUNDS_FLAGS = {runtime.check_index_unless, runtime.index_in_bounds, runtime.range_in_bounds}


def _registered() -> dict:
    """The rules users' code calls (those of the helpers generated gradient code calls,
    which forward mode reads again, are checked in tests/compiler/test_higher_order.py)."""
    return {(callee, nargs): rule for callee, nargs, rule in all_rules()
            if callee not in GRADIENT_CODE_HELPERS and callee not in _BOUNDS_FLAGS}


def _is_differentiable(key) -> bool:
    return _registered()[key].differentiable


def test_every_registered_rule_has_a_table_entry():
    missing = [_key_name(k) for k in _registered() if k not in TABLE]
    assert not missing, f"registered rules without a rule-table entry: {missing}"


def test_every_table_entry_names_a_registered_rule():
    registered = _registered()
    unknown = [_key_name(k) for k in TABLE if k not in registered]
    assert not unknown, f"rule-table entries naming no registered rule: {unknown}"
    empty = [_key_name(k) for k, group in TABLE.items() if not group]
    assert not empty, f"rule-table entries without cases: {empty}"


# ---- each case really calls its rule ----------------------------------------------------
_METHODS = array_methods()  # x.sum() is np.sum(x): the spellings the rules declare
_ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "size": np.size, "ndim": np.ndim}
_OPERATORS = {op: op.__name__ for op in (
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod, ast.FloorDiv, ast.MatMult, ast.USub,
    ast.UAdd, ast.Not, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Invert)}


def _resolve(node: ast.expr, params: set[str]):
    """The object a global name or attribute chain names (None for argument values)."""
    if isinstance(node, ast.Name):
        if node.id in params:
            return None
        return {"np": np, "math": math, "scipy": scipy}.get(node.id,
                                                             getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, params)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _list_rules_called(node: ast.AST) -> list:
    """A comprehension builds a list by appends; read from the end, indexed at a
    computed position; passed to a function, converted to an array (joined by
    np.concatenate, np.hstack or np.vstack: its items joined)."""
    comprehension = (ast.ListComp, ast.GeneratorExp)
    found = []
    if isinstance(node, comprehension):
        found += [lookup(runtime.new_list, 0), lookup(runtime.appended, 2)]
    if isinstance(node, ast.Subscript) and isinstance(node.value, comprehension) and not (
            isinstance(node.slice, ast.Constant) and node.slice.value >= 0):
        found.append(lookup(runtime.list_position, 2))
    if isinstance(node, ast.Call) and any(isinstance(a, comprehension) for a in node.args) \
            and not (isinstance(node.func, ast.Name) and node.func.id == "len"):
        join = _LIST_JOINS.get(getattr(node.func, "attr", None))
        found.append(lookup(join, 2) if join is runtime.list_concatenate else
                     lookup(join or runtime.list_array, 1))
    return found


#: NumPy's joins of a list's items and the runtime's (the items themselves are joined)
_LIST_JOINS = {"concatenate": runtime.list_concatenate, "hstack": runtime.list_hstack,
               "vstack": runtime.list_vstack}


def _rules_called(expr: str, params: set[str]) -> list:
    """The registered rules the expression's calls and operators use."""
    found = []
    for node in ast.walk(ast.parse(expr)):
        found += _list_rules_called(node)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in params:
            found.append(lookup(runtime.write_back, 2))  # an argument written: copied back
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in params and isinstance(node.slice, ast.Constant) \
                and type(node.slice.value) is int:
            found.append(lookup(runtime.check_index, 5))  # an argument's size is not known
        if isinstance(node, ast.BinOp | ast.UnaryOp):
            found.append(_registered().get((getattr(gast, _OPERATORS[type(node.op)]), None)))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _resolve(func.value, params) is None:
                if func.attr == "astype":
                    target = _resolve(node.args[0], params)
                    callee = runtime.astype_int if target in (int, np.int64) \
                        else runtime.astype_float
                    found.append(lookup(callee, 1))
                else:
                    args = len(node.args) + 1
                    if func.attr in ("reshape", "transpose") and len(node.args) > 1:
                        args = 2
                    found.append(lookup(_METHODS[func.attr], args))
            elif _resolve(func, params) in SPLITS:  # one rt.section call per piece
                found.append(lookup(runtime.section, 5))
            else:
                found.append(lookup(_resolve(func, params), len(node.args)))
        elif isinstance(node, ast.Attribute) and node.attr in _ATTRIBUTES \
                and _resolve(node.value, params) is None:
            found.append(lookup(_ATTRIBUTES[node.attr], 1))
    return found


def test_each_case_calls_the_rule_it_is_filed_under():
    registered = _registered()
    rng = np.random.default_rng(0)
    wrong = []
    for key, case in cases():
        params = set(case.args(rng))
        text = case.stmt or case.expr
        used = _rules_called(text, params)
        if not any(rule is registered[key] for rule in used):
            wrong.append(f"{case.name}: {case.expr!r} does not call {_key_name(key)}")
    assert not wrong, "\n".join(wrong)


# ---- the audit: every parameter of every rule is checked with a float argument -------------
def _bound(rule, node: ast.AST, params: set[str]) -> dict[str, ast.expr]:
    """The operands of ``node`` (a call, operator or attribute using ``rule``) by the
    rule's parameter names."""
    if isinstance(node, ast.BinOp):
        operands = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp):
        operands = [node.operand]
    elif isinstance(node, ast.Attribute):
        operands = [node.value]
    elif isinstance(node.func, ast.Attribute) and _resolve(node.func.value, params) is None:
        operands = [node.func.value, *node.args]
        if node.func.attr == "astype":
            operands = [node.func.value]
    else:
        operands = list(node.args)
    bound = dict(zip(rule.params, operands, strict=False))
    bound.update({k.arg: k.value for k in getattr(node, "keywords", []) if k.arg in rule.params})
    return bound


def _uses(expr: str, params: set[str]) -> list[tuple[object, ast.AST]]:
    """(rule, node) for each call, operator and attribute of ``expr`` that uses a rule."""
    found = []
    for node in ast.walk(ast.parse(expr)):
        if isinstance(node, ast.Call | ast.BinOp | ast.UnaryOp | ast.Attribute):
            found += [(r, node) for r in _rules_called_at(node, params)]
    return found


def _rules_called_at(node: ast.AST, params: set[str]) -> list:
    """The rules ``node`` itself uses (not those of its operands)."""
    if isinstance(node, ast.Call):
        args = [a if _resolve(a, params) is not None else ast.Constant(0) for a in node.args]
        node = ast.Call(func=node.func, args=args, keywords=[])
    elif isinstance(node, ast.BinOp):
        node = ast.BinOp(left=ast.Constant(0), op=node.op, right=ast.Constant(0))
    elif isinstance(node, ast.UnaryOp):
        node = ast.UnaryOp(op=node.op, operand=ast.Constant(0))
    else:
        node = ast.Attribute(value=ast.Name(id="_operand"), attr=node.attr)
    text = ast.unparse(ast.fix_missing_locations(node))
    return [r for r in _rules_called(text, params | {"_operand"}) if r is not None]


def _is_float_value(node: ast.expr, values: dict) -> bool:
    """Whether the operand evaluates to a float (or a float array) at the case's point."""
    try:
        value = eval(ast.unparse(node), {"np": np, "math": math, "scipy": scipy,  # noqa: S307
                                         **values})
    except Exception:  # a comprehension's variable: not known on its own
        return False
    if isinstance(value, tuple | list):  # the operands of a join: any float one
        return any(_is_float(v) or isinstance(v, np.floating) for v in value)
    return _is_float(value) or isinstance(value, np.floating)


def _float_fed_parameters() -> set[tuple]:
    """(rule key, parameter) for each parameter some case feeds from a float operand."""
    registered = _registered()
    fed = set()
    for key, case in cases():
        values = case.args(np.random.default_rng(0))
        for rule, node in _uses(case.stmt or case.expr, set(values)):
            if rule is not registered[key]:
                continue
            for param, operand in _bound(rule, node, set(values)).items():
                if _is_float_value(operand, values):
                    fed.add((key, param))
    return fed


def test_every_parameter_of_every_rule_is_checked_with_a_float():
    """The audit of issue 20 item 7: a rule that treats a float parameter as constant
    (np.linspace's start and stop, np.full's value were) is caught by the finite
    differences of a case that feeds that parameter from a float argument, unless the
    parameter cannot be a float (NOT_FLOAT says why)."""
    fed = _float_fed_parameters()
    unchecked = [f"{_key_name(key)}: {param}" for key, rule in _registered().items()
                 for param in rule.params
                 if (key, param) not in fed and param not in NOT_FLOAT.get(key, {})]
    assert not unchecked, f"rule parameters no case feeds from a float argument: {unchecked}"
    stale = [f"{_key_name(key)}: {param}" for key, why in NOT_FLOAT.items() for param in why
             if (key, param) in fed or param not in _registered()[key].params]
    assert not stale, f"NOT_FLOAT lists parameters that are checked or do not exist: {stale}"


# ---- building the functions ---------------------------------------------------------------
_HEADER = "import math\n\nimport numpy as np\nimport scipy.linalg\nimport scipy.special\n\n\n"
_modules = itertools.count()


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def _is_float(value) -> bool:
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


class Built:
    """One case as a function: its text, its argument values and the differentiated ones."""

    def __init__(self, case: Case, suffix: str = ""):
        rng = np.random.default_rng(_seed(case.name))
        values = case.args(rng)
        self.case = case
        self.names = list(values)
        # one namespace: a comprehension in the expression sees the arguments
        out = eval(case.expr, {"np": np, "math": math, "scipy": scipy, **values})  # noqa: S307
        if np.ndim(out) == 0:
            u = float(rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0]))
        else:
            u = rng.uniform(-1.0, 1.0, np.shape(out))
        wrt = case.wrt if case.wrt is not None else tuple(
            n for n in self.names if _is_float(values[n]))
        rename = {n: n + suffix for n in [*self.names, "u"]}
        self.params = [rename[n] for n in [*self.names, "u"]]
        self.values = [values[n] for n in self.names] + [u]
        self.wrt = tuple(rename[n] for n in wrt)
        expr = _renamed(case.expr, rename)
        self.term = f"({expr}) * {rename['u']}" if np.ndim(out) == 0 \
            else f"np.sum(({expr}) * {rename['u']})"
        self.stmts = [_renamed(case.stmt, rename)] if case.stmt else []

    def source(self, fname: str = "f") -> str:
        body = "".join(f"    {s}\n" for s in self.stmts)
        return f"def {fname}({', '.join(self.params)}):\n{body}    return {self.term}\n"


def _renamed(text: str, rename: dict[str, str]) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in rename:
            node.id = rename[node.id]
    return ast.unparse(tree)


def _import(directory: Path, source: str, name: str | None = None):
    """Write ``source`` to ``directory`` and import it as a fresh module."""
    name = name or f"rule_table_mod_{next(_modules)}"
    path = directory / f"{name}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_HEADER + source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _gradients(df, args: list, count: int) -> tuple[object, tuple]:
    value, grads = ad.value_and_gradient(df)(*args)
    return value, (grads,) if count == 1 else grads


def _case_id(item) -> str:
    return item[1].name


DIFFERENTIABLE = [pytest.param(k, c, id=c.name) for k, c in cases() if _is_differentiable(k)]
NON_DIFFERENTIABLE = [pytest.param(k, c, id=c.name) for k, c in cases()
                      if not _is_differentiable(k)]


def _check_against_fd(built: Built, fn, tmp_path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ad.ZeroDerivativeWarning)
        df = ad.differentiable(fn, wrt=built.wrt, jit=False)
        value, grads = _gradients(df, built.values, len(built.wrt))
    expected = fn(*built.values)
    np.testing.assert_allclose(value, expected, rtol=1e-13, atol=1e-13,
                               err_msg=f"{built.case.name}: value")
    for name, grad in zip(built.wrt, grads, strict=True):
        position = built.params.index(name)
        arg = built.values[position]
        assert np.shape(grad) == np.shape(arg), f"{name}: gradient shape {np.shape(grad)}"
        fd = partial_derivatives(fn, built.values, position, relative=built.case.step)[0]
        np.testing.assert_allclose(
            grad, fd, rtol=FD_RTOL, atol=FD_ATOL,
            err_msg=f"{built.case.name}: d/d{name} of {built.case.expr} at "
                    f"{dict(zip(built.params, built.values, strict=True))}")
    zero = [str(w.message) for w in caught if issubclass(w.category, ad.ZeroDerivativeWarning)]
    expected = [f"parameter '{name}'" for name in built.case.constant]
    zero = [m for m in zero if not any(e in m for e in expected)]
    assert not zero, f"{built.case.name}: a differentiable rule warns {zero}"


@pytest.mark.parametrize(("key", "case"), DIFFERENTIABLE)
def test_vjp_matches_finite_differences(key, case, tmp_path):
    built = Built(case)
    fn = _import(tmp_path, built.source()).f
    _check_against_fd(built, fn, tmp_path)


@pytest.mark.parametrize(("key", "case"), NON_DIFFERENTIABLE)
def test_non_differentiable_rule(key, case, tmp_path, capsys):
    built = Built(case)
    fn = _import(tmp_path, built.source()).f
    if not case.zero:  # the rule has no float result: the other path must be intact
        _check_against_fd(built, fn, tmp_path)
        return
    assert built.wrt, f"{case.name}: no float argument to differentiate"
    df = ad.differentiable(fn, wrt=built.wrt, jit=False)
    with pytest.warns(ad.ZeroDerivativeWarning):
        value, grads = _gradients(df, built.values, len(built.wrt))
    assert value == fn(*built.values), f"{case.name}: value {value!r}"
    assert df(*built.values) == fn(*built.values)
    for name, grad in zip(built.wrt, grads, strict=True):
        position = built.params.index(name)
        arg = built.values[position]
        assert np.shape(grad) == np.shape(arg), f"{name}: gradient shape {np.shape(grad)}"
        assert np.all(np.asarray(grad) == 0.0), f"{case.name}: d/d{name} = {grad!r}, not 0"
        # the rule says constant: NumPy's function must really be (a rule audit)
        fd = partial_derivatives(fn, built.values, position, relative=built.case.step)[0]
        np.testing.assert_allclose(fd, 0.0, atol=FD_ATOL,
                                   err_msg=f"{case.name}: d/d{name} is not 0 in NumPy")


# ---- the Numba subset ------------------------------------------------------------------------
def _groups() -> list:
    subset = numba_cases()
    out = []
    for i in range(0, len(subset), NUMBA_GROUP_SIZE):
        chunk = subset[i:i + NUMBA_GROUP_SIZE]
        out.append(pytest.param(chunk, id=f"{chunk[0][1].name}..{chunk[-1][1].name}"))
    return out


def _group_source(members: list[Built]) -> str:
    params = [p for b in members for p in b.params]
    body = [s for b in members for s in b.stmts]
    body += [f"t{i} = {b.term}" for i, b in enumerate(members)]
    terms = " + ".join(f"t{i}" for i in range(len(members)))
    lines = "".join(f"    {s}\n" for s in body)
    return f"def g({', '.join(params)}):\n{lines}    return {terms}\n"


def _assert_close(got, want, what: str) -> None:
    want = np.asarray(want, dtype=np.float64)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=NUMBA_RTOL, atol=NUMBA_RTOL * scale,
                               err_msg=what)


def _stable_dir() -> Path:
    """Where the Numba groups' modules live: a stable, content-addressed file keeps the
    generated code (which names its origin file) identical from run to run, so Numba's
    disk cache (s2s_ad compiles with cache=True) spares later runs the compile."""
    path = cache_dir().parent / "rule_table"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _numba_vs_python(members: list[Built]) -> tuple[str, str]:
    """Compile the members' sum with jit='auto'; if Numba runs it, compare with Python."""
    source = _group_source(members)
    digest = hashlib.sha256((_HEADER + source).encode()).hexdigest()[:16]
    g = _import(_stable_dir(), source, f"rule_table_{digest}").g
    wrt = tuple(w for b in members for w in b.wrt)
    args = [v for b in members for v in b.values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.ZeroDerivativeWarning)
        df_nb = ad.differentiable(g, wrt=wrt, jit="auto")
        how = ad.explain(df_nb, *args)
        if how.path != "numba":
            return how.path, how.reason
        df_py = ad.differentiable(g, wrt=wrt, jit=False)
        value_py, grads_py = _gradients(df_py, args, len(wrt))
        value_nb, grads_nb = _gradients(df_nb, args, len(wrt))
        assert ad.explain(df_nb).path == "numba"
    names = ", ".join(b.case.name for b in members)
    _assert_close(value_nb, value_py, f"value of [{names}]")
    for w, got, want in zip(wrt, grads_nb, grads_py, strict=True):
        _assert_close(got, want, f"d/d{w} of [{names}]")
    return how.path, how.reason


# every eighth group in the default run (each rule's Python path is checked above), all
# of them in the slow tier
@pytest.mark.parametrize("chunk", [pytest.param(*c.values, id=c.id,
                                                marks=() if k % 8 == 0 else pytest.mark.slow)
                                   for k, c in enumerate(_groups())])
def test_numba_agrees_with_python(chunk, capsys):
    members = [Built(case, suffix=f"_{i}") for i, (_, case) in enumerate(chunk)]
    path, reason = _numba_vs_python(members)
    if path == "numba":
        return
    assert reason, "explain gives no reason for the Python fallback"
    fallbacks = {}
    for (_, case), built in zip(chunk, members, strict=True):
        path, reason = _numba_vs_python([built])
        if path != "numba":
            assert reason, f"{case.name}: explain gives no reason for the fallback"
            fallbacks[case.name] = reason
    for name, reason in fallbacks.items():
        # a builtin category: pytest-xdist's controller must be able to import it
        warnings.warn(f"Numba fallback: {name} runs in Python: {reason}", UserWarning,
                      stacklevel=1)
    unexpected = {n: r for n, r in fallbacks.items() if n not in NUMBA_FALLBACKS}
    assert not unexpected, f"ops that fall back to Python under Numba: {unexpected}"
    assert fallbacks, f"the group falls back ({reason}) but none of its members does"
