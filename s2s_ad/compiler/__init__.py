"""The source-to-source compiler: one module (or small package) per stage.

``pipeline.py`` lists the stages in order.  What it may import is stated once, in
the ``LAYERS`` table of ``tests/test_layout.py`` (never ``api``, ``introspect`` or
``cli``).
"""
