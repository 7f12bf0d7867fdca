"""Looking inside: the generated source of a function, which path runs it and why,
and its zero-derivative findings without running it.

>>> import s2s_ad as ad
>>> def f(x):
...     return x * x
>>> "def f_pullback" in ad.source(f, 3.0)
True
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .api import DifferentiableFunction, as_differentiable
from .boundary import lowered_args, passed_globals
from .compiler.pipeline import STAGES as STAGES  # the stage names `source` takes
from .compiler.pipeline import Transform, stage_source
from .compiler.tangent_custom import one_mode_calls
from .compiler.transforms import parsed_function, transform
from .errors import ArgumentError, JitError, NonDifferentiableError
from .kinds import kind_of_value
from .tape_memory import TapeMemory, argument_bytes, ones_like, read_bytes, residual_bytes


@dataclass
class Explanation:
    """Which path runs a function's generated code, and why.

    ``path`` is ``"numba"`` or ``"python"``; ``reason`` says why Numba was not
    used, or which argument types it compiled for; ``entries`` has the same
    per generated function; ``memory`` (when asked for) the bytes its forward
    keeps for the pullback.
    """

    function: str
    path: str
    reason: str
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)
    memory: TapeMemory | None = None

    def __str__(self) -> str:
        if self.path == "numba":
            lines = [f"{self.function}: runs with Numba ({self.reason})"]
        else:
            lines = [f"{self.function}: runs with Python because {self.reason}"]
        slower = [name for name, (path, _) in self.entries.items() if path == "python"]
        if self.path == "numba" and slower:
            lines.append(f"  but {', '.join(slower)} ran with Python (why below)")
        for name, (path, reason) in self.entries.items():
            lines.append(f"  {name}: {path}" + (f" ({reason})" if reason else ""))
        if self.memory is not None:
            lines.append(f"  {self.memory}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Diagnostic:
    """A located finding about a function: ``severity`` is "warning", "error" or "note"
    (a call one mode cannot go through: ``s2s-ad check`` reports it without failing)."""

    path: str
    line: int
    col: int
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"


_EXAMPLES = {float: 1.0, int: 1, bool: False, np.float64: np.float64(1.0),
             np.float32: np.float32(1.0), np.ndarray: np.ones(3)}


def _example_args(df: DifferentiableFunction) -> tuple:
    """Arguments standing for any call: by annotation (``float``, ``int``, ``bool``,
    ``np.ndarray``: a 1-d float array), else the default value, else 1.0."""
    return _examples(df)[0]


def _examples(df: DifferentiableFunction) -> tuple[tuple, list[str]]:
    """:func:`_example_args`, and the parameters taken to be floats for want of an
    annotation or a default (a guess: they may be arrays)."""
    parsed = parsed_function(df.fn)
    try:
        hints = typing.get_type_hints(df.fn)
    except Exception:  # an annotation that does not evaluate: use the rest
        hints = {}
    out, guessed = [], []
    for p in parsed.params:
        hint = typing.get_origin(hints.get(p)) or hints.get(p)
        if hint in _EXAMPLES:
            out.append(_EXAMPLES[hint])
        elif parsed.defaults.get(p) is not None:
            out.append(parsed.defaults[p])
        else:
            out.append(1.0)
            guessed.append(p)
    return tuple(out), guessed


def _guessed_wrong(df: DifferentiableFunction, guessed: list[str], problem: str
                   ) -> ArgumentError:
    """The error of ``explain(f)`` or ``source(f)`` without arguments for a function
    that has not run, whose parameters ``guessed`` were taken to be floats."""
    name = getattr(df, "__name__", "f")
    return ArgumentError(
        f"{name} has not run yet and its parameters {', '.join(map(repr, guessed))} have "
        f"no annotation or default, so they were taken to be floats, for which: {problem}; "
        f"pass example arguments (ad.explain({name}, ...)) or annotate the parameters")


def diagnose(f: Callable, *args: Any, **kwargs: Any) -> list[Diagnostic]:
    """Zero-derivative warnings and refusals of ``f``, without running it, and notes on
    the calls one mode cannot go through (a custom derivative with only a pullback: no
    forward mode; with only a differential: no reverse mode).

    Without example ``args`` every parameter is taken to be a float (or its
    default value); with them, any call ``f`` accepts (keywords, defaults).
    Returns an empty list for a clean function.

    >>> diagnose(lambda x, y: x * 2.0)
    [Diagnostic(path='...', line=1, col=..., severity='warning', message="parameter 'y' ...")]
    """
    df = f if isinstance(f, DifferentiableFunction) else None
    try:
        df = df or DifferentiableFunction(f)
        if df.error is not None:
            raise df.error
        example, defaulted = df.bind(args, kwargs) if args or kwargs \
            else (_example_args(df), frozenset())
        t = transform(df.fn, [kind_of_value(a) for a in example],
                      df.wrt_positions(example, defaulted))
    except NonDifferentiableError as exc:
        loc = exc.location
        if loc is None:
            code = getattr(getattr(f, "fn", f), "__code__", None)
            path = code.co_filename if code else "<unknown>"
            return [Diagnostic(path, code.co_firstlineno if code else 0, 1, "error",
                               exc.problem + (f"; {exc.hint}" if exc.hint else ""))]
        return [Diagnostic(loc.filename, loc.lineno, loc.col, "error",
                           exc.problem + (f"; {exc.hint}" if exc.hint else ""))]
    return [Diagnostic(t.parsed.filename, z.lineno, z.col, "warning", z.message)
            for z in t.zero_derivatives] + [
        Diagnostic(loc.filename, loc.lineno, loc.col, "note", message)
        for loc, message in one_mode_calls(t)]


def _transform_for(f: Callable, args: tuple, kwargs: dict
                   ) -> tuple[DifferentiableFunction, Transform, tuple]:
    """(the function, its transform, the call's arguments one per parameter); any call
    ``f`` accepts (keywords, defaults) is accepted."""
    df = as_differentiable(f)
    if args or kwargs:
        if df.error is not None:
            raise df.error
        args, defaulted = df.bind(args, kwargs)
        return df, df.prepare(args, defaulted), args
    if df.last is None:  # not run yet: arguments typed from annotations, floats otherwise
        example, guessed = _examples(df)
        try:
            return df, df.prepare(example), ()
        except NonDifferentiableError as exc:
            if not guessed:
                raise
            raise _guessed_wrong(df, guessed, str(exc)) from None
    return df, df.last, ()


def source(f: Callable, *args: Any, stage: str = "module", mode: str = "reverse",
           **kwargs: Any) -> str:
    """The generated Python source of ``f`` (for example arguments ``args``).

    ``stage`` picks what one pipeline stage made, one of ``STAGES`` (in order; the
    table ``s2s_ad.compiler.pipeline.PIPELINE`` says what each makes): ``"anf"`` is
    the normalized function, ``"structures"`` the same with structures lowered to
    tuples; the default, ``"module"``, is the whole generated module.
    ``mode="forward"`` prints the forward-mode (tangent) function instead,
    ``mode="directions"`` its form carrying several tangent directions per run.
    """
    if mode not in ("reverse", "forward", "directions"):
        raise ValueError(f"mode must be 'reverse', 'forward' or 'directions', not {mode!r}")
    _, t, _ = _transform_for(f, args, kwargs)
    if mode == "reverse" and t.reverse_refusal is not None:
        raise t.reverse_refusal
    return stage_source(t, {"forward": "tangent", "directions": "directions"}.get(mode, stage))


def explain(f: Callable, *args: Any, memory: bool = False, **kwargs: Any) -> Explanation:
    """Which path (Numba or Python) runs ``f``'s gradient, and why.

    With example ``args`` it compiles (without running) the fused
    value-and-gradient function for them (the forward function when the
    result is not a scalar); without, it reports the last run.

    ``memory=True`` (with ``args``) also runs the forward once, on copies of
    the array arguments, and reports in ``memory`` the bytes of what it keeps
    for the pullback, and how many of those bytes the pullback reads (measured
    by running the generated Python pullback with reads recorded):

    >>> def f(x, n):
    ...     for _ in range(n):
    ...         x = x * x
    ...     return x
    >>> print(explain(f, 0.5, 100, memory=True).memory)  # 100 floats, 2 counters
    tape: 816 bytes kept for the pullback; the pullback reads 816 bytes of them (1.00x)
    """
    df, t, args = _transform_for(f, args, kwargs)
    scalar = t.result_kind in ("float", "int", "bool")
    hot = (t.generated.fused if scalar else t.generated.forward).name
    if args or not df.status:
        example, guessed = (args, []) if args else _examples(df)
        try:
            df.callable_for(t, hot, lowered_args(t, example)
                            + passed_globals(t, t.global_values()))
        except JitError as exc:
            if not guessed:
                raise
            raise _guessed_wrong(df, guessed, str(exc)) from None
        if guessed and df.jit is not False and not t.module.python_only \
                and df.status[hot][0] == "python":
            df.status.pop(hot)
            raise _guessed_wrong(df, guessed, "Numba cannot compile it")
    entries = dict(df.status)
    path, reason = entries.get(hot) or next(iter(entries.values()), ("python", "not run"))
    kept = _tape_memory(df, t, args) if memory and args else None
    return Explanation(function=t.name, path=path, reason=reason, entries=entries,
                       memory=kept)


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _tape_memory(df: DifferentiableFunction, t: Transform, args: tuple) -> TapeMemory:
    """Bytes the forward keeps for the pullback at ``args`` (on the path that runs), and
    bytes of them that the generated Python pullback reads."""
    name = t.generated.forward.name
    hidden = passed_globals(t, t.global_values())
    own = _copies(lowered_args(t, args))
    forward = df.callable_for(t, name, own + hidden)
    _, residuals = forward(*own, *hidden)
    kept = residual_bytes(residuals, own)
    by_reference = argument_bytes(residuals, own)
    own = _copies(lowered_args(t, args))
    value, residuals = t.module.python(name)(*own, *hidden)
    try:
        read = read_bytes(t.module.python(t.generated.pullback.name), residuals,
                          ones_like(value), own)
    except Exception as exc:  # the recorder is not an array the runtime accepts
        return TapeMemory(kept, by_reference, None, f"{type(exc).__name__}: {exc}")
    return TapeMemory(kept, by_reference, read)
