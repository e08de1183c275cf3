"""The registry: versions with lineage, aliases, crash-safe writes; and its commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli
from cartagent.errors import ConfigurationError
from cartagent.llm.registry import Registry, git_commit


def fake_run(folder: Path, sha: str = "abc123") -> Path:
    adapter = folder / "adapter"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"r": 4}')
    (adapter / "adapter_model.safetensors").write_bytes(b"weights")
    record = {
        "method": "sft",
        "base_model": "smollm2",
        "data": {"train": {"sha256": sha, "rows": 10}},
        "config": {"lora": {"rank": 4}},
        "steps": 3,
        "final_loss": 0.5,
        "eval_loss": 0.6,
    }
    (adapter / "training.json").write_text(json.dumps(record))
    return adapter


def fake_export(peft: Path, gguf: Path) -> Path:
    gguf.write_bytes(b"GGUF" + (peft / "adapter_model.safetensors").read_bytes())
    return gguf


def test_each_registration_is_a_new_version_with_its_lineage(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "registry")

    first = registry.register(fake_run(tmp_path / "a"), "search", export=fake_export)
    second = registry.register(
        fake_run(tmp_path / "b", sha="def456"), "search", export=fake_export, metrics={"f1": 0.9}
    )

    assert (first.number, second.number) == (1, 2)
    assert second.lineage["data"]["train"]["sha256"] == "def456"
    assert second.lineage["base_model"] == "smollm2"
    assert second.lineage["metrics"] == {"f1": 0.9}
    assert second.lineage["git_commit"] == git_commit()
    assert second.gguf.read_bytes() == b"GGUFweights"
    assert (second.adapter / "adapter_config.json").is_file()
    assert [v.number for v in registry.versions("search")] == [1, 2]
    assert registry.names() == ["search"]


def test_aliases_point_at_versions_and_resolve(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    registry.register(fake_run(tmp_path / "a"), "search", export=fake_export)
    registry.register(fake_run(tmp_path / "b"), "search", export=fake_export)

    registry.set_alias("search", "production", 1)

    assert registry.resolve("search").number == 1
    assert registry.resolve("search", "v2").number == 2
    with pytest.raises(ConfigurationError, match="no alias 'staging'"):
        registry.resolve("search", "staging")
    with pytest.raises(ConfigurationError, match="no version 9"):
        registry.set_alias("search", "production", 9)


def test_a_failed_export_leaves_no_version_behind(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "registry")

    def broken(peft: Path, gguf: Path) -> Path:
        raise ConfigurationError("cannot export")

    with pytest.raises(ConfigurationError, match="cannot export"):
        registry.register(fake_run(tmp_path / "a"), "search", export=broken)

    assert registry.versions("search") == []
    assert list((tmp_path / "registry" / "search").iterdir()) == []


def test_bad_names_and_folders_are_refused(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    with pytest.raises(ConfigurationError, match="registry name"):
        registry.register(fake_run(tmp_path / "a"), "../evil", export=fake_export)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigurationError, match="not an adapter folder"):
        registry.register(tmp_path / "empty", "search", export=fake_export)


def test_register_models_and_promote_commands(tiny_adapter: Path, tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    runner = CliRunner()

    registered = runner.invoke(
        cli, ["tune", "register", str(tiny_adapter), "--registry", str(registry), "--promote"]
    )
    listed = runner.invoke(cli, ["tune", "models", "--registry", str(registry)])
    promoted = runner.invoke(cli, ["tune", "promote", "search", "7", "--registry", str(registry)])

    assert registered.exit_code == 0, registered.output
    assert "registered search v1" in registered.output
    assert (registry / "search" / "v1" / "adapter.gguf").stat().st_size > 0
    assert listed.exit_code == 0 and "search v1 [production]  sft on" in listed.output
    assert promoted.exit_code != 0 and "no version 7" in promoted.output
