"""A model registry on disk: every registered adapter version with its lineage, and aliases.

::

    <root>/<name>/v<N>/adapter/         the PEFT folder (what vLLM's --lora-modules loads)
    <root>/<name>/v<N>/adapter.gguf     the GGUF LoRA (what llama.cpp loads)
    <root>/<name>/v<N>/lineage.json     base model, data SHA-256s, config, metrics, git commit
    <root>/<name>/aliases.json          e.g. {"production": 3}

A version is written into a hidden folder and renamed into place, so a crash never leaves half a
version; versions are never changed after that.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

__all__ = ["Registry", "Version", "git_commit"]

RECORD = "training.json"
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True)
class Version:
    name: str
    number: int
    folder: Path
    lineage: dict[str, Any]

    @property
    def adapter(self) -> Path:
        return self.folder / "adapter"

    @property
    def gguf(self) -> Path:
        return self.folder / "adapter.gguf"


def git_commit(where: Path | None = None) -> str | None:
    """The commit checked out where cartagent runs from, if it is a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _check_name(name: str) -> str:
    if not name or not set(name) <= _NAME_CHARS or len(name) > 64:
        raise ConfigurationError(
            f"registry name {name!r}: use 1-64 lower-case letters, digits, '-' and '_'"
        )
    return name


class Registry:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _versions_of(self, name: str) -> list[int]:
        folder = self.root / _check_name(name)
        if not folder.is_dir():
            return []
        return sorted(
            int(p.name[1:]) for p in folder.iterdir() if p.name[:1] == "v" and p.name[1:].isdigit()
        )

    def register(
        self,
        adapter: str | Path,
        name: str,
        *,
        export: Callable[[Path, Path], Path],
        metrics: dict[str, Any] | None = None,
    ) -> Version:
        """Copy ``adapter`` (a run's PEFT folder with its ``training.json``) in as a new version.

        ``export(peft_folder, gguf_path)`` writes the GGUF LoRA beside it.
        """
        source = Path(adapter)
        record_file = source / RECORD
        if not (source / "adapter_config.json").is_file() or not record_file.is_file():
            raise ConfigurationError(f"{source}: not an adapter folder from `cartagent tune train`")
        record = json.loads(record_file.read_text(encoding="utf-8"))
        existing = self._versions_of(name)
        number = (existing[-1] + 1) if existing else 1
        final = self.root / name / f"v{number}"
        staging = self.root / name / f".v{number}.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            shutil.copytree(source, staging / "adapter")
            export(staging / "adapter", staging / "adapter.gguf")
            lineage = {
                "name": name,
                "version": number,
                "registered_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "source": str(source.resolve()),
                "base_model": record.get("base_model"),
                "method": record.get("method"),
                "data": record.get("data"),
                "config": record.get("config"),
                "training": {k: record.get(k) for k in ("steps", "final_loss", "eval_loss")},
                "metrics": metrics or {},
                "git_commit": git_commit(),
            }
            (staging / "lineage.json").write_text(json.dumps(lineage, indent=2) + "\n", "utf-8")
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return self.get(name, number)

    def get(self, name: str, number: int) -> Version:
        folder = self.root / _check_name(name) / f"v{number}"
        lineage_file = folder / "lineage.json"
        if not lineage_file.is_file():
            raise ConfigurationError(f"{name} has no version {number} in {self.root}")
        return Version(name, number, folder, json.loads(lineage_file.read_text(encoding="utf-8")))

    def versions(self, name: str) -> list[Version]:
        return [self.get(name, n) for n in self._versions_of(name)]

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.name for p in self.root.iterdir() if p.is_dir() and self._versions_of(p.name)
        )

    def _aliases_file(self, name: str) -> Path:
        return self.root / _check_name(name) / "aliases.json"

    def aliases(self, name: str) -> dict[str, int]:
        file = self._aliases_file(name)
        if not file.is_file():
            return {}
        data: dict[str, int] = json.loads(file.read_text(encoding="utf-8"))
        return data

    def set_alias(self, name: str, alias: str, number: int) -> None:
        self.get(name, number)  # refuses a version that does not exist
        aliases = {**self.aliases(name), _check_name(alias): number}
        file = self._aliases_file(name)
        temporary = file.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(aliases, indent=2, sort_keys=True) + "\n", "utf-8")
        temporary.replace(file)

    def resolve(self, name: str, alias: str = "production") -> Version:
        """The version ``alias`` points at (or version ``alias`` itself: ``"3"`` or ``"v3"``)."""
        raw = alias.removeprefix("v")
        if raw.isdigit():
            return self.get(name, int(raw))
        number = self.aliases(name).get(alias)
        if number is None:
            raise ConfigurationError(f"{name} has no alias {alias!r} in {self.root}")
        return self.get(name, number)
