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


# What the toolkit may load: the toolkit, the PayPal client, the shopping clients' face and what
# those stand on; never a server, a database layer, search or templates.
_SERVER_SIDE = (
    "cartagent.commerce", "cartagent.retrieval", "cartagent.indexing", "cartagent.assistant",
    "cartagent.web", "cartagent.sandbox", "cartagent.protocols.ucp", "fastapi", "starlette",
    "sqlalchemy", "tantivy", "jinja2", "jsonschema", "onnxruntime", "torch",
)  # fmt: skip
MAX_FACE_MODULES = 15  # the bound for ``import cartagent.tools`` (3 measured 2026-12-07)
MAX_TOOLKIT_MODULES = 40  # every tool loaded (measured 2026-12-07; 52 before the split)


def _loaded(statement: str) -> list[str]:
    import json
    import subprocess
    import sys

    script = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    loaded: list[str] = json.loads(subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout)  # fmt: skip
    return loaded


def test_the_toolkit_loads_no_server_database_or_search() -> None:
    face = _loaded("import cartagent.tools")
    assert len([m for m in face if m.startswith("cartagent")]) <= MAX_FACE_MODULES, face
    loaded = _loaded("from cartagent.tools import ALL_TOOLS, MERCHANT_TOOLS, Toolkit")
    assert [m for m in loaded if m.startswith(_SERVER_SIDE)] == []
    ours = [m for m in loaded if m == "cartagent" or m.startswith("cartagent.")]
    assert len(ours) <= MAX_TOOLKIT_MODULES, ours


def test_the_toolkit_stands_on_the_paypal_client_and_the_shopping_clients_alone() -> None:
    graph = dependencies()
    assert graph["tools"] <= {"paypal", "shopping", "protocols"}
    assert graph["shopping"] <= {"catalog", "paypal", "protocols"}
    assert graph["protocols"] <= {"catalog"}
    # The merchant serves the protocols; it never reaches for the agent's clients.
    assert "shopping" not in graph["commerce"] and "commerce" not in graph["shopping"]


def test_the_shopping_clients_load_no_server_or_database() -> None:
    loaded = _loaded("import cartagent.shopping.acp, cartagent.shopping.ucp")
    server = ("cartagent.commerce", "fastapi", "starlette", "sqlalchemy", "tantivy", "jinja2")
    assert [m for m in loaded if m.startswith(server)] == []


def _calls(module: Path, attribute: str) -> list[int]:
    """The lines of ``module`` that call ``<something>.attribute(...)`` or ``attribute(...)``."""
    lines = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name == attribute:
                lines.append(node.lineno)
    return lines


def test_only_the_command_line_reads_the_settings_from_the_environment() -> None:
    readers = {
        str(module.relative_to(PACKAGE))
        for module in PACKAGE.rglob("*.py")
        if _calls(module, "from_env") or _calls(module, "run_settings")
    }
    assert readers and all(path.startswith("cli/") or path == "settings.py" for path in readers), (
        sorted(readers)
    )


def test_the_rule_finders_find_what_they_look_for(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("x = Settings.from_env()\ny = run_settings()\nfrom_env_too = 1\n")
    assert _calls(module, "from_env") == [1] and _calls(module, "run_settings") == [2]
    assert list(_private_imports("from cartagent.tools._tool import tool", ("retrieval",))) == [
        "cartagent.tools._tool"
    ]
    assert list(_private_imports("from .._tool import tool", ("tools", "sub"))) == []
    for folder, source in (("assistant", "from ..retrieval.rules import parse\n"),
                           ("retrieval", "from .rules import parse\n"),
                           ("web", "from ..retrieval import parse\n")):  # fmt: skip
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(source)
    assert _reaches_into("retrieval", tmp_path) == {"assistant/m.py -> retrieval.rules"}


def _private_imports(source: str, package: tuple[str, ...]) -> Iterator[str]:
    """The modules of another cartagent package named with a leading ``_`` that ``source``
    (a module in ``package``, its folder under cartagent) imports."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
            else:
                names = (node.module or "").split(".")
                if names[0] != "cartagent":
                    continue
                target = names[1:]
            private = [i for i, part in enumerate(target) if part.startswith("_")]
            # cartagent._lazy and the like are the root's own: every package is inside it.
            if private and private[0] > 0 and tuple(target[: private[0]]) != package[: private[0]]:
                yield "cartagent." + ".".join(target)


def _reaches_into(package: str, root: Path = PACKAGE) -> set[str]:
    """``module -> cartagent.<package>.<submodule>`` for each import of one of ``package``'s
    modules by a module of another package (the face, ``cartagent.<package>``, is allowed)."""
    found = set()
    for module in root.rglob("*.py"):
        where = module.relative_to(root).parts[:-1]
        if where[:1] == (package,):
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = list(where[: len(where) - (node.level - 1)])
                    target = base + (node.module.split(".") if node.module else [])
                else:
                    names = (node.module or "").split(".")
                    target = names[1:] if names[0] == "cartagent" else []
                if target[:1] == [package] and len(target) > 1:
                    found.add(f"{module.relative_to(root)} -> {'.'.join(target)}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(f"cartagent.{package}."):
                        found.add(f"{module.relative_to(root)} -> {alias.name}")
    return found


def test_the_other_packages_use_retrieval_and_the_shopping_clients_through_their_faces() -> None:
    assert _reaches_into("retrieval") == set()
    assert _reaches_into("shopping") == set()


def test_no_package_imports_another_packages_private_module() -> None:
    found = {
        f"{module.relative_to(PACKAGE)} -> {target}"
        for module in PACKAGE.rglob("*.py")
        for target in _private_imports(
            module.read_text(encoding="utf-8"), module.relative_to(PACKAGE).parts[:-1]
        )
    }
    assert found == set()


_FACES = (
    "cartagent.commerce", "cartagent.commerce.acp", "cartagent.commerce.ucp",
    "cartagent.commerce.paypal_cart", "cartagent.catalog", "cartagent.tools",
    "cartagent.shopping", "cartagent.retrieval",
)  # fmt: skip


def test_no_name_of_a_face_is_also_one_of_its_modules() -> None:
    # Once the module is imported (by anyone), Python binds its name on the package, and
    # ``from package import name`` gives the module instead of the function the face means.
    import importlib
    import pkgutil

    for name in _FACES:
        package = importlib.import_module(name)
        modules = {found.name for found in pkgutil.iter_modules(package.__path__)}
        assert set(package.__all__) & modules == set(), name


def test_a_lazy_package_face_still_gives_every_name_it_lists() -> None:
    import importlib

    for name in _FACES:
        package = importlib.import_module(name)
        assert all(getattr(package, listed) is not None for listed in package.__all__), name
        assert set(package.__all__) <= set(dir(package))
        try:
            package.no_such_name  # noqa: B018
        except AttributeError as error:
            assert name in str(error)
        else:
            raise AssertionError(f"{name} made up a name")
