"""The packages of ``gateway/`` import one way only (docs/design.md, "Layers").

Every package has a layer (:data:`LAYERS`, lowest first); a module may import modules of
its own package and of packages in lower layers. An import of a higher layer is allowed
only as one of the module edges in :data:`EXCEPTIONS`, each with its reason; an exception
that no longer occurs fails too, so the list shrinks as the code is fixed. Imports inside
functions count (``ast`` walks the whole file). A package must not import another
package's private name (``_name``) either, except :data:`PRIVATE_EXCEPTIONS`. Module-level
import cycles are tests/test_layout.py's.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Packages of ``gateway/``, lowest first. ``gateway`` itself (``__version__``) is below all.
LAYERS = (
    "gateway",
    "runtime",       # config, errors, metrics, telemetry, embedded Redis, admission, breakers
    "memory",        # records, store, backends, embeddings, ranking
    "lorebook",
    "settings",
    "speakers",
    "config",        # gateway.yaml as a whole: composes the domains' config models
    "proxy",         # the request path below the chain: wire values, auth, upstream, pass-through
    "memorization",  # queue, workers, formation
    "chain",         # the plugin chain and the SDK
    "routes",        # the proxied routes that run the chain (chat completions, responses)
    "api",           # every non-proxy HTTP surface
    "app",           # the composition root
    "cli",           # every command
)

#: Upward imports that stay, ``(importer, imported): reason``. Each is a module edge.
#: None is left; a new one needs a reason here (and fails the test when it disappears).
EXCEPTIONS: dict[tuple[str, str], str] = {}

#: Private names imported from another package, ``(importer, imported, name): reason``.
PRIVATE_EXCEPTIONS: dict[tuple[str, str, str], str] = {}


def layer(package: str) -> int:
    return LAYERS.index(package)


def package_of(module: str) -> str:
    """``gateway.memory.store`` -> ``memory``; ``gateway.app`` -> ``app``; ``gateway`` -> ``gateway``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` of every absolute ``gateway`` import of ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names if alias.name.split(".")[0] == "gateway"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "gateway":
            found.append((node.module, tuple(alias.name for alias in node.names)))
    return found


def edges() -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(importer, imported): names}`` between modules of different gateway packages."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for path in sorted((ROOT / "gateway").rglob("*.py")):
        me = module_name(path)
        for module, names in imported(path):
            if package_of(module) != package_of(me):
                found[(me, module)] = found.get((me, module), ()) + names
    return found


def upward(all_edges: dict[tuple[str, str], tuple[str, ...]]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in all_edges if layer(package_of(b)) > layer(package_of(a))}


def test_every_package_has_a_layer():
    packages = {p.name for p in (ROOT / "gateway").iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in (ROOT / "gateway").glob("*.py") if p.stem != "__init__"}
    assert packages | modules == set(LAYERS) - {"gateway"}, "a new top-level package needs a place in LAYERS"


def test_upward_finds_an_import_of_a_higher_layer():
    fake = {("gateway.memory.store", "gateway.proxy.wire"): (), ("gateway.proxy.chat", "gateway.memory.store"): ()}
    assert upward(fake) == {("gateway.memory.store", "gateway.proxy.wire")}


def test_packages_import_only_lower_layers_except_the_listed_edges():
    found = upward(edges())
    assert found - EXCEPTIONS.keys() == set(), "upward imports (fix them, or list them in EXCEPTIONS with a reason)"
    assert EXCEPTIONS.keys() - found == set(), "exceptions that no longer occur: remove them from EXCEPTIONS"


def two_way(all_edges, allowed) -> set[tuple[str, str]]:
    """Package pairs that import each other through edges not in ``allowed``."""
    pairs = {(package_of(a), package_of(b)) for a, b in all_edges if (a, b) not in allowed}
    return {(a, b) for a, b in pairs if (b, a) in pairs}


def test_two_way_finds_packages_that_import_each_other():
    fake = {("gateway.proxy.chat", "gateway.speakers.group"): (), ("gateway.speakers.group", "gateway.proxy.wire"): (),
            ("gateway.proxy.chat", "gateway.memory.store"): ()}
    assert two_way(fake, {}) == {("proxy", "speakers"), ("speakers", "proxy")}
    assert two_way(fake, {("gateway.speakers.group", "gateway.proxy.wire"): "reason"}) == set()


def test_no_two_way_import_between_packages_outside_the_exceptions():
    assert two_way(edges(), EXCEPTIONS) == set()


def test_no_package_imports_another_packages_private_name():
    private = {(a, b, n) for (a, b), names in edges().items() for n in names if n.startswith("_") and not n.startswith("__")}
    assert private - PRIVATE_EXCEPTIONS.keys() == set(), "make the name public, or list it in PRIVATE_EXCEPTIONS"
    assert PRIVATE_EXCEPTIONS.keys() - private == set(), "exceptions that no longer occur: remove them"
