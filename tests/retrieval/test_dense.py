"""DenseIndex with the hashing test embedder: exact and HNSW agree, filters hold, k is respected."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from cartagent.catalog import Product, Variant, synthetic_catalog
from cartagent.retrieval.dense import DenseIndex
from cartagent.retrieval.embeddings import query_text
from cartagent.retrieval.filters import Hit
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery
from cartagent.testing import HashingEmbedder

pytest.importorskip("numpy")
pytest.importorskip("faiss")


def _v(vid: str, price: str, available: bool = True, **options: str) -> Variant:
    return Variant(id=vid, options=options, price=Decimal(price), available=available)


PRODUCTS = [
    Product(
        id="shoe-run",
        title="Trail Running Shoes",
        brand="Stride",
        category=("Shoes", "Running"),
        attributes={"material": ("mesh",)},
        variants=(
            _v("sr-9-red", "89.00", size="9", color="red"),
            _v("sr-10-red", "89.00", size="10", color="red", available=False),
            _v("sr-10-blue", "79.00", size="10", color="blue"),
        ),
        rating=4.5,
    ),
    Product(
        id="shoe-leather",
        title="Leather Running Shoes",
        brand="Classic",
        category=("Shoes", "Running"),
        attributes={"material": ("leather",)},
        variants=(_v("sl-10", "140.00", size="10", color="brown"),),
        rating=4.1,
    ),
    Product(
        id="bag-laptop",
        title="Laptop Bag",
        brand="Carry",
        category=("Bags",),
        variants=(_v("bl", "45.00", color="black"),),
    ),
    Product(
        id="mug",
        title="Coffee Mug",
        category=("Kitchen",),
        variants=(_v("mug-1", "9.00", color="white"),),
    ),
]


@pytest.fixture(scope="module")
def exact() -> DenseIndex:
    return DenseIndex.build(PRODUCTS, HashingEmbedder())


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.product.id for h in hits]


def test_nearest_product_first(exact: DenseIndex) -> None:
    assert not exact.approximate and len(exact) == 4
    assert ids(exact.search(SearchQuery(text="laptop bag"), 1)) == ["bag-laptop"]
    hits = exact.search(SearchQuery(text="running shoes"), 2)
    assert set(ids(hits)) == {"shoe-run", "shoe-leather"}
    assert hits[0].score >= hits[1].score
    assert exact.get("mug") is PRODUCTS[3] and exact.get("nope") is None


def test_k_is_respected(exact: DenseIndex) -> None:
    query = SearchQuery(text="shoes")
    assert len(exact.search(query, 3)) == 3
    assert len(exact.search(query, 100)) == 4  # exhausted: every product, no more
    assert exact.search(query, 0) == []


def test_structured_filters_are_exact(exact: DenseIndex) -> None:
    wanted = SearchQuery(
        text="running shoes", options={"size": ["10"]}, available_only=True, exclude=[]
    )
    hits = exact.search(wanted, 5)
    by_id = {h.product.id: h for h in hits}
    assert by_id["shoe-run"].variant is not None
    assert by_id["shoe-run"].variant.id == "sr-10-blue"  # the red 10 is out of stock
    cheap = exact.search(SearchQuery(text="running shoes", price=PriceRange(max=Decimal("100"))), 5)
    assert ids(cheap)[0] == "shoe-run" and "shoe-leather" not in ids(cheap)
    assert all(h.variant is not None and h.variant.price <= 100 for h in cheap)
    no_leather = exact.search(
        SearchQuery(text="running shoes", exclude=[Exclusion(field="material", value="leather")]),
        5,
    )
    assert "shoe-leather" not in ids(no_leather)
    # The filter may leave fewer than k: the nearest non-matching products are not padding.
    red = exact.search(SearchQuery(text="shoes", options={"color": ["red"]}), 5)
    assert ids(red) == ["shoe-run"] and "color=red" in red[0].matched


def test_sort_orders_the_matches(exact: DenseIndex) -> None:
    hits = exact.search(SearchQuery(text="shoes", sort="price_asc"), 2)
    prices = [h.variant.price for h in hits if h.variant is not None]
    assert prices == sorted(prices)


def test_min_score_drops_far_products() -> None:
    index = DenseIndex.build(PRODUCTS, HashingEmbedder(), min_score=0.3)
    assert ids(index.search(SearchQuery(text="coffee mug"), 4)) == ["mug"]


def test_nothing_to_embed_finds_nothing(exact: DenseIndex) -> None:
    timings: dict[str, float] = {}
    assert exact.search(SearchQuery(sort="price_asc"), 5, timings=timings) == []
    assert set(timings) == {"embed", "dense", "filter"}


def test_query_text_carries_structured_words() -> None:
    query = SearchQuery(text="t-shirt", brand="Acme", options={"color": ["red"]})
    assert query_text(query) == "t-shirt Acme red"


def test_exact_and_hnsw_agree() -> None:
    catalog = list(synthetic_catalog(300, seed=3))
    embedder = HashingEmbedder(dim=64)
    exact = DenseIndex.build(catalog, embedder)
    hnsw = DenseIndex.build(catalog, embedder, exact_below=0, ef_search=256)
    assert hnsw.approximate and not exact.approximate
    for product in catalog[:20]:
        query = SearchQuery(text=product.title)
        a, b = exact.search(query, 5), hnsw.search(query, 5)
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)
        assert ids(a)[0] == ids(b)[0] or a[0].score == pytest.approx(a[1].score, abs=1e-5)
    filtered = SearchQuery(text=catalog[0].title, available_only=True)
    assert ids(exact.search(filtered, 10)) == ids(hnsw.search(filtered, 10))


def test_duplicate_ids_are_an_error() -> None:
    with pytest.raises(ValueError, match="more than once"):
        DenseIndex.build([PRODUCTS[0], PRODUCTS[0]], HashingEmbedder())


def test_empty_catalog() -> None:
    index = DenseIndex.build([], HashingEmbedder(), exact_below=0)
    assert len(index) == 0 and index.search(SearchQuery(text="x"), 3) == []


def _searches(index: DenseIndex, queries: Sequence[SearchQuery]) -> list[list[tuple[str, ...]]]:
    return [
        [(h.product.id, h.variant.id if h.variant else "", *h.matched) for h in index.search(q, 10)]
        for q in queries
    ]


def test_a_lexical_screen_finds_what_one_by_one_lookups_find_and_parses_fewer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cartagent.bench.search import bench_queries
    from cartagent.retrieval import lexical as lexical_module
    from cartagent.retrieval import rules
    from cartagent.retrieval.lexical import LexicalIndex
    from cartagent.retrieval.product_vectors import embed_products

    catalog = list(synthetic_catalog(400, seed=5))
    embedder = HashingEmbedder(dim=64)
    vectors = embed_products(catalog, embedder)
    queries = [rules.parse(r) for r in bench_queries(80, seed=2)]
    assert sum(1 for q in queries if q.options or q.price or q.brand) > 30  # many filtered
    parsed = {"count": 0}
    validate = Product.model_validate_json

    def counted(raw: bytes | str) -> Product:
        parsed["count"] += 1
        return validate(raw)

    monkeypatch.setattr(Product, "model_validate_json", counted)
    monkeypatch.setattr(lexical_module, "_CACHE_SIZE", 0)  # count every read
    found, parses = [], []
    for screen in (False, True):
        lexical = LexicalIndex.build(catalog)  # its own cache of parsed products
        index = DenseIndex.from_vectors(
            [p.id for p in catalog], vectors, embedder, products=lexical.get
        )
        if screen:
            index.screen = lexical.screened
        parsed["count"] = 0
        found.append(_searches(index, queries))
        parses.append(parsed["count"])
    assert found[0] == found[1]
    assert any(found[1]) and parses[1] < parses[0] / 2
