"""Readable, collision-free names for generated code.

The cotangent of ``x`` is ``d_x``; temporaries are named after what they hold
(``sin_x``, ``x_mul_y``).  One :class:`Namer` per generated function family
guarantees no generated name shadows a user name or another generated one.
"""

from __future__ import annotations

import keyword
import re

_OP_WORDS = {
    "Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div", "Pow": "pow",
    "Mod": "mod", "FloorDiv": "floordiv", "MatMult": "matmul", "USub": "neg",
    "UAdd": "pos", "Not": "not", "Eq": "eq", "NotEq": "ne", "Lt": "lt", "LtE": "le",
    "Gt": "gt", "GtE": "ge", "Is": "is", "IsNot": "isnot", "In": "in", "NotIn": "notin",
}
_MAX_LEN = 24

# Names generated code uses with a fixed meaning: the modules it imports, the
# typed-list constructor, and builtins the compiler itself emits calls to.  A user
# variable with one of these names is renamed apart before normalization.
RESERVED = frozenset({"np", "math", "rt", "List", "len", "min", "range"})


def module_function_name(fname: str) -> str:
    """The name of the generated primal of ``fname`` (never a reserved one: ``def rt``)."""
    return fname if fname not in RESERVED else f"{fname}_"


def module_functions(fname: str) -> set[str]:
    """The names of the functions the generated module of ``fname`` defines: the names a
    linked callee's functions must not take (a method ``p.f()`` called in ``f``).

    >>> sorted(module_functions("rt"))
    ['rt_', 'rt__forward', 'rt__pullback', 'rt__value_and_grad']
    """
    name = module_function_name(fname)
    return {name} | {f"{name}_{role}" for role in ("forward", "pullback", "value_and_grad")}


def op_word(op_class_name: str) -> str:
    """A short word for an operator class name (``Mult`` -> ``mul``)."""
    return _OP_WORDS.get(op_class_name, op_class_name.lower())


def _clean(stem: str) -> str:
    stem = re.sub(r"\W+", "_", stem).strip("_") or "t"
    if stem[0].isdigit():
        stem = "t_" + stem
    if len(stem) > _MAX_LEN:
        stem = stem[:_MAX_LEN].rstrip("_")
    return stem


class Namer:
    """Hands out unique identifiers, never one already taken.

    >>> n = Namer({"x", "d_x"})
    >>> n.fresh("sin_x"), n.fresh("sin_x"), n.fresh("d_x")
    ('sin_x', 'sin_x_1', 'd_x_1')
    """

    def __init__(self, taken: set[str] | frozenset[str] = frozenset()):
        self.taken: set[str] = set(taken)
        self.sources: dict[str, str] = {}  # a name standing for a user's variable: its name

    def reserve(self, name: str) -> None:
        """Mark ``name`` as used."""
        self.taken.add(name)

    def fresh(self, stem: str, source: str | None = None) -> str:
        """A new name based on ``stem``; ``source`` is the user's name it stands for
        (a copy or version of a variable), which error messages use (see
        :meth:`user_name`)."""
        stem = _clean(stem)
        name, k = stem, 0
        while name in self.taken or keyword.iskeyword(name):
            k += 1
            name = f"{stem}_{k}"
        self.taken.add(name)
        if source is not None:
            self.sources[name] = source
        return name

    def user_name(self, name: str) -> str:
        """The user's name that the generated ``name`` stands for (``name`` itself
        for the user's own names and for temporaries).

        >>> n = Namer({"v"})
        >>> copy = n.fresh("v_local", source="v")
        >>> n.user_name(n.fresh(copy, source=copy)), n.user_name("t")
        ('v', 't')
        """
        seen = set()
        while name in self.sources and name not in seen:
            seen.add(name)
            name = self.sources[name]
        return name
