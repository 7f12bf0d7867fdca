"""Shrink a failing program: delete and simplify until nothing smaller fails the same way.

Greedy reduction on the module's AST at the failing arguments: delete
statements, replace ``if``/``for``/``while`` by a branch or body, replace
expressions by a sub-expression or a constant, drop unused helpers, globals
and parameters. A candidate is kept when the oracle gives the same failure
signature (status, check, and for crashes the exception and message) and,
when renaming the original fixed it, renaming still fixes the candidate (so
the shrinker does not drift to a different bug).
"""

from __future__ import annotations

import ast
import copy
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from oracle import Outcome, check_source_at, rename_maps
from programs import Program


def _stmt_slots(tree: ast.AST) -> list[tuple[int, str, int]]:
    slots = []
    for k, node in enumerate(ast.walk(tree)):
        for fieldname in ("body", "orelse"):
            stmts = getattr(node, fieldname, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                slots += [(k, fieldname, i) for i in range(len(stmts))]
    return slots


def _node_at(tree: ast.AST, k: int) -> ast.AST:
    for j, node in enumerate(ast.walk(tree)):
        if j == k:
            return node
    raise IndexError(k)


def _statement_candidates(tree: ast.Module) -> Iterator[ast.Module]:
    slots = _stmt_slots(tree)
    # later statements first: deleting them leaves earlier definitions intact
    for k, fieldname, i in reversed(slots):
        new = copy.deepcopy(tree)
        stmts = getattr(_node_at(new, k), fieldname)
        target = stmts[i]
        if isinstance(target, ast.Import | ast.ImportFrom):
            continue
        del stmts[i]
        if not stmts and fieldname == "body":
            stmts.append(ast.Pass())
        yield new
        if isinstance(target, ast.If | ast.For | ast.While):
            for part in ("body", "orelse"):
                inner = getattr(target, part)
                if not inner:
                    continue
                new = copy.deepcopy(tree)
                stmts = getattr(_node_at(new, k), fieldname)
                stmts[i:i + 1] = copy.deepcopy(inner)
                yield new
        if isinstance(target, ast.If) and target.orelse:
            new = copy.deepcopy(tree)
            getattr(_node_at(new, k), fieldname)[i].orelse = []
            yield new


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    out = {}
    for node in ast.walk(tree):
        for fieldname, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                out[id(value)] = (node, fieldname, None)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        out[id(v)] = (node, fieldname, i)
    return out


def _replaceable(node: ast.AST, parent: ast.AST, fieldname: str) -> bool:
    if not isinstance(node, ast.expr) or isinstance(getattr(node, "ctx", None), ast.Store):
        return False
    if isinstance(parent, ast.Call) and fieldname == "func":
        return False
    if isinstance(parent, ast.Attribute):
        return False
    return True


def _expression_candidates(tree: ast.Module) -> Iterator[ast.Module]:
    count = sum(1 for _ in ast.walk(tree))
    for k in range(count):
        node = _node_at(tree, k)
        parents = _parents(tree)
        if id(node) not in parents:
            continue
        parent, fieldname, index = parents[id(node)]
        if not _replaceable(node, parent, fieldname):
            continue
        replacements: list[ast.expr] = []
        if isinstance(node, ast.BinOp):
            replacements += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            replacements.append(node.operand)
        elif isinstance(node, ast.IfExp):
            replacements += [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            replacements += node.values
        elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute)
                                                 and node.func.attr == "array"):
            # (``np.array([...])`` stays an array, not a list)
            replacements += [a for a in node.args if not isinstance(a, ast.Starred)]
        elif isinstance(node, ast.Tuple) and isinstance(getattr(node, "ctx", None), ast.Load):
            pass
        if not isinstance(node, ast.Constant | ast.Name) and not (
                isinstance(parent, ast.Subscript) and fieldname == "slice"):
            replacements += [ast.Constant(1.0), ast.Constant(0.5)]
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and \
                node.value not in (0.0, 1.0, 2.0, 0.5):
            replacements += [ast.Constant(1.0), ast.Constant(2.0), ast.Constant(0.5)]
        for rep in replacements:
            new = copy.deepcopy(tree)
            target = _node_at(new, k)
            new_parents = _parents(new)
            p, f, i = new_parents[id(target)]
            rep = copy.deepcopy(rep)
            if i is None:
                setattr(p, f, rep)
            else:
                getattr(p, f)[i] = rep
            yield new


def _drop_unused_params(source: str, fname: str, args: tuple) -> tuple[str, tuple]:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == fname:
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            keep = [i for i, a in enumerate(node.args.args) if a.arg in used]
            if len(keep) == len(node.args.args) or not keep:
                return source, args
            node.args.args = [node.args.args[i] for i in keep]
            return ast.unparse(tree) + "\n", tuple(args[i] for i in keep)
    return source, args


def shrink_source(source: str, fname: str, args: tuple, array_result: bool, directory: Path,
                  outcome: Outcome, jit: bool = False, seed: int = 0, budget: int = 1200,
                  seconds: float = 150.0, updates: list | None = None,
                  twin: str | None = None) -> tuple[str, tuple, Outcome]:
    """The smallest program found (source, args, its outcome) that fails like ``outcome``
    (``updates`` and ``twin`` as in :class:`Program`: kept as they are)."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    started = time.time()
    calls = 0
    signature = outcome.signature
    extra = dict(updates=updates, twin=twin)
    renamed_ok = _renamed_status(source, fname, args, array_result, directory, jit,
                                 seed, **extra) == "OK"

    def fails_alike(src: str, a: tuple) -> Outcome | None:
        nonlocal calls
        calls += 1
        try:
            ast.parse(src)
            o = check_source_at(src, fname, a, array_result, directory, jit=jit, seed=seed,
                                **extra)
        except Exception:
            return None
        if o.signature != signature:
            return None
        if renamed_ok and _renamed_status(src, fname, a, array_result, directory, jit,
                                          seed, **extra) != "OK":
            return None
        return o

    best_tree = ast.parse(source)
    best_args = args
    best_outcome = outcome
    for generator in (_statement_candidates, _expression_candidates, _statement_candidates,
                      _expression_candidates):
        progress = True
        while progress and calls < budget and time.time() - started < seconds:
            progress = False
            for candidate in generator(best_tree):
                if calls >= budget or time.time() - started > seconds:
                    break
                text = ast.unparse(candidate) + "\n"
                if len(text) >= len(ast.unparse(best_tree)) + 1:
                    continue
                o = fails_alike(text, best_args)
                if o is not None:
                    best_tree, best_outcome, progress = ast.parse(text), o, True
                    break
    text = ast.unparse(best_tree) + "\n"
    smaller, smaller_args = _drop_unused_params(text, fname, best_args)
    if smaller != text:
        o = fails_alike(smaller, smaller_args)
        if o is not None:
            text, best_args, best_outcome = smaller, smaller_args, o
    return text, best_args, best_outcome


def _renamed_status(source: str, fname: str, args: tuple, array_result: bool,
                    directory: Path, jit: bool, seed: int, updates: list | None = None,
                    twin: str | None = None) -> str:
    try:
        renamed, names = rename_maps(source)
        updates = [[(names.get(g, g), how, value) for g, how, value in step]
                   for step in updates or []]
        return check_source_at(renamed, names[fname], args, array_result, directory,
                               jit=jit, seed=seed, updates=updates,
                               twin=names[twin] if twin else None).status
    except Exception:
        return "ERROR"


def shrink_program(program: Program, outcome: Outcome, directory: Path, jit: bool = False,
                   seed: int = 0) -> str:
    """A shrunk reproducer as text (source, the call, and its outcome)."""
    from oracle import describe

    # the global updates and the second closure only matter to failures after them
    updates = program.updates if "@update" in outcome.check else []
    twin = program.twin if "@twin" in outcome.check or "first-again" in outcome.check or \
        "@update" in outcome.check else None
    text, args, o = shrink_source(program.source, program.fname, outcome.args,
                                  program.array_result, directory, outcome, jit=jit, seed=seed,
                                  updates=updates, twin=twin)
    call = ", ".join(program.describe_point((a,)) for a in args)
    extra = ""
    if twin:
        extra += f"# second closure: {twin}\n"
    if updates:
        shown = Program(source="", fname="", params=[], array_param=None, array_result=False,
                        points=[], updates=updates)
        extra += f"# globals changed between calls: {shown.describe_updates()}\n"
    return f"{text}\n# {program.fname}({call})\n{extra}" + "\n".join(
        f"# {line}" for line in describe(o).splitlines())
