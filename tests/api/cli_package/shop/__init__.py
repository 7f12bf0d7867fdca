"""A package for the CLI tests: ``check`` imports its modules as ``shop.<module>``."""
