"""The package's architecture, checked from its source with ``ast``.

Every import inside ``s2s_ad/`` counts: module level, inside functions, and
under ``if TYPE_CHECKING:``.  ``from package import name`` depends on
``package.name`` when that is a module, else on ``package``.  Initialising a
parent package on the way to a submodule is Python's doing, not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "s2s_ad"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _absolute(module: str, level: int, target: str | None, is_package: bool) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str) -> list[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, "", node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node.level, node.module, is_package)
            for alias in node.names:
                found.append((source, alias.name, node.lineno))
    return found


def _edges(module: str) -> set[str]:
    out = set()
    for source, name, _ in imports_of(module):
        if f"{source}.{name}" in MODULES:
            out.add(f"{source}.{name}")
        elif source in MODULES:
            out.add(source)
    return out - {module}


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    stack = [(start, [start])]
    seen = set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph[node]):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_the_walk_sees_the_whole_package():
    assert {"s2s_ad.api", "s2s_ad.compiler.pipeline", "s2s_ad.compiler.reverse.context",
            "s2s_ad.runtime", "s2s_ad.rules.registry"} <= set(MODULES)


def test_no_import_cycle_anywhere():
    graph = {m: _edges(m) for m in MODULES}
    cycles = [c for m in MODULES if (c := _cycle_from(m, graph))]
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_detector_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle_from("a", graph) == ["a", "b", "c", "a"]
    assert _cycle_from("d", graph) is None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_at_most_500_lines(module):
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES})"


def test_no_module_imports_another_modules_private_names():
    bad = [f"{m}:{line} imports {name} from {source}"
           for m in MODULES for source, name, line in imports_of(m)
           if source.startswith("s2s_ad") and name.startswith("_") and source != m]
    assert not bad, "\n".join(bad)


LAYERS = {  # package -> the s2s_ad packages it may import (besides itself)
    "s2s_ad.kinds": set(),
    "s2s_ad.errors": set(),
    "s2s_ad.runtime": set(),
    "s2s_ad.registry": set(),  # the tables of derivative knowledge and their generation
    "s2s_ad.markers": {"s2s_ad.registry"},
    "s2s_ad.rules": {"s2s_ad.errors", "s2s_ad.kinds", "s2s_ad.runtime", "s2s_ad.registry"},
    "s2s_ad.kernels": {"s2s_ad.markers", "s2s_ad.registry"},  # kernels and their gradients
    "s2s_ad.compiler": {"s2s_ad.errors", "s2s_ad.kinds", "s2s_ad.markers", "s2s_ad.rules",
                        "s2s_ad.runtime", "s2s_ad.kernels", "s2s_ad.registry"},
}


def _layer(module: str) -> str | None:
    return next((p for p in LAYERS if module == p or module.startswith(p + ".")), None)


def test_imports_go_one_way():
    bad = []
    for m in MODULES:
        layer = _layer(m)
        if layer is None:
            continue
        for target in _edges(m):
            other = _layer(target) or target
            if other != layer and other not in LAYERS[layer]:
                bad.append(f"{m} imports {target}")
    assert not bad, "\n".join(bad)
