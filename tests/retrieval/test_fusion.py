"""Reciprocal rank fusion: the arithmetic, ties and edge cases."""

from __future__ import annotations

import pytest

from cartagent.retrieval.fusion import reciprocal_rank_fusion


def test_scores_are_sums_of_reciprocal_ranks() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)


def test_best_first_and_agreement_wins() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "a"], ["b"]])
    assert fused[0][0] == "b"
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)


def test_ties_keep_first_seen_order() -> None:
    fused = reciprocal_rank_fusion([["x", "y"], ["y", "x"]], k=10)
    assert [item for item, _ in fused] == ["x", "y"]
    assert fused[0][1] == pytest.approx(fused[1][1])


def test_duplicates_within_a_ranking_count_once_at_their_best_rank() -> None:
    assert dict(reciprocal_rank_fusion([["a", "a", "b"]], k=1)) == pytest.approx(
        {"a": 1 / 2, "b": 1 / 4}
    )


def test_small_k_favours_the_top_ranks() -> None:
    # One list puts p first, both put q fourth: q wins with a large k, p with a tiny one.
    rankings = [["p", "a", "b", "q"], ["c", "d", "e", "q"]]
    assert reciprocal_rank_fusion(rankings, k=60)[0][0] == "q"
    assert reciprocal_rank_fusion(rankings, k=1)[0][0] == "p"


def test_empty_inputs_and_bad_k() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=0)
