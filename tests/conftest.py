"""Test setup: the examples directory is importable (tests reuse its workloads)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
