"""Reciprocal rank fusion: several rankings of ids in, one ranking out.

RRF (Cormack, Clarke and Büttcher, 2009) scores an id ``sum(1 / (k + rank))`` over the rankings
that contain it (ranks start at 1). It needs no score calibration between retrievers (BM25 and
cosine similarity live on different scales), which is why it fuses lexical and dense hits.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["reciprocal_rank_fusion"]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = 60
) -> list[tuple[str, float]]:
    """Fuse ``rankings`` (each best first) into ``(id, score)`` pairs, best first.

    An id repeated within one ranking counts at its first (best) rank only. Ties keep the
    order in which ids were first seen (earlier rankings first), so the result is
    deterministic. ``k`` (> 0) damps the weight of the top ranks.
    """
    if k <= 0:
        raise ValueError(f"k must be positive, not {k}")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
