"""The jit stage: generated source -> callables, Numba where it types, Python otherwise.

The source is written to ``$S2S_AD_CACHE_DIR`` (default ``~/.cache/s2s_ad``)
under a name holding its content hash, so tracebacks and pdb show it and
Numba's on-disk cache (``cache=True``) lets a second process skip the compile.
The same file is loaded twice: once with Python callees for the Python path,
once with Numba dispatchers for the compiled path.

>>> import s2s_ad as ad
>>> def f(x):
...     return x * x
>>> print(ad.explain(f, 3.0))
f: runs with Numba (Numba compiled it for (float64))
  f_value_and_grad: numba (Numba compiled it for (float64))
"""

from __future__ import annotations

import os
import pickle
import re
import sys
import threading
import types
import warnings
import zlib
from pathlib import Path
from typing import Any

import numba
from numba.core import errors as numba_errors
from numba.typed import List as NumbaList

from s2s_ad.compiler.memory import keep_freed_memory
from s2s_ad.compiler.weak_floats import WEAK, weakened
from s2s_ad.errors import JitError
from s2s_ad.runtime.python_math import checked_math
from s2s_ad.runtime.weak_floats import weak

# what Numba raises when it cannot compile (an ImportError when SciPy, which its
# linear algebra needs, is missing)
NUMBA_ERRORS = (numba_errors.NumbaError, NotImplementedError, ValueError, TypeError,
                ImportError)


def cache_dir() -> Path:
    """Where generated modules and Numba's cache live."""
    root = os.environ.get("S2S_AD_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "s2s_ad")
    path = Path(root) / "generated"
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_module(stem: str, source: str, digest: str) -> Path:
    """Write ``source`` once under a content-addressed name; return its path."""
    path = cache_dir() / f"{stem}_{digest}.py"
    if not path.exists() or _read(path) != source:  # new, or truncated or garbled
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: readers see the old file or the new one
    return path


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


# what loading a damaged file of Numba's disk cache raises
CACHE_ERRORS = (EOFError, pickle.UnpicklingError, OSError, zlib.error, AttributeError,
                IndexError, KeyError, ImportError)


def signature_text(args: tuple) -> str:
    """The Numba types of ``args``, as Numba prints them."""
    return ", ".join(str(numba.typeof(a)) for a in args)


RUNTIME_REFUSAL = "s2s_ad: "  # how runtime helpers' TypingErrors begin (short_reason)


def short_reason(exc: BaseException) -> str:
    """The informative lines of a Numba error, on one line."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if not ln.startswith(("Failed in nopython", "During:", "File ",
                                                     "^", "- Resolution failure"))]
    reason = " ".join(keep[:3]) or type(exc).__name__
    ours = [ln[ln.index(RUNTIME_REFUSAL):] for ln in lines if RUNTIME_REFUSAL in ln]
    if ours:  # a runtime helper's own refusal, nested in Numba's overload report
        reason = ours[0]
    reason = re.sub(r"\x1b\[[0-9;]*m", "", reason)
    return f"{type(exc).__name__}: {reason}"[:400]


def _compile(dispatcher: Any, sig: tuple) -> None:
    with warnings.catch_warnings():  # ctypes pointers cannot be cached: fine
        warnings.filterwarnings("ignore", "Cannot cache compiled function",
                                numba_errors.NumbaWarning)
        dispatcher.compile(sig)


class GeneratedModule:
    """A generated module file and its two loaded forms.

    ``bind_python`` / ``bind_numba`` give the objects for the names bound at
    load time (callees): functions of other generated modules.
    """

    def __init__(self, path: Path, source: str, functions: list[str],
                 bind_python: dict[str, Any], bind_numba: Any, python_only: str = ""):
        self.path = path
        self.python_only = python_only
        self.source = source
        self.functions = functions
        self._bind_python = bind_python
        self._bind_numba = bind_numba
        self._python: dict[str, Any] | None = None
        self._numba: dict[str, Any] | None = None
        self.failures: dict[tuple[str, tuple], str] = {}

    def _load(self, extra: dict[str, Any], register: bool = False) -> dict[str, Any]:
        """Execute the module; ``register`` puts it in ``sys.modules`` and runs the
        source as Numba compiles it (number literals weak, see ``weak_floats``).

        Numba's disk cache re-imports a compiled function's module by name, so
        the module whose functions Numba compiles must be importable.
        """
        name = f"s2s_ad_generated.{self.path.stem}"
        module = types.ModuleType(name)
        module.__file__ = str(self.path)
        module.__dict__.update(extra)
        if register:
            sys.modules[name] = module
        code = weakened(self.source, str(self.path)) if register else \
            compile(self.source, str(self.path), "exec")
        exec(code, module.__dict__)
        return module.__dict__

    def python(self, name: str) -> Any:
        """The plain Python function ``name`` of the module."""
        if self._python is None:
            self._python = self._load({"List": list, **self._bind_python()})
        return self._python[name]

    def numba(self, name: str) -> Any:
        """The Numba dispatcher of function ``name`` (not compiled yet)."""
        if self._numba is None:
            keep_freed_memory()  # tapes reuse memory instead of page-faulting anew
            ns = self._load({"List": NumbaList, WEAK: weak, **self._bind_numba()},
                            register=True)
            ns["math"] = checked_math  # CPython's math domain errors (log(-1.0))
            for fn in self.functions:
                ns[fn] = numba.njit(cache=True)(ns[fn])
            self._numba = ns
        return self._numba[name]

    def drop_cache(self) -> None:
        """Delete Numba's cache files of this module (its index and data files)."""
        for file in (self.path.parent / "__pycache__").glob(f"{self.path.stem}.*.nb[ic]"):
            file.unlink(missing_ok=True)

    def compiled(self, name: str, args: tuple) -> tuple[Any, str]:
        """(callable, reason): the Numba function for ``args``, or why not.

        The reason is ``""`` when Numba compiled it.  A failure is remembered per
        argument types, so the next call does not try again.
        """
        if self.python_only:
            return None, self.python_only
        try:
            sig = tuple(numba.typeof(a) for a in args)
        except NUMBA_ERRORS as exc:
            return None, f"argument types are not supported by Numba ({short_reason(exc)})"
        key = (name, sig)
        if key in self.failures:
            return None, self.failures[key]
        try:
            dispatcher = self.numba(name)
            try:
                _compile(dispatcher, sig)
            except CACHE_ERRORS:  # a damaged cache file: drop this module's, compile anew
                self.drop_cache()
                _compile(dispatcher, sig)
        except JitError as exc:
            self.failures[key] = str(exc)
            return None, self.failures[key]
        except NUMBA_ERRORS as exc:
            self.failures[key] = short_reason(exc)
            return None, self.failures[key]
        return dispatcher, ""
