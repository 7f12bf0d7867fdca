"""The primitives: the registry (:mod:`.registry`) and its tables, by topic.

Each table is a file of entries, one primitive each: ``math_rules``, ``builtin_rules``,
``elementwise_rules``, ``reduction_rules``, ``shape_rules``, ``axes_rules``,
``rearrange_rules``, ``linalg_rules``, ``product_rules``, ``scipy_linalg_rules``,
``constructor_rules``, ``stack_rules``, ``einsum_rules``, ``list_rules``,
``runtime_rules`` (the helpers gradient code calls), and ``special_rules``
(``scipy.special``: registered once the user's code has imported it). An entry is a call
of :func:`primitive` on the function object: its parameters, the adjoint (VJP) template
of each (in the parameters, ``z`` the result and ``g`` its cotangent), its result kind,
and whatever else is true of it (``elementwise``, ``methods``, ``view``...). The name
generated code calls is derived from the object, and the compiler reads everything else
from the rule, so adding a NumPy function with a derivative is one entry here
plus one case in ``tests/rule_table_cases.py``.  For example ``np.ldexp``
(``x * 2 ** n``), which no table has:

>>> import numpy as np
>>> import s2s_ad as ad
>>> from s2s_ad.rules import primitive, unregister
>>> from s2s_ad.rules.result_kinds import floats
>>> rule = primitive(np.ldexp, ("x", "n"), {"x": "g * np.exp2(n)"}, kind=floats,
...                  elementwise=True)
>>> rule.emit
'np.ldexp'
>>> def scaled_energy(levels):
...     return np.sum(np.sin(np.ldexp(levels, 3)))
>>> levels = np.array([0.0, 0.25, 1.5])
>>> slope = np.cos(np.ldexp(levels, 3)) * 8.0  # d/dx sin(x * 2 ** 3)
>>> bool(np.allclose(ad.gradient(scaled_energy)(levels), slope, rtol=1e-12))
True
>>> unregister(np.ldexp)
"""

from . import (  # noqa: F401  (the tables)
    axes_rules,
    builtin_rules,
    constructor_rules,
    einsum_rules,
    elementwise_rules,
    linalg_rules,
    list_rules,
    math_rules,
    product_rules,
    rearrange_rules,
    reduction_rules,
    runtime_rules,
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
