"""The parse stage: a Python function -> a gast ``FunctionDef`` with names resolved.

Guarantees about the result: the tree is the user's own ``def`` (a lambda is
turned into ``def <name>(...): return <body>``) with the positions of the
user's file; every construct in it is one the later stages understand, or a
:class:`NonDifferentiableError` was raised naming file, line and column; the
``namespace`` resolves closure cells, globals and builtins to their objects.

>>> import s2s_ad as ad
>>> scale = lambda x, y: x * y + 1.0
>>> print(ad.source(scale, 1.0, 2.0, stage="parse"))
def lambda_(x, y):
    return x * y + 1.0
"""

from __future__ import annotations

import builtins
import copy
import inspect
import linecache
from typing import Any

import gast

from s2s_ad.compiler.dependencies import Cells, Namespace
from s2s_ad.compiler.ir import ParsedFunction
from s2s_ad.compiler.lists import freeze_lists, index_arrays, refused_list_change
from s2s_ad.compiler.syntax.builders import function_node, return_stmt
from s2s_ad.errors import Location, NonDifferentiableError, caller_location
from s2s_ad.rules import lookup

_REFUSED: dict[type, tuple[str, str]] = {
    gast.Try: ("'try' statements are not differentiable",
               "move the try/except outside the differentiated function"),
    gast.With: ("'with' statements are not differentiable",
                "enter the context manager outside the differentiated function"),
    gast.AsyncWith: ("'async with' is not differentiable", "use a plain function"),
    gast.AsyncFor: ("'async for' is not differentiable", "use a plain for loop"),
    gast.AsyncFunctionDef: ("async functions are not differentiable", "use a plain def"),
    gast.Await: ("'await' is not differentiable", "use a plain function"),
    gast.Yield: ("generators ('yield') are not differentiable",
                 "return a value or a tuple instead of yielding"),
    gast.YieldFrom: ("generators ('yield from') are not differentiable",
                     "return a value or a tuple instead of yielding"),
    gast.Global: ("'global' declarations are not supported",
                  "pass the value in as a parameter and return the new value"),
    gast.Nonlocal: ("'nonlocal' declarations are not supported",
                    "pass the value in as a parameter and return the new value"),
    gast.ClassDef: ("class definitions inside a differentiated function are not supported",
                    "define the class at module level"),
    gast.Delete: ("'del' statements are not supported",
                  "let the name go out of scope instead"),
    gast.Match: ("'match' statements are not supported", "use if/elif/else"),
    gast.Starred: ("starred arguments and targets ('*x') are not supported",
                   "pass and unpack the values one by one"),
    gast.Import: ("imports inside a differentiated function are not supported",
                  "import at module level"),
    gast.ImportFrom: ("imports inside a differentiated function are not supported",
                      "import at module level"),
    gast.SetComp: ("set comprehensions are not differentiable", "write a for loop"),
    gast.DictComp: ("dict comprehensions are not differentiable", "write a for loop"),
    gast.NamedExpr: ("assignment expressions (':=') are not supported",
                     "assign on a separate line"),
    gast.Set: ("set values are not differentiable", "use a tuple"),
}
if hasattr(gast, "TryStar"):
    _REFUSED[gast.TryStar] = _REFUSED[gast.Try]

_file_trees: dict[tuple[str, int], gast.Module] = {}

#: The module name prefix of generated code (see ``compiler/jit.py``).
GENERATED = "s2s_ad_generated."


def _file_tree(filename: str) -> tuple[gast.Module, list[str]] | None:
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None
    text = "".join(lines)
    key = (filename, hash(text))
    if key not in _file_trees:
        _file_trees[key] = gast.parse(text)
    return _file_trees[key], lines


def _namespace(fn: Any) -> Namespace:
    """Closure cells, then the globals, then builtins: all read live (and recorded
    while a transform is made, see :mod:`s2s_ad.compiler.dependencies`)."""
    return Namespace(Cells(fn), fn.__globals__, vars(builtins))


def _find_def(tree: gast.Module, code: Any) -> gast.FunctionDef | None:
    for node in gast.walk(tree):
        if isinstance(node, gast.FunctionDef | gast.AsyncFunctionDef) and \
                node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno or node.lineno == code.co_firstlineno:
                return node
    return None


def _find_lambda(tree: gast.Module, code: Any, filename: str) -> gast.Lambda | None:
    """The lambda of ``code``: on its line, with its parameters, the innermost one whose
    body spans the code's columns (a lambda inside another lambda's body also lies
    inside the outer one's span)."""
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    candidates = [n for n in gast.walk(tree)
                  if isinstance(n, gast.Lambda) and n.lineno == code.co_firstlineno
                  and _lambda_params(n) == names]
    columns = [(line, col) for line, _, col, end in code.co_positions()
               if line is not None and col is not None and end is not None and end > col]
    spanning = [node for node in candidates if columns and all(
        _span(node.body)[0] <= at < _span(node.body)[1] for at in columns)]
    if len(candidates) == 1 and not spanning:
        return candidates[0]
    if spanning:
        return max(spanning, key=lambda node: _span(node.body)[0])  # nested: innermost
    if len(candidates) > 1:
        raise NonDifferentiableError(
            f"{len(candidates)} lambdas with parameters ({', '.join(names)}) on this line: "
            "cannot tell which one is differentiated",
            Location(filename, code.co_firstlineno, candidates[0].col_offset + 1),
            "give the function a name with def, or put the lambda on its own line")
    return None


def _lambda_params(node: gast.Lambda) -> list[str]:
    args = node.args
    return [a.id for a in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)]


def _span(node: gast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """(start, end) of ``node`` as (line, column) pairs."""
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


def lambda_to_def(node: gast.Lambda, name: str) -> gast.FunctionDef:
    """``lambda a: e`` as ``def name(a): return e`` with the lambda's position."""
    ret = return_stmt(node.body)
    gast.copy_location(ret, node.body)
    fdef = function_node(name, node.args, [ret])
    return gast.copy_location(fdef, node)


def _source_unavailable(fn: Any) -> NonDifferentiableError:
    name = getattr(fn, "__qualname__", repr(fn))
    if inspect.ismethod(fn):
        code = fn.__func__.__code__
        line = linecache.getline(code.co_filename, code.co_firstlineno)
        return NonDifferentiableError(
            f"'{name}' is a bound method: differentiating with respect to 'self' comes "
            "with differentiable structures, which are not supported yet",
            Location(code.co_filename, code.co_firstlineno, len(line) - len(line.lstrip()) + 1),
            f"differentiate a module-level function that takes the fields it needs as "
            f"arguments (def {fn.__name__}(w, x): ...)")
    if callable(fn) and not inspect.isfunction(fn) or (
            inspect.isfunction(fn) and getattr(fn, "__module__", "") in ("math", "numpy")):
        short = getattr(fn, "__name__", name)
        module = getattr(fn, "__module__", None) or "a library"
        return NonDifferentiableError(
            f"'{short}' is a function of {module} (compiled, with no Python source): "
            "gradient and friends take a Python function", None,
            f"wrap it in one: ad.gradient(lambda x: {module}.{short}(x))"
            if module in ("math", "numpy") and lookup(fn, 1) is not None else
            f"wrap it in a Python function, or give it a derivative with "
            f"@ad.derivative(of={short})")
    return NonDifferentiableError(
        f"the source of '{name}' is not available, so it cannot be differentiated",
        None,
        f"define '{name}' in a file, or give it a derivative with "
        f"@ad.derivative(of={getattr(fn, '__name__', 'f')}), or wrap the call in "
        "ad.without_derivative(...)")


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn`` (a def or a lambda) into a checked :class:`ParsedFunction`.

    >>> def square(x):
    ...     return x * x
    >>> parse_function(square).params
    ['x']
    """
    made = getattr(fn, "__s2s_ad_derivative__", None)
    if made is not None:  # a derivative s2s_ad made: (what it is, what to use instead)
        raise NonDifferentiableError(made[0], caller_location(), made[1])
    code = getattr(fn, "__code__", None)
    if code is None or not inspect.isfunction(fn):
        raise _source_unavailable(fn)
    found = _file_tree(code.co_filename)
    if found is None:
        raise _source_unavailable(fn)
    tree, _ = found
    if code.co_name == "<lambda>":
        lam = _find_lambda(tree, code, code.co_filename)
        node = lambda_to_def(lam, "lambda_") if lam is not None else None
    else:
        node = _find_def(tree, code)
    if node is None:
        raise _source_unavailable(fn)
    node = copy.deepcopy(node)  # parsing rewrites it (lists); the file's tree is shared
    parsed = ParsedFunction(name=_generated_name(fn, node), node=node, filename=code.co_filename,
                            namespace=_namespace(fn), key=code,
                            generated=(getattr(fn, "__module__", None) or "").startswith(GENERATED))
    finish_parse(parsed, defaults=fn.__defaults__ or (), kwdefaults=fn.__kwdefaults__)
    return parsed


def _generated_name(fn: Any, node: gast.FunctionDef) -> str:
    """The stem of the generated functions' names: the def's name, ``lambda_``, or for
    a method its class's and its own (``Dense.__call__`` -> ``Dense_call``)."""
    if fn.__code__.co_name == "<lambda>":
        return "lambda_"
    owner = fn.__qualname__.split(".")[-2:-1]
    if owner and owner[0] != "<locals>":
        return f"{owner[0]}_{node.name.strip('_')}"
    return node.name


def finish_parse(parsed: ParsedFunction, defaults: tuple = (),
                 kwdefaults: dict | None = None) -> None:
    """Check the tree and fill in ``params`` and ``defaults`` of ``parsed``.

    Positional-only and keyword-only parameters become plain parameters, in
    the order ``inspect.signature`` lists them (callers bind arguments by it)."""
    args = parsed.node.args
    loc = parsed.location
    if args.vararg or args.kwarg:
        bad = args.vararg or args.kwarg
        raise NonDifferentiableError(
            "variadic parameters (*args, **kwargs) are not supported",
            loc(bad), "declare the parameters one by one")
    ordinary = list(args.posonlyargs) + list(args.args)
    values = list(defaults) or [None] * len(args.defaults)
    parsed.params = [a.id for a in ordinary + list(args.kwonlyargs)]
    for name, value in zip([a.id for a in ordinary][len(ordinary) - len(values):], values,
                           strict=True):
        parsed.defaults[name] = value
    for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            parsed.defaults[a.id] = (kwdefaults or {}).get(a.id)
    args.args = ordinary + list(args.kwonlyargs)
    args.posonlyargs, args.kwonlyargs, args.kw_defaults = [], [], []
    args.defaults = []
    index_arrays(parsed.node, loc)
    freeze_lists(parsed.node)
    check_supported(parsed.node, parsed.filename)
    refused = refused_list_change(parsed.node)
    if refused is not None:
        node, problem, hint = refused
        raise NonDifferentiableError(problem, loc(node), hint)


def check_supported(fdef: gast.FunctionDef, filename: str) -> None:
    """Raise :class:`NonDifferentiableError` on the first refused construct."""
    if isinstance(fdef, gast.AsyncFunctionDef):
        _check_node(fdef, filename)
    for stmt in fdef.body:
        for node in gast.walk(stmt):
            _check_node(node, filename)


def _check_node(node: gast.AST, filename: str) -> None:
    def where(n: gast.AST) -> Location:
        return Location(filename, n.lineno, n.col_offset + 1)

    refused = _REFUSED.get(type(node))
    if refused is not None:
        raise NonDifferentiableError(refused[0], where(node), refused[1])
    if isinstance(node, gast.For | gast.While) and node.orelse:
        kind = "for" if isinstance(node, gast.For) else "while"
        raise NonDifferentiableError(
            f"'{kind} ... else' is not supported", where(node),
            "set a flag before 'break' and test it after the loop")
    if isinstance(node, gast.FunctionDef) and node.decorator_list:
        raise NonDifferentiableError(
            "decorated functions inside a differentiated function are not supported",
            where(node), "define the decorated function at module level")
    if isinstance(node, gast.Call):
        for kw in node.keywords:
            if kw.arg is None:
                raise NonDifferentiableError(
                    "'**' arguments are not supported",
                    where(kw if hasattr(kw, "lineno") else kw.value),
                    "pass the arguments by name one by one")
