"""Spanish, French and German request templates, for the categories with a known noun.

Kept small on purpose: a noun per category (in the number shops use it in), colours with their
agreement, "for women/men", and prices in euros. The gold uses the same canonical English
values as every other family (``category: "jacket"``, ``color: "red"``, currency ``EUR``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .listing import Facet, Listing, Offer
from .wording import Ask, Draft, TemplateFn, ceiling_price, floor_price

__all__ = ["LANGUAGE_TEMPLATES"]


@dataclass(frozen=True)
class _Noun:
    words: str
    feminine: bool = False
    plural: bool = False


def _n(words: str, gender: str = "m", number: str = "sg") -> _Noun:
    return _Noun(words, gender == "f", number == "pl")


_ES: dict[str, _Noun] = {
    "shoes": _n("zapatos", "m", "pl"), "sneakers": _n("zapatillas", "f", "pl"),
    "boots": _n("botas", "f", "pl"), "jacket": _n("chaqueta", "f"), "dress": _n("vestido"),
    "t-shirt": _n("camiseta", "f"), "shirt": _n("camisa", "f"), "jeans": _n("vaqueros", "m", "pl"),
    "backpack": _n("mochila", "f"), "hoodie": _n("sudadera", "f"), "wristwatch": _n("reloj"),
    "headphones": _n("auriculares", "m", "pl"), "laptop": _n("portátil"),
    "smartphone": _n("teléfono"), "water bottle": _n("botella de agua", "f"),
    "coffee maker": _n("cafetera", "f"), "desk lamp": _n("lámpara de escritorio", "f"),
    "bicycle": _n("bicicleta", "f"), "sunglasses": _n("gafas de sol", "f", "pl"),
    "perfume": _n("perfume"), "sweater": _n("suéter"), "sandals": _n("sandalias", "f", "pl"),
    "running shoes": _n("zapatillas para correr", "f", "pl"), "tablet": _n("tableta", "f"),
    "office chair": _n("silla de oficina", "f"), "vacuum cleaner": _n("aspiradora", "f"),
    "leggings": _n("mallas", "f", "pl"), "fleece jacket": _n("chaqueta polar", "f"),
}  # fmt: skip
_FR: dict[str, _Noun] = {
    "shoes": _n("chaussures", "f", "pl"), "sneakers": _n("baskets", "f", "pl"),
    "boots": _n("bottes", "f", "pl"), "jacket": _n("veste", "f"), "dress": _n("robe", "f"),
    "t-shirt": _n("t-shirt"), "shirt": _n("chemise", "f"), "backpack": _n("sac à dos"),
    "wristwatch": _n("montre", "f"), "headphones": _n("casque"),
    "laptop": _n("ordinateur portable"), "smartphone": _n("téléphone"),
    "water bottle": _n("gourde", "f"), "coffee maker": _n("cafetière", "f"),
    "desk lamp": _n("lampe de bureau", "f"), "bicycle": _n("vélo"),
    "sunglasses": _n("lunettes de soleil", "f", "pl"), "perfume": _n("parfum"),
    "sweater": _n("pull"), "jeans": _n("jean"), "tablet": _n("tablette", "f"),
    "running shoes": _n("chaussures de course", "f", "pl"), "hoodie": _n("sweat à capuche"),
    "sandals": _n("sandales", "f", "pl"), "leggings": _n("legging"),
}  # fmt: skip
_DE: dict[str, _Noun] = {
    "shoes": _n("Schuhe"), "sneakers": _n("Turnschuhe"), "boots": _n("Stiefel"),
    "jacket": _n("Jacke"), "dress": _n("Kleid"), "t-shirt": _n("T-Shirt"), "shirt": _n("Hemd"),
    "backpack": _n("Rucksack"), "wristwatch": _n("Armbanduhr"), "headphones": _n("Kopfhörer"),
    "laptop": _n("Laptop"), "smartphone": _n("Smartphone"),
    "water bottle": _n("Trinkflasche"), "coffee maker": _n("Kaffeemaschine"),
    "desk lamp": _n("Schreibtischlampe"), "bicycle": _n("Fahrrad"),
    "sunglasses": _n("Sonnenbrille"), "perfume": _n("Parfüm"), "sweater": _n("Pullover"),
    "jeans": _n("Jeans"), "tablet": _n("Tablet"), "running shoes": _n("Laufschuhe"),
    "hoodie": _n("Kapuzenpullover"), "sandals": _n("Sandalen"), "leggings": _n("Leggings"),
}  # fmt: skip

_ES_COLORS = {
    "black": "negro", "white": "blanco", "red": "rojo", "blue": "azul", "green": "verde",
    "yellow": "amarillo", "gray": "gris", "pink": "rosa", "brown": "marrón", "purple": "morado",
    "orange": "naranja", "silver": "plateado", "gold": "dorado", "beige": "beige",
}  # fmt: skip
_FR_COLORS = {
    "black": "noir", "white": "blanc", "red": "rouge", "blue": "bleu", "green": "vert",
    "yellow": "jaune", "gray": "gris", "pink": "rose", "brown": "marron", "purple": "violet",
    "orange": "orange", "silver": "argenté", "gold": "doré", "beige": "beige",
}  # fmt: skip
_DE_COLORS = {
    "black": "Schwarz", "white": "Weiß", "red": "Rot", "blue": "Blau", "green": "Grün",
    "yellow": "Gelb", "gray": "Grau", "pink": "Rosa", "brown": "Braun", "purple": "Lila",
    "orange": "Orange", "silver": "Silber", "gold": "Gold", "beige": "Beige",
}  # fmt: skip


def _es_color(base: str, noun: _Noun) -> str:
    word = base[:-1] + "a" if noun.feminine and base.endswith("o") else base
    if not noun.plural or word in ("rosa", "naranja", "beige"):
        return word
    if word == "marrón":
        return "marrones"
    return word + ("s" if word[-1] in "aeiou" else "es")


def _fr_color(base: str, noun: _Noun) -> str:
    if base in ("marron", "orange"):
        return base
    word = base
    if noun.feminine:
        word = {"blanc": "blanche", "violet": "violette"}.get(base, base)
        if not word.endswith("e"):
            word += "e"
    if noun.plural and not word.endswith(("s", "x")):
        word += "s"
    return word


def _article(code: str, noun: _Noun) -> str:
    if code == "es":
        if noun.plural:
            return "unas" if noun.feminine else "unos"
        return "una" if noun.feminine else "un"
    if code == "fr":
        return "des" if noun.plural else ("une" if noun.feminine else "un")
    return ""  # German articles depend on case; a search request can do without


@dataclass(frozen=True)
class _Language:
    nouns: dict[str, _Noun]
    colors: dict[str, str]
    leads: tuple[str, ...]
    women: str
    men: str
    under: tuple[str, ...]
    between: str
    currency_word: str


_LANGUAGES = {
    "es": _Language(_ES, _ES_COLORS, ("busco", "quiero", ""), "para mujer", "para hombre",
                    ("menos de {}", "por menos de {}"), "entre {} y {}", "euros"),
    "fr": _Language(_FR, _FR_COLORS, ("je cherche", "je voudrais", ""), "pour femme",
                    "pour homme", ("moins de {}", "à moins de {}"), "entre {} et {}", "euros"),
    "de": _Language(_DE, _DE_COLORS, ("ich suche", "zeig mir", ""), "für Damen", "für Herren",
                    ("unter {}", "für weniger als {}"), "zwischen {} und {}", "Euro"),
}  # fmt: skip


def _color_words(code: str, language: _Language, noun: _Noun, canonical: str) -> str:
    base = language.colors[canonical]
    if code == "es":
        return _es_color(base, noun)
    if code == "fr":
        return _fr_color(base, noun)
    return f"in {base}"


def _write(code: str, with_price: bool) -> TemplateFn:
    language = _LANGUAGES[code]

    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        noun = language.nouns.get(listing.category)
        if noun is None:
            return None
        lead = rng.choice(language.leads)
        ask = Ask().say(lead, _article(code, noun) if lead else "", noun.words)
        ask.category = listing.category
        own = [f.value for f in offer.facets if f.key == "color" and f.value in language.colors]
        if not with_price or rng.random() < 0.5:
            canonical = own[0] if own else rng.choice(list(language.colors))
            words = _color_words(code, language, noun, canonical)
            ask.ask_for(Facet("option", "color", canonical, words))
        gender = listing.gender.value if listing.gender else None
        if gender in ("women", "men") and rng.random() < 0.7:
            ask.say(language.women if gender == "women" else language.men)
            ask.want(Facet("attribute", "gender", gender, gender))
        if with_price:
            high = ceiling_price(offer, rng)
            low = floor_price(offer, rng)
            if high is None:
                return None
            if low is not None and rng.random() < 0.4:
                ask.say(language.between.format(int(low), f"{int(high)} {language.currency_word}"))
                ask.price(low, high, "EUR")
            else:
                amount = f"{int(high)} {language.currency_word}"
                ask.say(rng.choice(language.under).format(amount)).price(None, high, "EUR")
        return ask.draft()

    return write


LANGUAGE_TEMPLATES: tuple[tuple[str, TemplateFn], ...] = tuple(
    (f"{code}_{kind}", _write(code, kind == "price"))
    for code in ("es", "fr", "de")
    for kind in ("color", "price")
)
"""``es_color``, ``es_price``, ``fr_color``... by name."""
