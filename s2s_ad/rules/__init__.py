"""Derivative rules: the registry API and the built-in tables."""

from . import (  # noqa: F401  (the tables)
    builtin_rules,
    constructor_rules,
    einsum_rules,
    linalg_rules,
    list_rules,
    math_rules,
    numpy_rules,
    stack_rules,
)
from .registry import (
    Rule,
    all_rules,
    array_methods,
    lookup,
    operator_rule,
    primitive,
    register,
    returns_view,
)

__all__ = ["Rule", "all_rules", "array_methods", "lookup", "operator_rule", "primitive",
           "register", "returns_view"]
