"""The subpackages depend on each other one way: no import cycle between them.

Every import of one top-level subpackage by another counts (at module level, inside a function,
or for type checking only), read from the source with ``ast``; the dependency graph's strongly
connected components are its cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import cartagent

PACKAGE = Path(cartagent.__file__).parent

# None: a cycle that returns fails the test below. (The last one, commerce -> mcp -> tools ->
# commerce, was cut by serving the commerce bindings through mcp_transport, which mcp's tool
# server also uses and which imports neither.)
KNOWN_CYCLES: list[frozenset[str]] = []


def _imported(module: Path) -> Iterator[str]:
    """The top-level cartagent names ``module`` imports."""
    package = module.relative_to(PACKAGE).parts[:-1]  # what `from . import` reaches
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "cartagent" and len(names) > 1:
                    yield names[1]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names = (node.module or "").split(".")
                if names[0] == "cartagent" and len(names) > 1:
                    yield names[1]
                continue
            base = list(package[: len(package) - (node.level - 1)])
            target = base + (node.module.split(".") if node.module else [])
            if target:
                yield target[0]
            else:  # from .. import x: each x is a top-level name
                yield from (alias.name for alias in node.names)


def dependencies() -> dict[str, set[str]]:
    """Each subpackage's imports of the others."""
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    graph: dict[str, set[str]] = {name: set() for name in subpackages}
    for name in subpackages:
        for module in (PACKAGE / name).rglob("*.py"):
            graph[name].update(t for t in _imported(module) if t in subpackages and t != name)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [frozenset("abc")]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_are_read_as_the_subpackage_they_reach() -> None:
    graph = dependencies()
    assert "catalog" in graph["indexing"] and "retrieval" in graph["indexing"]
    assert "catalog" in graph["retrieval"]


def test_no_import_cycle_joins_subpackages() -> None:
    found = cycles(dependencies())
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_CYCLES)), (
        "import cycles between cartagent's subpackages (if a known one is gone, drop it from "
        f"KNOWN_CYCLES): {[sorted(c) for c in found]}"
    )


def test_index_building_catalog_and_retrieval_depend_one_way() -> None:
    graph = dependencies()
    assert graph["catalog"] <= {"data"}
    assert "indexing" not in graph["retrieval"] and "indexing" not in graph["catalog"]
    assert all(not ({"catalog", "retrieval", "indexing"} & cycle) for cycle in cycles(graph))


def test_mcp_transport_serves_mcp_and_commerce_and_imports_neither() -> None:
    graph = dependencies()
    assert graph["mcp_transport"] == set()
    assert "mcp_transport" in graph["mcp"] and "mcp_transport" in graph["commerce"]
    assert "mcp" not in graph["commerce"] and "tools" not in graph["commerce"]


def _imports_of(package: str) -> set[str]:
    return {t for module in (PACKAGE / package).rglob("*.py") for t in _imported(module)}


def test_the_sandbox_shares_no_code_with_the_client_it_tests() -> None:
    # The oracle: of cartagent, only the outbound-URL guard, the body limit and the exceptions.
    assert _imports_of("sandbox") - {"sandbox"} <= {"outbound", "body_limit", "errors"}
    assert "outbound" not in _imports_of("paypal") | _imports_of("tools")


# What ``import cartagent.tools`` may load: the toolkit, the PayPal client, the ACP client it
# shops with, and what those stand on; never a server, a database layer, search or templates.
_SERVER_SIDE = (
    "cartagent.commerce.server", "cartagent.commerce.records", "cartagent.commerce.merchant",
    "cartagent.commerce.ucp", "cartagent.commerce.storefront", "cartagent.commerce.paypal_cart",
    "cartagent.retrieval", "cartagent.indexing", "cartagent.assistant", "cartagent.web",
    "cartagent.sandbox", "fastapi", "sqlalchemy", "tantivy", "jinja2",
    "jsonschema", "onnxruntime", "torch",
)  # fmt: skip
MAX_TOOLKIT_MODULES = 52  # measured 2026-12-06 (105 before the package faces were made lazy)


def test_the_toolkit_loads_no_server_database_or_search() -> None:
    import json
    import subprocess
    import sys

    script = "import cartagent.tools, sys, json; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout)  # fmt: skip
    heavy = [m for m in loaded if m == "fastapi" or m.startswith(_SERVER_SIDE)]
    assert heavy == []
    ours = [m for m in loaded if m == "cartagent" or m.startswith("cartagent.")]
    assert len(ours) <= MAX_TOOLKIT_MODULES, ours


def test_a_lazy_package_face_still_gives_every_name_it_lists() -> None:
    import importlib

    for name in ("cartagent.commerce", "cartagent.commerce.acp", "cartagent.commerce.ucp",
                 "cartagent.commerce.paypal_cart", "cartagent.catalog"):  # fmt: skip
        package = importlib.import_module(name)
        assert all(getattr(package, listed) is not None for listed in package.__all__), name
        assert set(package.__all__) <= set(dir(package))
        try:
            package.no_such_name  # noqa: B018
        except AttributeError as error:
            assert name in str(error)
        else:
            raise AssertionError(f"{name} made up a name")
