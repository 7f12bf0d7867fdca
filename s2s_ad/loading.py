"""Importing a user's file for ``s2s-ad check``: as a module of its package, and
running only its definitions.

A file inside a package (directories with ``__init__.py``) is imported under
its dotted name, so relative imports work.  Of its top-level statements only
imports, ``def``s, classes and assignments run (also inside ``if`` and ``try``
blocks); calls, loops, ``with`` blocks and prints at module level are left out,
so checking a script never runs its work.

>>> import ast
>>> tree = definitions_only(ast.parse("import math\\nX = 2\\nprint(X)\\nfor i in []: pass"))
>>> print(ast.unparse(tree))
import math
X = 2
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
         ast.Assign, ast.AnnAssign)


def package_of(path: Path) -> tuple[Path, str]:
    """(the directory to put on ``sys.path``, the file's dotted module name)."""
    path = path.resolve()
    parts = [path.stem]
    directory = path.parent
    while (directory / "__init__.py").exists():
        parts.insert(0, directory.name)
        directory = directory.parent
    return directory, ".".join(parts)


def definitions_only(tree: ast.Module) -> ast.Module:
    """``tree`` without the top-level statements that do work (see the module doc)."""
    tree.body = _kept(tree.body)
    return tree


def _kept(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, _KEPT) or (isinstance(stmt, ast.Expr)
                                       and isinstance(stmt.value, ast.Constant)):
            out.append(stmt)
        elif isinstance(stmt, ast.If) and not _is_main_guard(stmt.test):
            stmt.body, stmt.orelse = _kept(stmt.body) or [ast.Pass()], _kept(stmt.orelse)
            out.append(stmt)
        elif isinstance(stmt, ast.Try):
            stmt.body = _kept(stmt.body) or [ast.Pass()]
            for handler in stmt.handlers:
                handler.body = _kept(handler.body) or [ast.Pass()]
            stmt.orelse, stmt.finalbody = _kept(stmt.orelse), _kept(stmt.finalbody)
            out.append(stmt)
    return out


def _is_main_guard(test: ast.expr) -> bool:
    return "__name__" in ast.unparse(test)


def import_definitions(path: Path, name: str, package: str) -> ModuleType:
    """Import ``path`` as module ``name`` of ``package`` ('' for none), running only
    its definitions.  The caller puts the package's root on ``sys.path``."""
    if package:
        importlib.import_module(package)  # its __init__ runs, as on any import
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    source = path.read_text(encoding="utf-8")
    tree = definitions_only(ast.parse(source, filename=str(path)))
    exec(compile(tree, str(path.resolve()), "exec"), module.__dict__)  # noqa: S102
    return module
