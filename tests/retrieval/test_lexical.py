"""LexicalIndex: BM25 ranking, structured filters on variants, exclusions, sorting, persistence."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from cartagent.catalog import Product, Variant
from cartagent.retrieval.lexical import Hit, LexicalIndex
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery


def _v(vid: str, price: str, available: bool = True, **options: str) -> Variant:
    return Variant(id=vid, options=options, price=Decimal(price), available=available)


PRODUCTS = [
    Product(
        id="jeans-baggy",
        title="Levi's Women's Baggy High Waist Jeans",
        description="Relaxed denim jeans with a high rise.",
        brand="Levi's",
        category=("Clothing", "Women", "Jeans"),
        attributes={"material": ("denim",), "fit": ("baggy",), "gender": ("women",)},
        variants=(
            _v("jb-28", "99.00", size="28", color="blue"),
            _v("jb-30", "119.00", size="30", color="blue"),
            _v("jb-30-black", "129.00", size="30", color="black", available=False),
            _v("jb-32", "109.00", size="32", color="light blue"),
        ),
        rating=4.6,
        rating_count=210,
    ),
    Product(
        id="jeans-skinny",
        title="Skinny Jeans",
        description="Stretch denim.",
        brand="Acme",
        category=("Clothing", "Women", "Jeans"),
        attributes={"material": ("denim", "elastane"), "fit": ("skinny",)},
        variants=(
            _v("js-30", "39.99", size="30", color="black"),
            _v("js-31", "42.00", size="31", color="blue"),
        ),
        rating=3.9,
        rating_count=40,
    ),
    Product(
        id="tee-red",
        title="Classic Crew T-Shirt",
        description="Soft everyday tee.",
        brand="Basics Co",
        category=("Clothing", "Tops", "T-Shirts"),
        attributes={"material": ("cotton", "polyester")},
        variants=(
            _v("tee-red-m", "15.00", color="red", size="M", material="cotton"),
            _v("tee-red-xl", "18.00", color="red", size="XL", material="polyester"),
            _v("tee-blue-m", "12.00", color="blue", size="M", material="cotton"),
        ),
        rating=4.2,
        rating_count=1000,
    ),
    Product(
        id="hoodie",
        title="Hooded Sweatshirt",
        description="Fleece pullover with a hood. Goes with jeans.",
        brand="Basics Co",
        category=("Clothing", "Tops", "Sweatshirts"),
        attributes={"material": ("cotton",)},
        variants=(_v("hood-m", "35.00", color="grey", size="M"),),
        rating=4.8,
        rating_count=12,
    ),
    Product(
        id="jacket-leather",
        title="Biker Jacket",
        description="A classic.",
        brand="Rider",
        category=("Clothing", "Outerwear", "Jackets"),
        attributes={"material": ("leather",)},
        variants=(_v("bj-m", "250.00", size="M", color="black"),),
    ),
    Product(
        id="jacket-denim",
        title="Denim Jacket",
        description="Jeans jacket.",
        brand="Levi's",
        category=("Clothing", "Outerwear", "Jackets"),
        attributes={"material": ("denim",)},
        variants=(_v("dj-m", "89.00", size="M", color="blue", available=False),),
    ),
    Product(
        id="mug",
        title="Coffee Mug",
        description="Holds coffee.",
        category=("Home", "Kitchen", "Mugs"),
        attributes={"capacity": ("12 oz",)},
    ),
]


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex.build(PRODUCTS)


def ids(hits: list[Hit]) -> list[str]:
    return [h.product.id for h in hits]


def test_title_matches_rank_above_description_matches(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(text="jeans"))
    assert set(ids(hits)[:2]) == {"jeans-baggy", "jeans-skinny"}
    # "jeans" only in the description (hoodie) and description+category-free text (denim jacket)
    assert ids(hits).index("hoodie") > 1
    assert all(h.score > 0 for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert "text: jean" in hits[0].matched


def test_text_that_matches_nothing_returns_nothing(index: LexicalIndex) -> None:
    assert index.search(SearchQuery(text="submarine")) == []


def test_hostile_text_is_just_words(index: LexicalIndex) -> None:
    for text in ['jeans AND OR ( title:"x', "*", "\x00\ufffd", "ジーンズ", "jeans " * 5000]:
        index.search(SearchQuery(text=text))  # never raises
    assert "jeans-baggy" in ids(index.search(SearchQuery(text='title:jeans" (')))


def test_price_filter_applies_to_variants_and_reports_the_variant(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(text="jeans", price=PriceRange(min=Decimal("114"))))
    assert ids(hits) == ["jeans-baggy"]
    hit = hits[0]
    assert hit.variant is not None and hit.variant.price >= 114
    assert hit.variant.id == "jb-30"  # the in-stock one (jb-30-black is sold out)
    assert "price>=114 USD" in hit.matched


def test_price_range_bounds_are_inclusive(index: LexicalIndex) -> None:
    query = SearchQuery(price=PriceRange(min=Decimal("15"), max=Decimal("15.00")))
    hits = index.search(query)
    assert ids(hits) == ["tee-red"]
    assert hits[0].variant is not None and hits[0].variant.id == "tee-red-m"


def test_price_in_another_currency_matches_nothing(index: LexicalIndex) -> None:
    query = SearchQuery(price=PriceRange(max=Decimal("1000"), currency="EUR"))
    assert index.search(query) == []


def test_options_and_price_must_hold_on_the_same_variant(index: LexicalIndex) -> None:
    # red variants cost 15 and 18; the 12.00 one is blue: no red tee under 14.
    query = SearchQuery(options={"color": ["red"]}, price=PriceRange(max=Decimal("14")))
    assert index.search(query) == []
    hits = index.search(
        SearchQuery(options={"colour": ["red"]}, price=PriceRange(max=Decimal("16")))
    )
    assert ids(hits) == ["tee-red"]
    assert hits[0].variant is not None and hits[0].variant.id == "tee-red-m"
    assert "color=red" in hits[0].matched


def test_size_needs_an_exact_value_and_alternatives_are_or(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(category="jeans", options={"size": ["30"]}))
    assert set(ids(hits)) == {"jeans-baggy", "jeans-skinny"}
    assert index.search(SearchQuery(category="jeans", options={"size": ["3"]})) == []
    hits = index.search(SearchQuery(category="jeans", options={"size": ["31", "32"]}))
    assert {h.variant.id for h in hits if h.variant} == {"jb-32", "js-31"}


def test_colour_words_match_inside_longer_values(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(options={"color": ["blue"]}, category="jeans"))
    chosen = {h.product.id: h.variant.id for h in hits if h.variant}
    assert chosen["jeans-skinny"] == "js-31"
    assert chosen["jeans-baggy"] in {"jb-28", "jb-30", "jb-32"}


def test_variant_options_override_catalog_wide_attributes(index: LexicalIndex) -> None:
    # The tee lists cotton and polyester as attributes; only one variant is polyester.
    hits = index.search(SearchQuery(attributes={"material": ["polyester"]}))
    assert ids(hits) == ["tee-red"]
    assert hits[0].variant is not None and hits[0].variant.id == "tee-red-xl"


def test_brand_category_rating_and_availability_filters(index: LexicalIndex) -> None:
    assert set(ids(index.search(SearchQuery(brand="levi's")))) == {"jeans-baggy", "jacket-denim"}
    assert set(ids(index.search(SearchQuery(brand="LEVI'S", category="jackets")))) == {
        "jacket-denim"
    }
    assert set(ids(index.search(SearchQuery(category="Clothing > Outerwear")))) == {
        "jacket-leather",
        "jacket-denim",
    }
    rated = index.search(SearchQuery(min_rating=4.5))
    assert set(ids(rated)) == {"jeans-baggy", "hoodie"}
    assert "rating>=4.5" in rated[0].matched
    in_stock = index.search(SearchQuery(available_only=True), k=50)
    assert "jacket-denim" not in ids(in_stock)  # its only variant is sold out
    assert "mug" not in ids(in_stock)  # no variants: nothing to buy
    assert all(h.variant is not None and h.variant.available for h in in_stock)


def test_attribute_constraint_without_that_name_falls_back_to_text(index: LexicalIndex) -> None:
    query = SearchQuery(
        category="jeans",
        attributes={
            "gender": ["women"],
            "fit": ["baggy"],
            "waist": ["high"],
            "material": ["denim"],
        },
        options={"size": ["30"]},
        price=PriceRange(min=Decimal("114")),
    )
    hits = index.search(query)
    assert ids(hits) == ["jeans-baggy"]
    assert hits[0].variant is not None and hits[0].variant.id == "jb-30"
    assert {"category=jeans", "fit=baggy", "waist=high", "size=30"} <= set(hits[0].matched)


def test_exclusions(index: LexicalIndex) -> None:
    jackets = SearchQuery(category="jackets")
    assert set(ids(index.search(jackets))) == {"jacket-leather", "jacket-denim"}
    no_leather = jackets.model_copy(
        update={"exclude": [Exclusion(field="material", value="leather")]}
    )
    hits = index.search(no_leather)
    assert ids(hits) == ["jacket-denim"]
    assert "not material=leather" in hits[0].matched
    anywhere = jackets.model_copy(update={"exclude": [Exclusion(field=None, value="leather")]})
    assert ids(index.search(anywhere)) == ["jacket-denim"]
    # "without a hood" drops the hooded sweatshirt (stemmed title match)
    tops = index.search(SearchQuery(category="tops", exclude=[Exclusion(field=None, value="hood")]))
    assert ids(tops) == ["tee-red"]


def test_exclusion_on_an_option_drops_variants_not_products(index: LexicalIndex) -> None:
    query = SearchQuery(text="t-shirt", exclude=[Exclusion(field="color", value="red")])
    hits = index.search(query)
    assert ids(hits) == ["tee-red"]
    assert hits[0].variant is not None and hits[0].variant.id == "tee-blue-m"
    every_colour = SearchQuery(
        text="t-shirt",
        exclude=[Exclusion(field="color", value="red"), Exclusion(field="color", value="blue")],
    )
    assert index.search(every_colour) == []


def test_exclusion_without_field_checks_options_too(index: LexicalIndex) -> None:
    hits = index.search(
        SearchQuery(text="t-shirt", exclude=[Exclusion(field=None, value="polyester")])
    )
    assert hits[0].variant is not None
    assert hits[0].variant.options.get("material") != "polyester"


def test_text_picks_the_variant_it_names(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(text="blue t-shirt"))
    assert hits[0].product.id == "tee-red"
    assert hits[0].variant is not None and hits[0].variant.id == "tee-blue-m"


def test_sort_by_price_uses_the_chosen_variant(index: LexicalIndex) -> None:
    cheap = index.search(SearchQuery(category="clothing", sort="price_asc"), k=3)
    assert ids(cheap) == ["tee-red", "hoodie", "jeans-skinny"]
    assert [h.variant.price for h in cheap if h.variant] == [
        Decimal("12.00"),
        Decimal("35.00"),
        Decimal("39.99"),
    ]
    dear = index.search(SearchQuery(category="clothing", sort="price_desc"), k=2)
    assert ids(dear) == ["jacket-leather", "jeans-baggy"]
    assert dear[1].variant is not None and dear[1].variant.id == "jb-30"  # 129 is sold out
    # A price filter chooses among variants before sorting.
    capped = index.search(
        SearchQuery(category="jeans", sort="price_desc", price=PriceRange(max=Decimal("110")))
    )
    assert [(h.product.id, h.variant.id if h.variant else None) for h in capped] == [
        ("jeans-baggy", "jb-32"),
        ("jeans-skinny", "js-31"),
    ]


def test_sort_by_price_is_exact_beyond_the_first_page() -> None:
    many = [
        Product(
            id=f"p{i}",
            title=f"Widget {i}",
            variants=(
                _v(f"p{i}-a", str(1000 - i), color="red"),
                _v(f"p{i}-b", str(i + 1), color="blue"),
            ),
        )
        for i in range(300)
    ]
    index = LexicalIndex.build(many)
    red = index.search(SearchQuery(options={"color": ["red"]}, sort="price_asc"), k=3)
    assert [h.variant.id for h in red if h.variant] == ["p299-a", "p298-a", "p297-a"]
    text = index.search(SearchQuery(text="widget", sort="price_desc"), k=2)
    assert [h.variant.id for h in text if h.variant] == ["p0-a", "p1-a"]
    assert all(h.score > 0 for h in text)  # BM25 scores are kept in other orders


def test_sort_by_rating(index: LexicalIndex) -> None:
    hits = index.search(SearchQuery(category="clothing", sort="rating"), k=3)
    assert ids(hits) == ["hoodie", "jeans-baggy", "tee-red"]


def test_empty_query_browses_with_filters(index: LexicalIndex) -> None:
    everything = index.search(SearchQuery(), k=100)
    assert set(ids(everything)) == {p.id for p in PRODUCTS}
    assert all(h.score == 0.0 for h in everything)
    assert ids(everything)[0] == "hoodie"  # browsing ranks by rating
    cheap = index.search(SearchQuery(price=PriceRange(max=Decimal("40"))), k=100)
    assert set(ids(cheap)) == {"jeans-skinny", "tee-red", "hoodie"}
    assert index.search(SearchQuery(), k=0) == []
    assert len(index.search(SearchQuery(), k=2)) == 2


def test_timings_are_reported(index: LexicalIndex) -> None:
    timings: dict[str, float] = {}
    index.search(SearchQuery(text="jeans"), timings=timings)
    assert set(timings) == {"lexical", "filter"}
    assert all(v >= 0 for v in timings.values())


def test_get_returns_stored_products(index: LexicalIndex) -> None:
    assert index.get("jeans-baggy") == PRODUCTS[0]
    assert index.get("nope") is None
    assert len(index) == len(PRODUCTS)


def test_persisted_index_reopens(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    built = LexicalIndex.build(PRODUCTS, folder)
    assert built.path == folder
    expected = ids(built.search(SearchQuery(text="jeans", price=PriceRange(max=Decimal("100")))))
    reopened = LexicalIndex.open(folder)
    assert len(reopened) == len(PRODUCTS)
    assert reopened.get("tee-red") == PRODUCTS[2]
    query = SearchQuery(text="jeans", price=PriceRange(max=Decimal("100")))
    assert ids(reopened.search(query)) == expected
    assert set(expected[:2]) == {"jeans-baggy", "jeans-skinny"}
    # building again in the same folder replaces the index
    LexicalIndex.build(PRODUCTS[:2], folder)
    assert len(LexicalIndex.open(folder)) == 2


def test_open_refuses_a_folder_without_an_index(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LexicalIndex.open(tmp_path)


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="more than once"):
        LexicalIndex.build([PRODUCTS[0], PRODUCTS[0]])


def test_build_streams_any_iterable() -> None:
    index = LexicalIndex.build(p for p in PRODUCTS)
    assert len(index) == len(PRODUCTS)


def test_screening_keeps_every_product_the_exact_check_accepts() -> None:
    from cartagent.bench.search import bench_queries
    from cartagent.catalog import synthetic_catalog
    from cartagent.retrieval import rules
    from cartagent.retrieval.filters import Plan, Words, analyzer, check

    catalog = list(synthetic_catalog(300, seed=7))
    index = LexicalIndex.build(catalog)
    words = Words(analyzer())
    ids = [p.id for p in catalog] + ["no-such-product"]
    kept_fewer = 0
    for query in [rules.parse(r) for r in bench_queries(60, seed=3)]:
        screened = index.screened(query, ids)
        plan = Plan.of(query, words)
        matching = {p.id for p in catalog if check(plan, p, 0.0, words) is not None}
        assert matching <= set(screened)
        assert "no-such-product" not in screened
        assert all(screened[i].id == i for i in matching)
        kept_fewer += len(screened) < len(catalog)
    assert kept_fewer > 30
    assert index.screened(SearchQuery(text="x"), []) == {}


def test_either_spelling_finds_a_product_written_with_the_other() -> None:
    from cartagent.catalog import Variant

    bottle = Product(
        id="bottle",
        title="Steel Water Bottle",
        attributes={"material": ("aluminium",)},
        variants=(Variant(id="b-grey", options={"colour": "grey"}, price=Decimal("20")),),
    )
    mug = Product(
        id="mug",
        title="Gray Mug",
        variants=(Variant(id="m", options={"color": "gray"}, price=Decimal("9")),),
    )
    index = LexicalIndex.build([bottle, mug])

    def found(query: SearchQuery) -> set[str]:
        return {h.product.id for h in index.search(query, 5)}

    assert found(SearchQuery(options={"color": ["gray"]})) == {"bottle", "mug"}
    assert found(SearchQuery(options={"color": ["grey"]})) == {"bottle", "mug"}
    assert found(SearchQuery(text="grey")) == {"bottle", "mug"}
    assert found(SearchQuery(attributes={"material": ["aluminum"]})) == {"bottle"}


def test_equal_scores_rank_in_catalog_order_on_every_build() -> None:
    """Ties are ordered by where the documents sit in the index; a writer on several threads
    deals them out to segments by timing, which reordered tied hits from one run to the next."""
    twins = [
        Product(id=f"mug-{n:03d}", title="Enamel Mug", description="A camping mug.", variants=())
        for n in range(300)
    ]
    for _ in range(3):
        hits = LexicalIndex.build(twins).search(SearchQuery(text="enamel mug"), 300)
        assert [h.product.id for h in hits] == [p.id for p in twins]
