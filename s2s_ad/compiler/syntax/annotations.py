"""Annotations: facts the stages attach to gast nodes.

Annotations are attributes on the nodes, so a tree stays printable as Python at
every stage.

>>> import gast
>>> node = gast.Pass()
>>> set_anno(node, "line", 7)
>>> get_anno(node, "line"), get_anno(node, "missing", 0)
(7, 0)
"""

from __future__ import annotations

from typing import Any

import gast

_PREFIX = "_s2s_"


def set_anno(node: gast.AST, key: str, value: Any) -> None:
    """Attach ``value`` to ``node`` under ``key``."""
    setattr(node, _PREFIX + key, value)


def get_anno(node: gast.AST, key: str, default: Any = None) -> Any:
    """The annotation ``key`` of ``node``, or ``default``."""
    return getattr(node, _PREFIX + key, default)


def copy_annos(src: gast.AST, dst: gast.AST) -> gast.AST:
    """Copy every annotation and the source position of ``src`` onto ``dst``."""
    for name, value in vars(src).items():
        if name.startswith(_PREFIX):
            setattr(dst, name, value)
    for pos in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(src, pos):
            setattr(dst, pos, getattr(src, pos))
    return dst
