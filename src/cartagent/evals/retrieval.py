"""Retrieval quality on labelled requests: recall@10, nDCG@10, MRR, zero-hit queries, latency.

The labelled set (``data/retrieval_tau.jsonl`` for the tau-bench store) holds one object per line::

    {"request": "red running shoes size 8", "group": "options",
     "relevant": [{"product": "Running Shoes", "options": {"color": "red", "size": "8"}}]}

``group`` names the kind of request (plain, paraphrase, options, price, exclusion, sort, typo,
hard); ``note`` may say why a label is what it is. Each criterion of ``relevant`` names a product
by title or id (case-insensitive; a title several products share names them all) and may
constrain the variant: ``options`` (name -> value, or a list of alternative values; a name the
variant lacks is looked up in the product's attributes), ``exclude`` (name -> unwanted values),
``price`` (inclusive ``min``/``max`` on the variant's price) and ``available`` (in stock).
Labels are written from the catalog, never from what a search returned, and :func:`judge`
refuses a criterion that no variant of the catalog meets, so the set cannot silently rot.

Grading the hit at each rank (the product, with the variant the retriever chose for it):

* **2**: a criterion names the product and the hit's variant meets all its constraints (no
  constraints: any variant);
* **1**: a criterion names the product but the hit's variant misses its constraints (another
  variant of the product would have met them);
* **0**: any other product, and a product already listed higher up.

Metrics at ``k`` (10): recall@k is the share of relevant products (grade >= 1) in the top k;
nDCG@k takes the grades as gains (linear, as trec_eval does) with the ``log2(rank + 1)``
discount, over the DCG of the ideal list (every relevant product at grade 2); MRR averages
``1 / rank`` of the first hit of grade >= 1. What is graded is what the shopper is shown: the
products that match every constraint, then the near misses a search adds when fewer than k
match (each says what it breaks); a zero-hit query is one where nothing matched every
constraint. Without judgments recall and nDCG are 0.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog import Product, Variant
from ..errors import ConfigurationError
from ..retrieval import Hit, Searcher, SearchQuery, SearchResult, Understander

if TYPE_CHECKING:
    from ..retrieval import Embedder

__all__ = [
    "GROUPS",
    "Answer",
    "Criterion",
    "Judgments",
    "K",
    "QueryOutcome",
    "RetrievalCase",
    "System",
    "SystemReport",
    "dcg_at",
    "evaluate_retrieval",
    "judge",
    "load_retrieval_cases",
    "ndcg_at",
    "raw_words",
    "recall_at",
    "reciprocal_rank",
    "shown",
    "standard_systems",
]

K = 10
GROUPS = ("plain", "paraphrase", "options", "price", "exclusion", "sort", "typo", "hard")
"""The request groups of the packaged set, in the order reports list them."""

_CASE_KEYS = frozenset({"request", "group", "relevant", "note"})
_CRITERION_KEYS = frozenset({"product", "options", "exclude", "price", "available"})


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Criterion:
    """What makes a product, and which of its variants, relevant to a labelled request."""

    product: str
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    price_min: Decimal | None = None
    price_max: Decimal | None = None
    available: bool = False

    def names(self, product: Product) -> bool:
        """Whether this criterion is about ``product`` (by title or id)."""
        wanted = _norm(self.product)
        return wanted in (_norm(product.title), _norm(product.id))

    def admits(self, product: Product, variant: Variant | None) -> bool:
        """Whether ``variant`` (``None``: the product alone) meets every constraint."""
        if variant is None and (
            self.price_min is not None or self.price_max is not None or self.available
        ):
            return False
        if variant is not None:
            if self.available and not variant.available:
                return False
            if self.price_min is not None and variant.price < self.price_min:
                return False
            if self.price_max is not None and variant.price > self.price_max:
                return False
        for key, wanted in self.options.items():
            if not _values(product, variant, key) & {_norm(v) for v in wanted}:
                return False
        for key, unwanted in self.exclude.items():
            if _values(product, variant, key) & {_norm(v) for v in unwanted}:
                return False
        return True


def _values(product: Product, variant: Variant | None, key: str) -> set[str]:
    """The variant's value under ``key``, else the product's attribute values under it."""
    name = _norm(key)
    if variant is not None:
        own = {_norm(v) for k, v in variant.options.items() if _norm(k) == name}
        if own:
            return own
    return {_norm(v) for k, vs in product.attributes.items() if _norm(k) == name for v in vs}


@dataclass(frozen=True)
class RetrievalCase:
    """One labelled request and the criteria of the products that answer it."""

    request: str
    group: str
    relevant: tuple[Criterion, ...]
    note: str = ""


def load_retrieval_cases(path: Path | None = None) -> list[RetrievalCase]:
    """The labelled set at ``path`` (default: the packaged tau-bench set), validated."""
    if path is None:
        where = "retrieval_tau.jsonl"
        text = (resources.files("cartagent.evals") / "data" / where).read_text(encoding="utf-8")
    else:
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigurationError(f"cannot read the labelled set {path}: {error}") from error
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            cases.append(_case(line, f"{where}:{number}"))
    if not cases:
        raise ConfigurationError(f"{where}: no labelled requests")
    return cases


def _case(line: str, where: str) -> RetrievalCase:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigurationError(f"{where}: not JSON: {error}") from error
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: expected an object")
    extra = set(data) - _CASE_KEYS
    if extra:
        raise ConfigurationError(f"{where}: unknown keys {sorted(extra)}")
    request, group, note = data.get("request"), data.get("group", ""), data.get("note", "")
    relevant = data.get("relevant")
    if not isinstance(request, str) or not request.strip():
        raise ConfigurationError(f"{where}: 'request' must be a non-empty string")
    if not isinstance(group, str) or not isinstance(note, str):
        raise ConfigurationError(f"{where}: 'group' and 'note' must be strings")
    if not isinstance(relevant, list) or not relevant:
        raise ConfigurationError(f"{where}: 'relevant' must be a non-empty list of criteria")
    criteria = tuple(_criterion(item, where) for item in relevant)
    return RetrievalCase(request=request, group=group, relevant=criteria, note=note)


def _criterion(data: Any, where: str) -> Criterion:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: a criterion must be an object")
    extra = set(data) - _CRITERION_KEYS
    if extra:
        raise ConfigurationError(f"{where}: unknown criterion keys {sorted(extra)}")
    product = data.get("product")
    if not isinstance(product, str) or not product.strip():
        raise ConfigurationError(f"{where}: a criterion needs a 'product' name")
    price = data.get("price", {})
    if not isinstance(price, dict) or set(price) - {"min", "max"}:
        raise ConfigurationError(f"{where}: 'price' takes only 'min' and 'max'")
    available = data.get("available", False)
    if not isinstance(available, bool):
        raise ConfigurationError(f"{where}: 'available' must be true or false")
    return Criterion(
        product=product,
        options=_table(data.get("options", {}), "options", where),
        exclude=_table(data.get("exclude", {}), "exclude", where),
        price_min=_amount(price.get("min"), where),
        price_max=_amount(price.get("max"), where),
        available=available,
    )


def _table(data: Any, name: str, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: {name!r} must map names to values")
    out: dict[str, tuple[str, ...]] = {}
    for key, value in data.items():
        values = [value] if isinstance(value, str) else value
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) and v.strip() for v in values)
        ):
            raise ConfigurationError(f"{where}: {name}[{key!r}] must be a string or strings")
        out[key] = tuple(values)
    return out


def _amount(value: Any, where: str) -> Decimal | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigurationError(f"{where}: price bounds must be numbers")
    try:
        amount = Decimal(str(value))
    except InvalidOperation as error:
        raise ConfigurationError(f"{where}: {value!r} is not a price") from error
    if not amount.is_finite() or amount < 0:
        raise ConfigurationError(f"{where}: {value!r} is not a price")
    return amount


@dataclass(frozen=True)
class Judgments:
    """A case resolved against a catalog: the criteria naming each relevant product (by id)."""

    criteria: Mapping[str, tuple[Criterion, ...]]

    @property
    def relevant(self) -> int:
        return len(self.criteria)

    def ideal(self) -> list[int]:
        """The grades of the best possible list: every relevant product with a right variant."""
        return [2] * self.relevant

    def grade(self, hit: Hit) -> int:
        """2, 1 or 0 for ``hit`` on its own (see the module notes)."""
        criteria = self.criteria.get(hit.product.id, ())
        if not criteria:
            return 0
        return 2 if any(c.admits(hit.product, hit.variant) for c in criteria) else 1

    def grades(self, hits: Sequence[Hit]) -> list[int]:
        """The grade at each rank; a product listed again earns nothing the second time."""
        seen: set[str] = set()
        out = []
        for hit in hits:
            out.append(0 if hit.product.id in seen else self.grade(hit))
            seen.add(hit.product.id)
        return out


def judge(cases: Sequence[RetrievalCase], products: Iterable[Product]) -> list[Judgments]:
    """Resolve every case's criteria against ``products``.

    Raises :class:`ConfigurationError` for a criterion that names no product, or whose product
    has no variant meeting its constraints: the label no longer fits the catalog.
    """
    by_name: dict[str, list[Product]] = {}
    for product in products:
        by_name.setdefault(_norm(product.title), []).append(product)
        if _norm(product.id) != _norm(product.title):
            by_name.setdefault(_norm(product.id), []).append(product)
    out = []
    for case in cases:
        criteria: dict[str, list[Criterion]] = {}
        for criterion in case.relevant:
            named = by_name.get(_norm(criterion.product), [])
            if not named:
                raise ConfigurationError(
                    f"{case.request!r}: no product in the catalog is named {criterion.product!r}"
                )
            if not any(criterion.admits(p, v) for p in named for v in (p.variants or (None,))):
                raise ConfigurationError(
                    f"{case.request!r}: no variant of {criterion.product!r} meets {criterion}"
                )
            for product in named:
                criteria.setdefault(product.id, []).append(criterion)
        out.append(Judgments({pid: tuple(cs) for pid, cs in criteria.items()}))
    return out


# ---------------------------------------------------------------- metrics


def dcg_at(grades: Sequence[int], k: int = K) -> float:
    """Discounted cumulative gain of the first ``k`` grades (gain = grade, log2 discount)."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(grades[:k], 1))


def ndcg_at(grades: Sequence[int], ideal: Sequence[int], k: int = K) -> float:
    """``dcg_at(grades)`` over the DCG of ``ideal`` sorted best first; 0.0 when that is 0."""
    best = dcg_at(sorted(ideal, reverse=True), k)
    return dcg_at(grades, k) / best if best > 0 else 0.0


def recall_at(grades: Sequence[int], relevant: int, k: int = K) -> float:
    """The share of the ``relevant`` products among the first ``k`` (grade >= 1); 0.0 if none.

    ``grades`` must count each product once (as :meth:`Judgments.grades` does).
    """
    if relevant <= 0:
        return 0.0
    return sum(1 for g in grades[:k] if g > 0) / relevant


def reciprocal_rank(grades: Sequence[int], k: int = K) -> float:
    """``1 / rank`` of the first grade >= 1 among the first ``k``, else 0.0."""
    for rank, g in enumerate(grades[:k], 1):
        if g > 0:
            return 1.0 / rank
    return 0.0


# ---------------------------------------------------------------- systems and runs


def raw_words(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
    """The request as free text only: retrieval without query understanding."""
    return SearchQuery(text=request)


@dataclass(frozen=True)
class Answer:
    """What a system showed for a request: the products that match every constraint, then
    the near misses it offered after them."""

    matches: Sequence[Hit]
    near_misses: Sequence[Hit] = ()


def shown(result: SearchResult) -> Answer:
    """A search's answer as a shopper sees it: hits, then near misses."""
    return Answer(result.hits, [near.hit for near in result.near_misses])


@dataclass(frozen=True)
class System:
    """A named way of answering a request with ranked hits."""

    name: str
    search: Callable[[str], Answer]


def _searching(searcher: Searcher, k: int) -> Callable[[str], Answer]:
    def search(request: str) -> Answer:
        return shown(searcher.search(request, k))

    return search


def standard_systems(
    products: Sequence[Product],
    understand: Understander,
    *,
    embedder: Embedder | None = None,
    k: int = K,
) -> list[System]:
    """The systems compared on the labelled set, indexing ``products``.

    With ``embedder``: ``lexical``, ``dense`` and ``hybrid`` (RRF of both) on the raw words,
    ``hybrid+understanding`` (``understand``'s structured query, hybrid) and
    ``hybrid+grounded`` (that query placed on the catalog's own options and values, as the
    assistant searches). Without: ``lexical``, ``lexical+understanding``, ``lexical+grounded``.
    """
    from ..retrieval import CatalogVocabulary, GroundedUnderstander, LexicalIndex

    lexical = LexicalIndex.build(products)
    grounded = GroundedUnderstander(understand, CatalogVocabulary(products))
    if embedder is None:
        return [
            System("lexical", _searching(Searcher(lexical, raw_words), k)),
            System("lexical+understanding", _searching(Searcher(lexical, understand), k)),
            System("lexical+grounded", _searching(Searcher(lexical, grounded), k)),
        ]
    from ..retrieval import DenseIndex

    dense = DenseIndex.build(products, embedder)
    return [
        System("lexical", _searching(Searcher(lexical, raw_words), k)),
        System("dense", _searching(Searcher(dense, raw_words), k)),
        System("hybrid", _searching(Searcher(lexical, raw_words, dense=dense), k)),
        System(
            "hybrid+understanding",
            _searching(Searcher(lexical, understand, dense=dense), k),
        ),
        System("hybrid+grounded", _searching(Searcher(lexical, grounded, dense=dense), k)),
    ]


@dataclass(frozen=True)
class QueryOutcome:
    """How one system answered one labelled request."""

    request: str
    group: str
    relevant: int
    grades: tuple[int, ...]
    hits: tuple[tuple[str, str | None], ...]
    """``(product title, variant id)`` per rank."""
    matches: int
    """How many of ``hits`` matched every constraint (the rest are near misses)."""
    recall: float
    ndcg: float
    rr: float
    ms: float


@dataclass(frozen=True)
class SystemReport:
    """A system's outcomes over the labelled set and their means."""

    name: str
    outcomes: tuple[QueryOutcome, ...]
    k: int = K

    @property
    def queries(self) -> int:
        return len(self.outcomes)

    def _mean(self, values: Iterable[float]) -> float:
        return sum(values) / self.queries if self.outcomes else 0.0

    @property
    def recall(self) -> float:
        return self._mean(o.recall for o in self.outcomes)

    @property
    def ndcg(self) -> float:
        return self._mean(o.ndcg for o in self.outcomes)

    @property
    def mrr(self) -> float:
        return self._mean(o.rr for o in self.outcomes)

    @property
    def zero_hits(self) -> int:
        return sum(1 for o in self.outcomes if not o.matches)

    @property
    def mean_ms(self) -> float:
        return self._mean(o.ms for o in self.outcomes)

    def groups(self) -> list[str]:
        """The groups present, known ones in :data:`GROUPS` order, then the others sorted."""
        present = {o.group for o in self.outcomes}
        return [g for g in GROUPS if g in present] + sorted(present - set(GROUPS))

    def only(self, group: str) -> SystemReport:
        """The same report restricted to one group."""
        kept = tuple(o for o in self.outcomes if o.group == group)
        return SystemReport(self.name, kept, self.k)

    def summary(self) -> dict[str, float | int]:
        """The means as a JSON-ready mapping."""
        return {
            "queries": self.queries,
            f"recall@{self.k}": round(self.recall, 4),
            f"ndcg@{self.k}": round(self.ndcg, 4),
            "mrr": round(self.mrr, 4),
            "zero_hit_queries": self.zero_hits,
            "mean_ms": round(self.mean_ms, 3),
        }


def evaluate_retrieval(
    systems: Sequence[System],
    cases: Sequence[RetrievalCase],
    products: Iterable[Product],
    *,
    k: int = K,
) -> list[SystemReport]:
    """Judge ``cases`` against ``products`` (see :func:`judge`), then run every system on them.

    Each system answers the first request once, untimed, before the measured run, so lazy
    loading does not count as query latency.
    """
    judgments = judge(cases, products)
    reports = []
    for system in systems:
        if cases:
            system.search(cases[0].request)
        outcomes = []
        for case, judged in zip(cases, judgments, strict=True):
            started = time.perf_counter()
            answer = system.search(case.request)
            ms = (time.perf_counter() - started) * 1000
            hits = [*answer.matches, *answer.near_misses][:k]
            grades = judged.grades(hits)
            outcomes.append(
                QueryOutcome(
                    request=case.request,
                    group=case.group,
                    relevant=judged.relevant,
                    grades=tuple(grades),
                    hits=tuple(
                        (h.product.title, h.variant.id if h.variant else None) for h in hits
                    ),
                    matches=min(len(answer.matches), k),
                    recall=recall_at(grades, judged.relevant, k),
                    ndcg=ndcg_at(grades, judged.ideal(), k),
                    rr=reciprocal_rank(grades, k),
                    ms=ms,
                )
            )
        reports.append(SystemReport(system.name, tuple(outcomes), k))
    return reports
