"""The code's boundaries (issue 8): no import cycles, hidden lazy imports included;
plugins import only the SDK; the core never names a plugin; benchmarks and tests stay
out of the product."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("gateway", "plugins")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of the file (functions included)."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    files = [p for top in PRODUCT for p in (ROOT / top).rglob("*.py")]
    modules = {module_name(p): p for p in files}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges[name] = {m for m in imports(path) if m in modules and m != name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle in the import graph (package ``__init__`` edges included), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_product_has_no_import_cycle_not_even_through_lazy_imports():
    assert find_cycle(graph()) is None


def test_plugins_import_only_the_sdk_from_the_core():
    for path in (ROOT / "plugins").rglob("*.py"):
        core = sorted(m for m in imports(path) if m.split(".")[0] == "gateway")
        assert set(core) <= {"gateway.chain.sdk"} | {f"gateway.chain.sdk.{n}" for n in _sdk_names()}, (path.name, core)


def _sdk_names() -> set[str]:
    import gateway.chain.sdk

    return set(gateway.chain.sdk.__all__)


def test_the_core_never_names_a_plugin():
    """Only the composition root asks the plugins package for its registry."""
    for path in (ROOT / "gateway").rglob("*.py"):
        named = {m for m in imports(path) if m.split(".")[0] == "plugins"}
        if path.name == "app.py":
            assert named <= {"plugins", "plugins.builtin_plugins"}, named
        else:
            assert not named, (path, named)


def test_benchmarks_and_tests_are_not_imported_by_the_product():
    for top in PRODUCT:
        for path in (ROOT / top).rglob("*.py"):
            outside = {m for m in imports(path) if m.split(".")[0] in ("bench", "tests")}
            assert not outside, (path, outside)
