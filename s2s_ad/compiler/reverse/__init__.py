"""Stage 5, reverse: ANF -> primal, forward, pullback and fused value-and-gradient."""

from s2s_ad.compiler.reverse.assemble import Generated, reverse

__all__ = ["Generated", "reverse"]
