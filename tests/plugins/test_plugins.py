"""Open registries: a package adds an understanding model, an embedder and a specialist through
entry points, and cartagent uses them unedited; broken plugins break only themselves."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cartagent.assistant.conversation import Conversation
from cartagent.assistant.domains import Domain
from cartagent.assistant.specialist import TurnContext
from cartagent.assistant.specialists import (
    SPECIALISTS,
    OutOfScopeSpecialist,
    default_specialists,
)
from cartagent.errors import ConfigurationError
from cartagent.plugins import GROUPS, PluginGroup

EXAMPLE = Path(__file__).parent / "example"


def _dist_info(site: Path, name: str, entry_points: dict[str, dict[str, str]]) -> None:
    """What pip leaves for an installed distribution: its metadata and entry points."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def install_example(site: Path) -> Path:
    """The example plugin of ``tests/plugins/example``, installed into ``site``."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    shutil.copytree(EXAMPLE / "cartagent_example_plugin", site / "cartagent_example_plugin")
    _dist_info(site, project["name"], project["entry-points"])
    return site


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = install_example(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_the_example_plugin_declares_one_entry_point_per_group() -> None:
    declared = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    assert set(declared["entry-points"]) == set(GROUPS.values())


def test_an_installed_model_is_found_named_and_made(example: Path) -> None:
    group: PluginGroup[object] = PluginGroup(GROUPS["understanders"], {"rules": print})
    assert list(group) == ["rules", "first-words"]
    assert "first-words" in group and len(group) == 2
    assert group.origin("first-words") == "cartagent-example-plugin"
    assert group.origin("rules") == "cartagent"
    make = group["first-words"]
    understood = make(None)("red mug under 20 dollars")  # type: ignore[operator]
    assert understood.text == "red mug under"
    with pytest.raises(KeyError):
        group["no-such-model"]


def test_a_plugin_specialist_takes_its_domain_and_keeps_the_built_in_beside_it(
    example: Path,
) -> None:
    plugins: PluginGroup[object] = PluginGroup(GROUPS["specialists"], {})
    chosen = {s.domain: s for s in default_specialists(plugins=plugins)}  # type: ignore[arg-type]
    assert len(chosen) == len(Domain)
    replaced = chosen[Domain.OUT_OF_SCOPE]
    assert replaced.name == "shop_talk_only"
    built_in = {s.domain: type(s) for s in SPECIALISTS}
    assert all(type(chosen[d]) is built_in[d] for d in Domain if d is not Domain.OUT_OF_SCOPE)

    def answer(text: str) -> str:
        conversation = Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))
        return asyncio.run(replaced.handle(TurnContext(text, conversation))).text

    assert answer("what is the weather in Paris") == (
        "Shop talk only here: ask me about our products, your cart or your order."
    )
    # Small talk is still cartagent's own answer, through the built-in specialist.
    hello = asyncio.run(
        OutOfScopeSpecialist().handle(
            TurnContext("hello", Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC)))
        )
    )
    assert answer("hello") == hello.text


def test_with_no_plugins_the_built_in_specialists_are_used() -> None:
    from cartagent.assistant import specialists

    made = {s.domain: type(s).__name__ for s in default_specialists(plugins={})}
    assert len(made) == len(Domain)
    # Every one is cartagent's own class, listed on the package's face.
    assert all(name in specialists.__all__ for name in made.values()), made
    assert made[Domain.OUT_OF_SCOPE] == "OutOfScopeSpecialist"


def test_the_installed_plugins_reach_the_command_line_and_the_registries(
    tmp_path: Path,
) -> None:
    site = install_example(tmp_path / "site")
    env = {"PYTHONPATH": str(site), "PATH": str(Path(sys.executable).parent)}
    listed = subprocess.run(
        [sys.executable, "-m", "cartagent", "plugins"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "first-words            cartagent-example-plugin" in listed
    assert "letters                cartagent-example-plugin" in listed
    assert "shop-talk-only         cartagent-example-plugin" in listed
    assert "rules                  cartagent" in listed

    understood = subprocess.run(
        [sys.executable, "-m", "cartagent", "understand", "--model", "first-words", "red mug"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert json.loads(understood.splitlines()[-1])["text"] == "red mug"

    script = (
        "from cartagent.retrieval.embeddings import get_embedder\n"
        "from cartagent.retrieval.understanders import get_understander\n"
        "vectors = get_embedder('letters').embed(['abc', 'cab', 'xyz'])\n"
        "near, far = vectors[0] @ vectors[1], vectors[0] @ vectors[2]\n"
        "print(round(float(near), 3), round(float(far), 3))\n"
        "print(get_understander('first-words')('one two three four').text)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["1.0 0.0", "one two three"]


def _broken(site: Path, module: str, source: str, entries: dict[str, dict[str, str]]) -> None:
    """A distribution ``broken-plugin`` with one module (a name of its own per test: an
    earlier test's stays in ``sys.modules``)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    _dist_info(site, "broken-plugin", entries)


def test_a_plugin_that_fails_to_import_is_refused_with_its_package_and_breaks_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_name = GROUPS["embedders"]
    _broken(
        tmp_path,
        "broken_import",
        "import no_such_module_anywhere\n",
        {group_name: {"bad": "broken_import:make"}},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    group: PluginGroup[object] = PluginGroup(group_name, {"good": len})
    assert sorted(group) == ["bad", "good"]
    with pytest.raises(ConfigurationError) as refused:
        group["bad"]
    message = str(refused.value)
    assert "broken-plugin" in message and "broken_import:make" in message
    assert "ModuleNotFoundError" in message
    assert group["good"] is len


def test_a_plugin_that_is_not_a_factory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_name = GROUPS["understanders"]
    _broken(tmp_path, "not_callable", "make = 42\n", {group_name: {"n": "not_callable:make"}})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigurationError, match="not a factory: int"):
        PluginGroup(group_name, {})["n"]


def test_a_plugin_cannot_take_a_built_in_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_name = GROUPS["understanders"]
    _broken(
        tmp_path,
        "takes_rules",
        "def make(settings): ...\n",
        {group_name: {"rules": "takes_rules:make"}},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    group: PluginGroup[object] = PluginGroup(group_name, {"rules": len})
    with pytest.warns(RuntimeWarning, match="'rules' is ignored: the name is built in"):
        assert list(group) == ["rules"]
    assert group["rules"] is len and group.origin("rules") == "cartagent"


def test_two_specialist_plugins_for_one_domain_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_name = GROUPS["specialists"]
    module = (
        "def make(setup):\n"
        "    from cartagent.assistant.domains import Domain\n"
        "    return setup.built_in[Domain.ORDERS]\n"
    )
    _broken(
        tmp_path,
        "two_orders",
        module,
        {group_name: {"one": "two_orders:make", "two": "two_orders:make"}},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigurationError, match="'one' and 'two' both answer orders"):
        default_specialists(plugins=PluginGroup(group_name, {}))


def test_registering_in_code_adds_and_removes_a_name() -> None:
    group: PluginGroup[object] = PluginGroup("cartagent.no-such-group", {})
    group["mine"] = len
    assert list(group) == ["mine"] and group.origin("mine") == "cartagent"
    del group["mine"]
    assert list(group) == []
