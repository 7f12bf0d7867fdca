"""Annotations: facts the stages attach to gast nodes.

Annotations are attributes on the nodes, so a tree stays printable as Python at
every stage. Each fact has its own reader and writer here (``callee_of`` and
``set_callee``, ``line_of`` and ``set_line``, ...): a misspelt one fails when the
module is imported, never by reading ``None``.

>>> import gast
>>> node = gast.Pass()
>>> set_line(node, 7)
>>> line_of(node), callee_of(node), method_of(node, "none")
(7, None, 'none')
"""

from __future__ import annotations

from typing import Any

import gast

_PREFIX = "_s2s_"


def _set(node: gast.AST, key: str, value: Any) -> None:
    setattr(node, _PREFIX + key, value)


def _get(node: gast.AST, key: str, default: Any) -> Any:
    return getattr(node, _PREFIX + key, default)


def callee_of(node: gast.AST, default: Any = None) -> Any:
    """The object the call ``node`` calls, as normalize resolved it."""
    return _get(node, "callee", default)


def set_callee(node: gast.AST, callee: Any) -> None:
    _set(node, "callee", callee)


def line_of(node: gast.AST, default: int | None = None) -> int | None:
    """The source line the statement ``node`` was generated for."""
    return _get(node, "line", default)


def set_line(node: gast.AST, line: int | None) -> None:
    _set(node, "line", line)


def is_in_place(node: gast.AST) -> bool:
    """Whether the assignment ``node`` came from an augmented assignment (``y *= 3.0``),
    which on an array mutates it."""
    return bool(_get(node, "in_place", False))


def mark_in_place(node: gast.AST) -> None:
    _set(node, "in_place", True)


def attribute_of(node: gast.AST, default: str | None = None) -> str | None:
    """The attribute name ``p.size`` read, for the call ``getattr(p, "size")`` it became
    (a structure's field, if that is what it is)."""
    return _get(node, "attribute", default)


def set_attribute(node: gast.AST, name: str) -> None:
    _set(node, "attribute", name)


def method_of(node: gast.AST, default: str | None = None) -> str | None:
    """The method name of the call ``node`` written ``obj.name(...)`` (a structure's
    method, if it is one)."""
    return _get(node, "method", default)


def set_method(node: gast.AST, name: str) -> None:
    _set(node, "method", name)


def structure_of(node: gast.AST, default: Any = None) -> Any:
    """The structure kind whose fields the tuple display ``node`` holds."""
    return _get(node, "structure", default)


def set_structure(node: gast.AST, kind: Any) -> None:
    _set(node, "structure", kind)


def is_parallel(node: gast.AST) -> bool:
    """Whether the ``for`` loop ``node`` was written over ``numba.prange`` (``ad.prange``):
    its iterations may run in parallel."""
    return bool(_get(node, "parallel", False))


def mark_parallel(node: gast.AST) -> None:
    _set(node, "parallel", True)


def comment_of(node: gast.AST, default: str | None = None) -> str | None:
    """The comment the statement ``node`` prints as in generated code."""
    return _get(node, "comment", default)


def set_comment(node: gast.AST, text: str) -> None:
    _set(node, "comment", text)


def copy_annos(src: gast.AST, dst: gast.AST) -> gast.AST:
    """Copy every annotation and the source position of ``src`` onto ``dst``."""
    for name, value in vars(src).items():
        if name.startswith(_PREFIX):
            setattr(dst, name, value)
    for pos in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(src, pos):
            setattr(dst, pos, getattr(src, pos))
    return dst
