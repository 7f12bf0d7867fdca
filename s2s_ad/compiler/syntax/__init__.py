"""The one set of tree builders, hygienic names and node annotations every stage uses.

May import ``s2s_ad.errors`` and ``s2s_ad.kinds`` only.
"""
