"""What a transform was built from, and whether it still holds.

Generated code bakes in what the compiler read when it made it: the functions a
global name held (a helper, ``act = np.tanh``), their code and defaults, the
attributes of the user's modules (``mymod.helper``), the registered derivatives
and kernel gradients.  While a transform's stages run, every such read is
recorded (:func:`recording`); the :class:`Dependencies` built from the reads say
whether each name still holds the same object (:meth:`Dependencies.hold`, one
compiled expression of identity checks), so a helper redefined in a notebook, a
global rebound, or a derivative registered later makes the next call transform
again.  Numbers, bools, arrays and structures read by name are not recorded:
they are read at every call and passed to the generated code.

>>> import builtins
>>> def helper(x):
...     return x
>>> space = {"helper": helper}
>>> ns = Namespace({}, space, vars(builtins))
>>> with recording() as reads:
...     _ = ns["helper"]
>>> deps = reads.dependencies()
>>> deps.hold()
True
>>> space["helper"] = lambda x: x
>>> deps.hold()
False
"""

from __future__ import annotations

import contextlib
import numbers
import string
import threading
import types
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from s2s_ad.kinds import is_structure
from s2s_ad.registry import GENERATION

_state = threading.local()
_MISSING = object()


class Reads:
    """One recording frame: the checks that must still hold, keyed so each is kept once."""

    def __init__(self) -> None:
        self.checks: dict[tuple, tuple[str, tuple]] = {}

    def add(self, key: tuple, test: str, objects: tuple) -> None:
        """Record the check ``test``, an expression over ``{0}, {1}, ...`` bound to
        ``objects`` in order."""
        self.checks.setdefault(key, (test, objects))

    def include(self, deps: Dependencies | None) -> None:
        """Add every check of ``deps`` (a linked callee's)."""
        if deps is not None:
            for key, check in deps.checks.items():
                self.checks.setdefault(key, check)

    def dependencies(self) -> Dependencies:
        return Dependencies(dict(self.checks), GENERATION[0])


def _frame() -> Reads | None:
    frames = getattr(_state, "frames", None)
    return frames[-1] if frames else None


@contextlib.contextmanager
def recording() -> Iterator[Reads]:
    """Record the reads made in this block (in this thread) into a fresh frame."""
    frames = getattr(_state, "frames", None)
    if frames is None:
        frames = _state.frames = []
    reads = Reads()
    frames.append(reads)
    try:
        yield reads
    finally:
        frames.pop()


def include(deps: Dependencies | None) -> None:
    """Add ``deps`` to the frame being recorded, if any (a caller depends on what its
    callees were built from)."""
    frame = _frame()
    if frame is not None:
        frame.include(deps)


def _per_call(value: Any) -> bool:
    """Whether a value read by name is passed to generated code at every call
    (so the generated code does not depend on which object it is)."""
    return isinstance(value, np.ndarray | numbers.Number | np.generic) or is_structure(value)


def note_function(fn: Any) -> None:
    """Record that the code made depends on ``fn``'s code and defaults."""
    frame = _frame()
    if frame is None or not isinstance(fn, types.FunctionType):
        return
    # defaults added where there were none matter to no call made so far (each call
    # passed every argument): only those there were are checked (each check costs)
    tests = ["{0}.__code__ is {1}"]
    if fn.__defaults__ is not None:
        tests.append("{0}.__defaults__ is {2}")
    if fn.__kwdefaults__ is not None:
        tests.append("{0}.__kwdefaults__ is {3}")
    frame.add(("function", id(fn)), " and ".join(tests),
              (fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__))


def note_attribute(module: types.ModuleType, attr: str, value: Any) -> None:
    """Record the read of ``module.attr`` (a user module's: libraries are not recorded)."""
    frame = _frame()
    if frame is None:
        return
    frame.add(("attribute", id(module), attr), "{0}[{1}] is {3}",
              (vars(module), attr, _MISSING, value))
    note_function(value)


class Cells(Mapping):
    """A function's closure cells by name, read when looked up (never a snapshot)."""

    def __init__(self, fn: Any):
        self._cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False))

    def cell(self, name: str) -> Any:
        return self._cells[name]

    def __getitem__(self, name: str) -> Any:
        try:
            return self._cells[name].cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._cells)

    def __len__(self) -> int:
        return len(self._cells)


class Namespace(ChainMap):
    """Closure cells, then globals, then builtins, read live; every read made while
    a transform is recorded is noted, with the mappings that lacked the name."""

    def __getitem__(self, name: str) -> Any:
        for i, mapping in enumerate(self.maps):
            try:
                value = mapping[name]
            except KeyError:
                continue
            frame = _frame()
            if frame is not None and not _per_call(value):
                frame.add(("name", id(self), name), *self._check(i, name, value))
                note_function(value)
            return value
        raise KeyError(name)

    def _check(self, found: int, name: str, value: Any) -> tuple[str, tuple]:
        """The test that ``name`` still resolves to ``value`` (found in map ``found``;
        a closure's cells are fixed, the dictionaries before it must still lack it)."""
        where = self.maps[found]
        if isinstance(where, Cells):
            return "{0}.cell_contents is {1}", (where.cell(name), value)
        earlier = [m for m in self.maps[:found] if not isinstance(m, Cells)]
        tests = [f"{{0}} not in {{{k + 4}}}" for k in range(len(earlier))]
        tests.append("{1}[{0}] is {3}")  # a KeyError (now missing) makes hold() false
        return " and ".join(tests), (name, where, _MISSING, value, *earlier)


class Dependencies:
    """The checks a transform was built under and the registry generation then.

    ``hold()`` says whether every name still holds the object it held, every
    function its code and defaults, and no derivative or kernel was registered
    since: one compiled function (the api calls it at every call).
    """

    def __init__(self, checks: dict[tuple, tuple[str, tuple]], generation: int):
        self.checks = checks
        self.generation = generation
        self.hold: Callable[[], bool] = _compile(list(checks.values()), generation)

    def condition(self, prefix: str) -> tuple[str, dict[str, Any]]:
        """``hold()`` as one Python expression over the returned names (each starting
        with ``prefix``), for code that inlines it; evaluating it may raise KeyError or
        ValueError, which means false."""
        return _condition(list(self.checks.values()), self.generation, prefix)


def _condition(checks: list[tuple[str, tuple]], generation: int, prefix: str
               ) -> tuple[str, dict[str, Any]]:
    """The expression of every check, and the objects its names stand for."""
    bound: dict[str, Any] = {f"{prefix}GEN": GENERATION}
    tests = [f"{prefix}GEN[0] == {generation}"]
    for n, (test, objects) in enumerate(checks):
        names = [f"{prefix}c{n}_{k}" for k in range(len(objects))]
        used = {int(field) for _, field, _, _ in _FORMATTER.parse(test) if field}
        bound.update((names[k], objects[k]) for k in sorted(used))
        tests.append(f"({test.format(*names)})")
    return " and ".join(tests), bound


_FORMATTER = string.Formatter()


def _compile(checks: list[tuple[str, tuple]], generation: int) -> Callable[[], bool]:
    """One function evaluating every check: identity tests on objects it holds in its
    closure (an empty cell or a name now missing raise inside it: false)."""
    expression, bound = _condition(checks, generation, "")
    source = (f"def make({', '.join(bound)}):\n    def hold():\n        try:\n"
              f"            return {expression}\n"
              "        except (KeyError, ValueError):\n            return False\n"
              "    return hold\n")
    space: dict[str, Any] = {}
    exec(source, space)  # noqa: S102 - the tests are built above from fixed templates
    return space["make"](*bound.values())
