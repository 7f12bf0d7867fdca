"""Errors and warnings of s2s_ad, and source-location formatting.

Every error about user source names ``file:line:col`` (line and column are
1-based, as compilers print them), shows the offending line with a caret under
the construct, and says what to do instead::

    model.py:12:9: error: 'try' statements are not differentiable
        try:
        ^
    move the try/except outside the differentiated function

"""

from __future__ import annotations

import inspect
import linecache
import sys
from dataclasses import dataclass
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Location:
    """A place in user source: file name, 1-based line and 1-based column."""

    filename: str
    lineno: int
    col: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col}"

    def source_line(self) -> str:
        """The text of the line, without its newline ('' when unavailable)."""
        return linecache.getline(self.filename, self.lineno).rstrip("\n")

    def caret_block(self) -> str:
        """The source line and a caret under the column, indented by four spaces."""
        line = self.source_line()
        if not line:
            return ""
        caret = " " * (self.col - 1) + "^"
        return f"    {line}\n    {caret}"


def caller_location() -> Location | None:
    """Where the user's code called into s2s_ad: the innermost frame outside the
    package, at the column of the call (for refusals of a call, not of source)."""
    frame = sys._getframe(1)
    while frame is not None and _PACKAGE in Path(frame.f_code.co_filename).resolve().parents:
        frame = frame.f_back
    if frame is None:
        return None
    positions = inspect.getframeinfo(frame, context=0).positions
    column = positions.col_offset if positions is not None else None
    return Location(frame.f_code.co_filename, frame.f_lineno,
                    column + 1 if column is not None else 1)


class NonDifferentiableError(Exception):
    """A construct or call that s2s_ad cannot differentiate.

    Attributes: ``location`` (a :class:`Location` or ``None``), ``problem``
    (what is wrong) and ``hint`` (what to do instead).

    >>> import s2s_ad as ad
    >>> def f(x):
    ...     try:
    ...         return x
    ...     finally:
    ...         pass
    >>> ad.gradient(f)(1.0)
    Traceback (most recent call last):
    s2s_ad.errors.NonDifferentiableError: <doctest ...>:2:5: error: 'try' statements ...
    """

    def __init__(self, problem: str, location: Location | None = None, hint: str = ""):
        self.problem = problem
        self.location = location
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = f"{self.location}: " if self.location else ""
        parts = [f"{where}error: {self.problem}"]
        if self.location is not None:
            block = self.location.caret_block()
            if block:
                parts.append(block)
        if self.hint:
            parts.append(self.hint)
        return "\n".join(parts)

    @property
    def one_line(self) -> str:
        """The first line of the message (``file:line:col: error: ...``)."""
        return str(self).splitlines()[0]


class ZeroDerivativeWarning(UserWarning):
    """A differentiable parameter whose derivative is always zero.

    Issued with :func:`warnings.warn_explicit` at the user's file and line, so
    ``-W error`` and warning filters apply.
    """


class JitError(RuntimeError):
    """Numba could not compile generated code and ``jit=True`` was asked for."""


class ParallelLoopWarning(RuntimeWarning):
    """A parallel loop did not finish in Numba's threads (they lose an exception
    raised in them): the call ran again on the Python path, which raises the error
    at the user's line, or gives the answer if only Numba's code failed."""


class IntegerArgumentWarning(UserWarning):
    """An int argument passed where a float may have been meant: ints are never
    differentiated (pass 1.0, or name the parameter in ``wrt``)."""


class ArgumentError(TypeError):
    """An argument value that cannot be differentiated (names the argument)."""
