"""``SemanticCache``: exact and similar requests share a query; differently-meant ones never do."""

from __future__ import annotations

import threading

import pytest

from cartagent.errors import ConfigurationError
from cartagent.retrieval.cache import CacheStats, SemanticCache
from cartagent.retrieval.query import SearchQuery
from cartagent.testing import HashingEmbedder

SHOES = SearchQuery(category="running shoes")


def _cache(threshold: float = 0.8, capacity: int = 100) -> SemanticCache:
    return SemanticCache(HashingEmbedder(dim=256), threshold=threshold, capacity=capacity)


def test_an_empty_cache_misses() -> None:
    cache = _cache()
    assert cache.get("running shoes") is None
    assert cache.stats == CacheStats(lookups=1, hits=0, exact_hits=0, misses=1, size=0)


def test_the_same_request_in_other_case_spacing_and_punctuation_is_an_exact_hit() -> None:
    cache = _cache()
    cache.put("Running shoes for trail", (), SHOES)
    assert cache.get("  running   SHOES for trail?!") == SHOES
    assert cache.stats == CacheStats(lookups=1, hits=1, exact_hits=1, misses=0, size=1)


def test_a_similar_wording_is_a_hit_by_similarity() -> None:
    cache = _cache(threshold=0.8)
    cache.put("lightweight running shoes for long trail runs", (), SHOES)
    assert cache.get("lightweight running shoes for long trail runs please") == SHOES
    stats = cache.stats
    assert (stats.hits, stats.exact_hits, stats.hit_rate) == (1, 0, 1.0)


def test_an_unrelated_request_misses() -> None:
    cache = _cache(threshold=0.8)
    cache.put("lightweight running shoes for long trail runs", (), SHOES)
    assert cache.get("a ceramic teapot for green tea") is None


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("running shoes under $50", "running shoes under $60"),  # numbers
        ("running shoes size 10 under 50", "running shoes size 50 under 10"),  # their order
        ("red shoes not blue", "blue shoes not red"),  # what is negated
        ("shoes with laces", "shoes without laces"),  # whether anything is
        ("red dress for a summer wedding", "blue dress for a summer wedding"),  # the reading
        ("mens hiking boots waterproof", "womens hiking boots waterproof"),
        ("cheapest noise cancelling headphones", "best rated noise cancelling headphones"),
    ],
)
def test_requests_that_differ_in_meaning_never_share_an_entry(stored: str, asked: str) -> None:
    cache = _cache(threshold=0.01)  # only the guard stands between them
    cache.put(stored, (), SHOES)
    assert cache.get(asked) is None


def test_the_same_request_after_different_earlier_turns_never_shares_an_entry() -> None:
    cache = _cache(threshold=0.01)
    cache.put("in blue instead", ["red dresses"], SHOES)
    assert cache.get("in blue instead", ["red shirts"]) is None
    assert cache.get("in blue instead") is None
    assert cache.get("in blue instead", ["Red dresses "]) == SHOES


def test_the_least_recently_used_entry_is_evicted_at_capacity() -> None:
    cache = _cache(threshold=0.99, capacity=2)
    a, b, c = (SearchQuery(text=t) for t in "abc")
    cache.put("alpha", (), a)
    cache.put("bravo", (), b)
    assert cache.get("alpha") == a  # alpha is now the most recent
    cache.put("charlie", (), c)
    assert (cache.get("alpha"), cache.get("bravo"), cache.get("charlie")) == (a, None, c)
    assert len(cache) == cache.stats.size == 2


def test_an_evicted_entry_is_not_found_by_similarity_either() -> None:
    cache = _cache(threshold=0.5, capacity=1)
    cache.put("wireless earbuds with long battery", (), SHOES)
    cache.put("ceramic teapot", (), SearchQuery(category="teapot"))
    assert cache.get("wireless earbuds with long battery life") is None


def test_putting_a_stored_request_again_replaces_its_query() -> None:
    cache = _cache()
    cache.put("mug", (), SHOES)
    cache.put("MUG", (), SearchQuery(category="mug"))
    assert cache.get("mug") == SearchQuery(category="mug")
    assert len(cache) == 1


def test_the_store_grows_past_its_first_chunk() -> None:
    cache = _cache(threshold=0.99, capacity=1000)
    words = [f"item{i} thing{i * 7}" for i in range(300)]
    for i, words_i in enumerate(words):
        cache.put(words_i, (), SearchQuery(text=str(i)))
    assert len(cache) == 300
    assert cache.get(words[299] + "!") == SearchQuery(text="299")
    assert cache.get(words[0]) == SearchQuery(text="0")


def test_a_request_without_words_is_only_found_exactly() -> None:
    cache = _cache(threshold=0.01)
    cache.put("👟 🔥", (), SHOES)
    assert cache.get("👟🔥") is None
    assert cache.get("👟 🔥") == SHOES


def test_clear_forgets_entries_but_keeps_counts() -> None:
    cache = _cache()
    cache.put("mug", (), SHOES)
    assert cache.get("mug") == SHOES
    cache.clear()
    assert cache.get("mug") is None
    assert cache.stats == CacheStats(lookups=2, hits=1, exact_hits=1, misses=1, size=0)
    cache.put("mug", (), SHOES)  # slots are reused
    assert cache.get("mug") == SHOES


def test_a_miss_followed_by_a_put_embeds_the_request_once() -> None:
    embedder = HashingEmbedder()
    cache = SemanticCache(embedder)
    cache.put("teapot", (), SHOES)
    calls = embedder.calls
    assert cache.get("green tea teapot") is None
    cache.put("green tea teapot", (), SHOES)
    assert embedder.calls == calls + 1


def test_concurrent_use_from_threads_is_safe() -> None:
    cache = _cache(threshold=0.9, capacity=50)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(60):
                cache.put(f"product {n} number {i}", (), SearchQuery(text=f"{n}-{i}"))
                found = cache.get(f"product {n} number {i}")
                assert found is None or found.text.startswith(f"{n}-")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stats = cache.stats
    assert stats.lookups == 360
    assert stats.size == 50


@pytest.mark.parametrize(("threshold", "capacity"), [(0.0, 10), (1.5, 10), (0.9, 0)])
def test_bad_settings_are_configuration_errors(threshold: float, capacity: int) -> None:
    with pytest.raises(ConfigurationError):
        SemanticCache(HashingEmbedder(), threshold=threshold, capacity=capacity)
