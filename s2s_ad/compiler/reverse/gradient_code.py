"""The reverse step of the runtime helpers generated gradient code calls
(:mod:`s2s_ad.rules.runtime_rules`): forward mode transforms that code again for
second derivatives, and the pipeline builds its reverse stage first; their
transposes are not written, so the pullback of such code raises if it ever runs
(reverse mode's entry points refuse generated code before that).
"""

from __future__ import annotations

import gast

from s2s_ad.compiler.primitives import RuleOp
from s2s_ad.compiler.reverse import calls
from s2s_ad.compiler.reverse.context import Context, Where
from s2s_ad.compiler.syntax.builders import call, expr_stmt
from s2s_ad.rules.registry import BY_REVERSE_PASS, lookup, reverse_pass
from s2s_ad.rules.runtime_rules import HELPERS


def no_transpose(cx: Context, s: gast.Assign, target: str, prim: RuleOp,
                 where: Where) -> tuple[list[gast.stmt], list[gast.stmt]]:
    """The primal statement forward, ``rt.no_transpose()`` in the pullback."""
    return [calls.primal_stmt(cx, s)], [expr_stmt(call("rt.no_transpose"))]


for _helper in HELPERS:
    _rule = lookup(_helper, None)
    if _rule is not None and BY_REVERSE_PASS in _rule.adjoints.values():
        reverse_pass(_helper)(no_transpose)
