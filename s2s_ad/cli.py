"""The ``s2s-ad`` command line: ``show``, ``check``, ``grad`` and ``kernels``.

::

    s2s-ad show model.py:loss --stage anf --at 1.0 3
    s2s-ad check src/ --format json
    s2s-ad grad model.py:loss --at 1.0 2.0
    s2s-ad grad mypackage.model:loss --at "[1.0, 2.0]" 3
    s2s-ad kernels

A target is ``FILE.py:FUNC`` or ``package.module:FUNC``.  ``--at`` values are
read as Python literals: ``3`` stays an int (a loop bound, never
differentiated), ``3.0`` is a float, ``[1.0, 2.0]`` becomes a float64 NumPy
array and ``(1.0, 2.0)`` a tuple.  Without ``--at`` every parameter takes its
default value, or ``1.0`` when it has none.

Exit status: 0 on success, 1 when ``check`` reports a warning or an error (not a
note: a call a custom derivative serves in one mode only), 2 on bad usage (a
missing file or function, a syntax error, a refused function in ``show`` or
``grad``).  Every error is one line on stderr, never a traceback.

Files are imported inside ``ad.deferred_errors()`` so one refused function
does not hide the others; anything they print while being imported goes to
stderr, keeping stdout for the report.  ``check`` imports a file as a module of
its package (relative imports work) and runs only its definitions
(:mod:`s2s_ad.loading`); ``--all`` checks every top-level function.  The CLI
uses the public API and that loader only.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import importlib
import importlib.metadata
import importlib.util
import inspect
import itertools
import json
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import s2s_ad as ad
from s2s_ad.introspect import STAGES
from s2s_ad.loading import import_definitions, package_of

PROG = "s2s-ad"
_module_numbers = itertools.count()


class CliError(Exception):
    """A problem the user can fix, reported as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one-line :class:`CliError` s."""

    def error(self, message: str) -> Any:  # argparse calls this and expects no return
        raise CliError(f"{message} (see '{self.prog} --help')")


# -- reporting -----------------------------------------------------------------------
def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it lies inside it."""
    p = Path(path)
    if not p.is_absolute():
        return str(path)
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _one_line(text: str) -> str:
    """The lines of ``text`` joined into one, blank ones dropped."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def describe_error(exc: BaseException) -> str:
    """One line for ``exc``: located for refusals and syntax errors, else ``Type: msg``."""
    if isinstance(exc, CliError):
        return str(exc)
    if isinstance(exc, ad.NonDifferentiableError):
        where = ""
        if exc.location is not None:
            loc = exc.location
            where = f"{display_path(loc.filename)}:{loc.lineno}:{loc.col}: "
        hint = f"; {_one_line(exc.hint)}" if exc.hint else ""
        return f"{where}{_one_line(exc.problem)}{hint}"
    if isinstance(exc, SyntaxError):
        where = display_path(exc.filename) if exc.filename else "<unknown>"
        return f"{where}:{exc.lineno or 1}:{exc.offset or 1}: SyntaxError: {exc.msg}"
    message = str(exc).splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def print_error(message: str) -> None:
    """Print ``s2s-ad: error: message`` on stderr."""
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """Show a warning as one compiler-style line on stderr.

    A message that starts with its own ``file:line:col:`` (as zero-derivative
    warnings do) keeps that location, with the file shown relative.
    """
    text = _one_line(str(message))
    where = f"{display_path(filename)}:{lineno}"
    located = re.match(rf"{re.escape(filename)}:{lineno}:(\d+): (.*)", text)
    if located:
        where, text = f"{where}:{located.group(1)}", located.group(2)
    kind = "" if issubclass(category, ad.ZeroDerivativeWarning) else f" ({category.__name__})"
    print(f"{where}: warning: {text}{kind}", file=sys.stderr)


# -- loading user code -----------------------------------------------------------------
@contextlib.contextmanager
def _importing(directory: Path) -> Iterator[None]:
    """Import with ``directory`` first on ``sys.path``, refusals deferred, prints on stderr."""
    entry = str(directory)
    sys.path.insert(0, entry)
    try:
        with ad.deferred_errors(), contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if sys.path and sys.path[0] == entry:
            del sys.path[0]
        elif entry in sys.path:
            sys.path.remove(entry)


def _import_failure(exc: BaseException) -> CliError:
    """A one-line error for an exception raised while importing user code."""
    if isinstance(exc, SyntaxError | ad.NonDifferentiableError):
        return CliError(describe_error(exc))
    here = os.path.abspath(__file__)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen") and os.path.abspath(f.filename) != here]
    where = ""
    if frames:
        top = frames[0]
        where = f"{display_path(top.filename)}:{top.lineno}:{(top.colno or 0) + 1}: "
    return CliError(f"{where}{describe_error(exc)} (while importing)")


def load_file(path: Path, definitions_only: bool = False) -> ModuleType:
    """Import the Python file ``path`` under a fresh module name; with
    ``definitions_only``, as a module of its package, running only its definitions
    (see :mod:`s2s_ad.loading`)."""
    if not path.exists():
        raise CliError(f"no such file: '{path}'")
    if path.is_dir() or path.suffix != ".py":
        raise CliError(f"not a Python file: '{path}'")
    root, dotted = package_of(path)
    package = dotted.rpartition(".")[0] if definitions_only else ""
    stem = re.sub(r"\W", "_", path.stem)
    name = f"{package}._s2s_ad_cli_{next(_module_numbers)}_{stem}".lstrip(".")
    try:
        with _importing(root if definitions_only else path.resolve().parent):
            if definitions_only:
                return import_definitions(path, name, package)
            spec = importlib.util.spec_from_file_location(name, path.resolve())
            if spec is None or spec.loader is None:
                raise CliError(f"cannot import '{path}'")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    except CliError:
        raise
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise _import_failure(exc) from exc
    return module


def load_module(name: str) -> ModuleType:
    """Import ``package.module`` (the working directory is searched first)."""
    try:
        with _importing(Path.cwd()):
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise CliError(f"no module named '{name}'") from exc
        raise _import_failure(exc) from exc
    except (Exception, SystemExit) as exc:
        raise _import_failure(exc) from exc


def _is_file_reference(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where or Path(where).is_file()


def resolve_target(target: str) -> Callable:
    """The function named by ``FILE.py:FUNC`` or ``package.module:FUNC``.

    A function whose transform was refused raises its ``NonDifferentiableError``.
    """
    where, colon, name = target.rpartition(":")
    if not colon or not where or not name:
        raise CliError(f"expected FILE.py:FUNC or package.module:FUNC, not '{target}'")
    module = load_file(Path(where)) if _is_file_reference(where) else load_module(where)
    obj: Any = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise CliError(f"no function '{name}' in {where}")
    if not callable(obj):
        raise CliError(f"'{name}' in {where} is a {type(obj).__name__}, not a function")
    if isinstance(obj, ad.DifferentiableFunction) and obj.error is not None:
        raise obj.error
    return obj


# -- argument values ---------------------------------------------------------------------
def _as_argument(value: Any) -> Any:
    """A literal from the command line as an argument: lists become float arrays."""
    if isinstance(value, list):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, tuple):
        return tuple(_as_argument(v) for v in value)
    if isinstance(value, bool | int | float):
        return value
    raise ValueError(type(value).__name__)


def argument_value(text: str) -> Any:
    """Read one ``--at`` value: ``3`` -> int, ``3.0`` -> float, ``[1, 2]`` -> array."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    try:
        return _as_argument(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError):
        raise argparse.ArgumentTypeError(
            f"cannot read {text!r}: expected a number, a [list] of numbers or a tuple"
        ) from None


def _function_of(f: Callable) -> Callable:
    return f.fn if isinstance(f, ad.DifferentiableFunction) else f


def example_args(f: Callable, given: Sequence[Any] | None) -> tuple:
    """The ``--at`` values, completed by parameter defaults (or 1.0 when none is given)."""
    fn = _function_of(f)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    given = list(given or [])
    name = getattr(fn, "__name__", "the function")
    if len(given) > len(params):
        raise CliError(f"{name}({', '.join(p.name for p in params)}) takes {len(params)} "
                       f"arguments but --at gives {len(given)}")
    rest = []
    for p in params[len(given):]:
        if p.default is not p.empty:
            rest.append(p.default)
        elif given:
            raise CliError(f"--at gives no value for parameter '{p.name}' of {name}")
        else:
            rest.append(1.0)
    return (*given, *rest)


def format_value(value: Any) -> str:
    """Print a value or gradient exactly: full-precision floats, arrays as lists."""
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


# -- commands ------------------------------------------------------------------------------
def numba_status(f: Callable, args: tuple) -> str:
    """A comment line: does the fused value-and-gradient compile with Numba, and if not why."""
    call = f"{_function_of(f).__name__}({', '.join(format_value(a) for a in args)})"
    try:
        how = ad.explain(f, *args)
    except ad.JitError as exc:
        return f"# Numba: does not compile for {call}: {_one_line(str(exc))}"
    if how.path == "numba":
        return f"# Numba: compiles for {call}"
    return f"# Numba: does not compile for {call}; runs in Python because {_one_line(how.reason)}"


def cmd_show(args: argparse.Namespace) -> int:
    """Print a stage of the generated source, then the Numba status line."""
    f = resolve_target(args.target)
    values = example_args(f, args.at)
    print(ad.source(f, *values, stage=args.stage).rstrip("\n"))
    print(numba_status(f, values))
    return 0


def cmd_grad(args: argparse.Namespace) -> int:
    """Print the value and the gradient of the function at the ``--at`` values."""
    f = resolve_target(args.target)
    values = example_args(f, args.at)
    value, grad = ad.value_and_gradient(f)(*values)
    print(f"value = {format_value(value)}")
    print(f"gradient = {format_value(grad)}")
    if isinstance(grad, tuple) and not grad:
        print(f"{PROG}: note: no argument is a float, so nothing was differentiated "
              "(write 1.0 rather than 1)", file=sys.stderr)
    return 0


def _skipped(relative: Path) -> bool:
    return any(part.startswith(".") or part == "__pycache__" for part in relative.parts)


def _mentions_differentiable(path: Path) -> bool:
    try:
        return "differentiable" in path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return True


def python_files(paths: Sequence[str], every: bool = False) -> list[Path]:
    """The files named, and the ``*.py`` files under the directories named.

    Files found by recursion are checked only if they mention ``differentiable``
    (any file, with ``every``); their module-level work never runs either way.
    """
    files: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            files += sorted(f for f in path.rglob("*.py")
                            if not _skipped(f.relative_to(path))
                            and (every or _mentions_differentiable(f)))
        elif path.is_file():
            files.append(path)
        else:
            raise CliError(f"no such file or directory: '{text}'")
    unique = {f.resolve(): f for f in reversed(files)}
    return list(reversed(unique.values()))


def differentiable_functions(module: ModuleType, every: bool = False
                             ) -> list[ad.DifferentiableFunction]:
    """The ``@differentiable`` functions defined (not just imported) at module level;
    with ``every``, every function defined there."""
    found: dict[int, ad.DifferentiableFunction] = {}
    for value in vars(module).values():
        if (isinstance(value, ad.DifferentiableFunction)
                and getattr(value.fn, "__module__", None) == module.__name__):
            found.setdefault(id(value), value)
        elif every and inspect.isfunction(value) and value.__module__ == module.__name__:
            with ad.deferred_errors():
                found.setdefault(id(value), ad.differentiable(value))
    return list(found.values())


def _diagnose(f: ad.DifferentiableFunction) -> list[ad.Diagnostic]:
    """``ad.diagnose(f)``; a failure of the analysis itself becomes an error finding."""
    try:
        return ad.diagnose(f)
    except Exception as exc:
        code = getattr(f.fn, "__code__", None)
        path = code.co_filename if code else "<unknown>"
        line = code.co_firstlineno if code else 0
        return [ad.Diagnostic(path, line, 1, "error",
                              f"cannot analyse {f.__name__}: {describe_error(exc)}")]


def check_files(files: Sequence[Path], every: bool = False
                ) -> tuple[list[ad.Diagnostic], list[str]]:
    """Findings of every ``@differentiable`` function in ``files`` (of every function,
    with ``every``), and import failures."""
    findings: set[ad.Diagnostic] = set()
    failures: list[str] = []
    for path in files:
        try:
            module = load_file(path, definitions_only=True)
        except CliError as exc:
            failures.append(str(exc))
            continue
        for f in differentiable_functions(module, every):
            findings.update(dataclasses.replace(d, path=display_path(d.path))
                            for d in _diagnose(f))
    ordered = sorted(findings, key=lambda d: (d.path, d.line, d.col, d.severity, d.message))
    return ordered, failures


def cmd_check(args: argparse.Namespace) -> int:
    """Report zero-derivative warnings, refusals and notes, one line each (or JSON)."""
    findings, failures = check_files(python_files(args.paths, args.all), args.all)
    if args.format == "json":
        print(json.dumps([dataclasses.asdict(d) for d in findings], indent=2))
    else:
        for d in findings:
            print(d)
    for failure in failures:
        print_error(failure)
    if failures:
        return 2
    return 1 if any(d.severity != "note" for d in findings) else 0


def cmd_kernels(args: argparse.Namespace) -> int:
    """Print the kernel registry."""
    print("\n".join(ad.kernels.kernel_table()))
    return 0


# -- the parser and main ---------------------------------------------------------------------
def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE.py:FUNC",
                        help="the function: FILE.py:FUNC or package.module:FUNC")
    parser.add_argument("--at", nargs="+", type=argument_value, metavar="V",
                        help="argument values: 3 is an int, 3.0 a float, [1.0, 2.0] an "
                             "array (default: each parameter's default, or 1.0)")


def _version() -> str:
    try:
        return importlib.metadata.version("s2s_ad")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The ``s2s-ad`` argument parser with its subcommands."""
    parser = _Parser(prog=PROG, description="Source-to-source reverse-mode AD for Python.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    show = commands.add_parser("show", help="print the generated source and its Numba status",
                               description="Print generated source, then whether Numba "
                                           "compiles it for the --at values and why not.")
    _add_target(show)
    show.add_argument("--stage", choices=STAGES, default="module",
                      help="which pipeline stage to print (default: the whole module)")
    show.set_defaults(run=cmd_show)

    check = commands.add_parser("check", help="report zero derivatives and refused code",
                                description="Report every zero-derivative warning and "
                                            "refused construct of @differentiable functions "
                                            "(notes: calls one mode cannot go through). Exit "
                                            "1 on a warning or error, else 0; 2 on bad usage.")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    check.add_argument("--format", choices=("text", "json"), default="text",
                       help="one line per finding (text) or a JSON list (json)")
    check.add_argument("--all", action="store_true",
                       help="check every top-level function, not only @differentiable ones")
    check.set_defaults(run=cmd_check)

    grad = commands.add_parser("grad", help="print the value and the gradient",
                               description="Print the value and the gradient of a function "
                                           "at the --at values.")
    _add_target(grad)
    grad.set_defaults(run=cmd_grad)

    kernels = commands.add_parser("kernels", help="list the registered kernels",
                                  description="List every registered kernel, the backends "
                                              "that implement it and its gradient.")
    kernels.set_defaults(run=cmd_kernels)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``s2s-ad``; returns the exit status (errors are one line on stderr)."""
    try:
        args = build_parser().parse_args(argv)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.run(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    except Exception as exc:
        print_error(describe_error(exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
