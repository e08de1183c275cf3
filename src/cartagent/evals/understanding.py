"""How well a query-understanding model turns requests into ``SearchQuery``.

Two measures: on the project's labelled set (JSON validity against the published schema,
field-level precision/recall/F1, exact matches, price-constraint exactness), and agreement
with what real shoppers typed for WebShop instructions (token F1 between the understood query
and the closest human query).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from ..retrieval import SearchQuery, search_query_json_schema
from .scoring import f1, field_scores, precision, recall

Understander = Callable[..., SearchQuery]

_STOP_WORDS = (
    "a an and are as at be by for from i im in is it looking me my need of on or please some "
    "that the this to want with would you like buy get find"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


@dataclass(frozen=True)
class UnderstandingReport:
    cases: int
    valid_json: int
    exact: int
    tp: int
    fp: int
    fn: int
    price_cases: int
    price_exact: int

    @property
    def precision(self) -> float:
        return precision(self.tp, self.fp, self.fn)

    @property
    def recall(self) -> float:
        return recall(self.tp, self.fp, self.fn)

    @property
    def f1(self) -> float:
        return f1(self.tp, self.fp, self.fn)


@dataclass(frozen=True)
class AgreementReport:
    instructions: int
    mean_f1: float
    mean_precision: float
    mean_recall: float


def load_cases(path: Path | None = None) -> list[dict[str, Any]]:
    """The labelled set: one ``{"request", "context", "expected"}`` object per line."""
    if path is None:
        text = (resources.files("cartagent.evals") / "data" / "understanding.jsonl").read_text(
            encoding="utf-8"
        )
    else:
        text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def score_set(understand: Understander, cases: Sequence[dict[str, Any]]) -> UnderstandingReport:
    """Run ``understand`` on every labelled case and score it field by field."""
    validator = jsonschema.Draft7Validator(search_query_json_schema())
    valid = exact = tp = fp = fn = price_cases = price_exact = 0
    for case in cases:
        expected = SearchQuery.model_validate(case["expected"])
        got = understand(case["request"], context=case.get("context", []))
        if validator.is_valid(json.loads(got.model_dump_json())):
            valid += 1
        t, p, n = field_scores(expected, got)
        tp, fp, fn = tp + t, fp + p, fn + n
        exact += int(p == 0 and n == 0)
        if expected.price is not None:
            price_cases += 1
            price_exact += int(_price(expected) == _price(got))
    return UnderstandingReport(len(cases), valid, exact, tp, fp, fn, price_cases, price_exact)


def _price(query: SearchQuery) -> tuple[Any, ...] | None:
    if query.price is None:
        return None
    return (query.price.min, query.price.max, query.price.currency.upper())


def _tokens(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP}


def query_words(query: SearchQuery) -> set[str]:
    """Every word the understood query would search with."""
    parts = [query.text, query.category or "", query.brand or ""]
    for table in (query.attributes, query.options):
        for values in table.values():
            parts.extend(values)
    return _tokens(" ".join(parts))


def webshop_agreement(
    understand: Understander, path: Path, *, limit: int | None = None
) -> AgreementReport:
    """Token agreement with the best-matching human query for each WebShop instruction."""
    data: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))
    items = list(data.items())[:limit] if limit else list(data.items())
    scores: list[tuple[float, float, float]] = []
    for instruction, human_queries in items:
        got = query_words(understand(instruction))
        best = (0.0, 0.0, 0.0)
        for human in human_queries:
            want = _tokens(human)
            hit = len(got & want)
            p = hit / len(got) if got else 0.0
            r = hit / len(want) if want else 0.0
            score = 2 * p * r / (p + r) if p + r else 0.0
            best = max(best, (score, p, r))
        scores.append(best)
    count = len(scores) or 1
    return AgreementReport(
        instructions=len(scores),
        mean_f1=sum(s[0] for s in scores) / count,
        mean_precision=sum(s[1] for s in scores) / count,
        mean_recall=sum(s[2] for s in scores) / count,
    )
