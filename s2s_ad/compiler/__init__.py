"""The source-to-source compiler: one module (or small package) per stage.

``pipeline.py`` lists the stages in order.  May import ``s2s_ad.errors``,
``s2s_ad.kinds``, ``s2s_ad.markers``, ``s2s_ad.rules`` and ``s2s_ad.runtime``
(never ``api``, ``introspect`` or ``cli``).
"""
