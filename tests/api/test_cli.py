"""The ``s2s-ad`` command line, run as the installed console script.

Every invocation starts a process that imports Numba (about a second), so the
module fixture ``runs`` starts them all at once, a few at a time, and each test
checks the result of its own invocation.  Fixture files live in ``cli_files/``;
``issues.py`` marks each expected finding with a ``# expect:`` comment that
gives its severity, the text at its column and a fragment of its message.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.cli import argument_value, example_args, format_value

SCRIPT = Path(sys.executable).parent / "s2s-ad"
FILES = Path(__file__).parent / "cli_files"
BAD_SYNTAX = "import s2s_ad as ad\n\n\n@ad.differentiable\ndef f(x):\n    return x +* 2\n"
MARKER = re.compile(r"# expect: (warning|error) at '([^']+)': (.+)$")

# name -> (arguments, working directory relative to FILES); {tmp} is a scratch folder
INVOCATIONS: dict[str, tuple[list[str], str]] = {
    "show_module": (["show", "demo.py:poly"], "."),
    "show_anf": (["show", "demo.py:power_sum", "--stage", "anf", "--at", "2.0", "4"], "."),
    "show_python": (["show", "demo.py:formatted", "--at", "2.5"], "."),
    "check_issues": (["check", "issues.py"], "."),
    "check_json": (["check", "--format", "json", "issues.py"], "."),
    "check_clean": (["check", "demo.py"], "."),
    "check_dir": (["check", "."], "."),
    "check_package": (["check", "../cli_package"], "."),
    "check_all": (["check", "--all", "../cli_package/shop/pricing.py"], "."),
    "grad_file": (["grad", "demo.py:poly", "--at", "1.0", "2.0"], "."),
    "grad_int": (["grad", "demo.py:power_sum", "--at", "2.0", "4"], "."),
    "grad_warns": (["grad", "issues.py:unused", "--at", "1.0", "2.0"], "."),
    "grad_module": (["grad", "cli_files.demo:poly", "--at", "1.0", "2.0"], ".."),
    "missing_file": (["grad", "nothere.py:f"], "."),
    "missing_path": (["check", "nothere"], "."),
    "missing_function": (["grad", "issues.py:nope"], "."),
    "refused": (["grad", "issues.py:refused"], "."),
    "syntax_error": (["check", "{tmp}/bad.py"], "."),
    "bad_value": (["grad", "issues.py:clean", "--at", "one"], "."),
    "help": (["--help"], "."),
    "show_help": (["show", "--help"], "."),
    "check_help": (["check", "--help"], "."),
    "grad_help": (["grad", "--help"], "."),
}


def _run(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "S2S_AD_CACHE_DIR": str(cache)}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def cli_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch folder holding ``bad.py`` and one cache folder per invocation."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "bad.py").write_text(BAD_SYNTAX)
    return tmp


@pytest.fixture(scope="module")
def runs(cli_tmp: Path) -> dict[str, subprocess.CompletedProcess]:
    """Every invocation in ``INVOCATIONS``, run concurrently, each with its own cache."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(_run, [a.format(tmp=cli_tmp) for a in args],
                                     (FILES / cwd).resolve(), cli_tmp / f"cache_{name}")
                   for name, (args, cwd) in INVOCATIONS.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def demo(cli_tmp: Path, runs: dict) -> ModuleType:
    """``cli_files/demo.py`` imported in this process, sharing ``grad_file``'s disk cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("S2S_AD_CACHE_DIR", str(cli_tmp / "cache_grad_file"))
        spec = importlib.util.spec_from_file_location("cli_files_demo", FILES / "demo.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module


def expected_findings(path: Path, shown: str) -> list[tuple[str, str]]:
    """(line prefix, message fragment) for each ``# expect:`` marker in ``path``."""
    found = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        marker = MARKER.search(line)
        if marker:
            severity, anchor, fragment = marker.groups()
            col = line.index(anchor) + 1
            found.append((f"{shown}:{lineno}:{col}: {severity}: ", fragment))
    return found


def assert_findings(lines: list[str], expected: list[tuple[str, str]]) -> None:
    assert len(lines) == len(expected), "\n".join(lines)
    for line, (prefix, fragment) in zip(lines, expected, strict=True):
        assert line.startswith(prefix), (line, prefix)
        assert fragment in line[len(prefix) :], (line, fragment)


# -- show ------------------------------------------------------------------------------
def test_show_prints_a_module_that_runs_and_compiles_with_numba(runs):
    out = runs["show_module"]
    assert out.returncode == 0, out.stderr
    *module, status = out.stdout.rstrip("\n").splitlines()
    assert status == "# Numba: compiles for poly(1.0, 1.0)"
    namespace: dict = {}
    exec(compile("\n".join(module), "<show>", "exec"), namespace)
    assert namespace["poly"](1.0, 2.0) == pytest.approx(math.sin(1.0) * 2.0 + 1.0)


def test_show_anf_has_one_operation_per_statement(runs):
    out = runs["show_anf"]
    assert out.returncode == 0, out.stderr
    *stage, status = out.stdout.rstrip("\n").splitlines()
    compile("\n".join(stage), "<anf>", "exec")
    assert stage[0].startswith("def power_sum(")
    code = [line for line in stage if not line.strip().startswith("#")]
    assert not [line for line in code if "+" in line and "**" in line]
    assert status == "# Numba: compiles for power_sum(2.0, 4)"


def test_show_says_why_numba_does_not_compile(runs):
    out = runs["show_python"]
    assert out.returncode == 0, out.stderr
    status = out.stdout.rstrip("\n").splitlines()[-1]
    prefix = "# Numba: does not compile for formatted(2.5); runs in Python because "
    assert status.startswith(prefix) and len(status) > len(prefix)


# -- check -----------------------------------------------------------------------------
def test_check_reports_each_finding_at_its_marker(runs):
    out = runs["check_issues"]
    assert out.returncode == 1, out.stderr
    assert_findings(out.stdout.splitlines(), expected_findings(FILES / "issues.py", "issues.py"))


def test_check_json_matches_the_text_report(runs):
    out = runs["check_json"]
    assert out.returncode == 1, out.stderr
    findings = json.loads(out.stdout)
    assert findings and all(set(f) == {"path", "line", "col", "severity", "message"}
                            for f in findings)
    text = [
        f"{f['path']}:{f['line']}:{f['col']}: {f['severity']}: {f['message']}" for f in findings
    ]
    assert text == runs["check_issues"].stdout.splitlines()


def test_check_clean_file_prints_nothing(runs):
    out = runs["check_clean"]
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")  # its print never ran


def test_check_directory_recurses_and_sorts(runs):
    out = runs["check_dir"]
    assert out.returncode == 1, out.stderr
    expected = expected_findings(FILES / "issues.py", "issues.py") + expected_findings(
        FILES / "nested" / "more_issues.py", os.path.join("nested", "more_issues.py")
    )
    assert_findings(out.stdout.splitlines(), expected)


def test_check_imports_a_package_module_and_runs_only_its_definitions(runs):
    done = runs["check_package"]
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, lines  # price, the one @differentiable function
    assert re.match(r".*shop/pricing\.py:13:\d+: warning: parameter 'discount' does not "
                    r"affect the result of price", lines[0]), lines[0]
    assert "ran" not in done.stderr  # neither the print nor the SystemExit at module level


def test_check_all_checks_every_top_level_function(runs):
    done = runs["check_all"]
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2, lines
    assert "price" in lines[0] and re.search(r"pricing\.py:18:\d+: warning: the result of "
                                             r"rounded depends on parameter 'a' only through "
                                             r"the non-differentiable operation 'round'",
                                             lines[1]), lines


# -- grad ------------------------------------------------------------------------------
def parse_grad(stdout: str) -> tuple[float, object]:
    value_line, gradient_line = stdout.splitlines()
    assert value_line.startswith("value = ") and gradient_line.startswith("gradient = ")
    return (
        ast.literal_eval(value_line.removeprefix("value = ")),
        ast.literal_eval(gradient_line.removeprefix("gradient = ")),
    )


@pytest.mark.parametrize(
    "name, function, args",
    [
        ("grad_file", "poly", (1.0, 2.0)),
        ("grad_module", "poly", (1.0, 2.0)),
        ("grad_int", "power_sum", (2.0, 4)),
    ],
)
def test_grad_matches_value_and_gradient(runs, demo, name, function, args):
    out = runs[name]
    assert out.returncode == 0, out.stderr
    value, gradient = ad.value_and_gradient(getattr(demo, function))(*args)
    assert parse_grad(out.stdout) == (value, gradient)


def test_grad_prints_a_zero_derivative_warning_as_one_line(runs):
    out = runs["grad_warns"]
    assert (out.returncode, parse_grad(out.stdout)) == (0, (2.0, (2.0, 0.0)))
    [(prefix, fragment), *_] = expected_findings(FILES / "issues.py", "issues.py")
    assert_findings(out.stderr.splitlines(), [(prefix, fragment)])


# -- errors and help -------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, message",
    [
        ("missing_file", "no such file: 'nothere.py'"),
        ("missing_path", "no such file or directory: 'nothere'"),
        ("missing_function", "no function 'nope' in issues.py"),
    ],
)
def test_errors_are_one_line_and_exit_2(runs, name, message):
    out = runs[name]
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"s2s-ad: error: {message}\n")


def test_syntax_error_names_file_line_and_column(runs):
    out = runs["syntax_error"]
    with pytest.raises(SyntaxError) as error:
        compile(BAD_SYNTAX, "bad.py", "exec")
    where = f"bad.py:{error.value.lineno}:{error.value.offset}: SyntaxError: "
    assert (out.returncode, out.stdout) == (2, "")
    assert len(out.stderr.splitlines()) == 1 and where in out.stderr, out.stderr


def test_refused_function_is_one_located_line(runs):
    out = runs["refused"]
    prefix = next(
        p for p, fragment in expected_findings(FILES / "issues.py", "issues.py") if "error" in p
    )
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("s2s-ad: error: " + prefix.replace("error: ", ""))
    assert len(out.stderr.splitlines()) == 1


def test_bad_at_value_is_a_usage_error(runs):
    out = runs["bad_value"]
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1
    assert "cannot read 'one'" in out.stderr


@pytest.mark.parametrize("name", ["help", "show_help", "check_help", "grad_help"])
def test_help_exits_0(runs, name):
    out = runs[name]
    assert out.returncode == 0 and out.stdout.startswith("usage: s2s-ad"), out.stderr


# -- argument values, in process -------------------------------------------------------
def test_argument_values_keep_ints_and_read_arrays():
    assert (argument_value("3"), type(argument_value("3"))) == (3, int)
    assert (argument_value("-2.5"), type(argument_value("3.0"))) == (-2.5, float)
    array = argument_value("[1, 2.5]")
    assert array.dtype == np.float64 and array.tolist() == [1.0, 2.5]
    assert argument_value("(1.0, 2)") == (1.0, 2)
    with pytest.raises(argparse.ArgumentTypeError):
        argument_value("one")


def test_example_args_use_defaults_then_one():
    def f(x, n=3):
        return x * n

    assert example_args(f, None) == (1.0, 3)
    assert example_args(f, [2.0]) == (2.0, 3)
    assert format_value((np.float64(0.5), np.array([1.0, 2.0]))) == "(0.5, [1.0, 2.0])"
