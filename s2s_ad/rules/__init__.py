"""The primitives: the registry (:mod:`.registry`) and its tables, by topic.

Each table is a file of entries, one primitive each: ``math_rules``,
``builtin_rules``, ``elementwise_rules``, ``reduction_rules``, ``shape_rules``,
``linalg_rules``, ``scipy_linalg_rules``, ``constructor_rules``, ``stack_rules``,
``einsum_rules`` and ``list_rules``.  An entry is a call of :func:`primitive` on
the function object: its parameters, the adjoint (VJP) template of each (in the parameters, ``z``
the result and ``g`` its cotangent), its result kind, and whatever else is
true of it (``elementwise``, ``methods``, ``view``...).  The name generated
code calls is derived from the object, and the compiler reads everything else
from the rule, so adding a NumPy function with a derivative is one entry here
plus one case in ``tests/rule_table_cases.py``.  For example ``np.deg2rad``,
which no table has:

>>> import numpy as np
>>> import s2s_ad as ad
>>> from s2s_ad.rules import primitive, unregister
>>> from s2s_ad.rules.result_kinds import floats
>>> rule = primitive(np.deg2rad, ("x",), {"x": "g * (np.pi / 180.0)"}, kind=floats,
...                  elementwise=True)
>>> rule.emit
'np.deg2rad'
>>> def east_component(headings):
...     return np.sum(np.sin(np.deg2rad(headings)))
>>> headings = np.array([0.0, 30.0, 90.0])
>>> slope = np.cos(np.deg2rad(headings)) * np.pi / 180.0  # d/dh sin(h * pi / 180)
>>> bool(np.allclose(ad.gradient(east_component)(headings), slope, rtol=1e-12))
True
>>> unregister(np.deg2rad)
"""

from . import (  # noqa: F401  (the tables)
    builtin_rules,
    constructor_rules,
    einsum_rules,
    elementwise_rules,
    linalg_rules,
    list_rules,
    math_rules,
    reduction_rules,
    scipy_linalg_rules,
    shape_rules,
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
    unregister,
)

__all__ = ["Rule", "all_rules", "array_methods", "lookup", "operator_rule", "primitive",
           "register", "returns_view", "unregister"]
