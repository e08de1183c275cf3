"""A fast rule-based query parser: shopper words -> :class:`SearchQuery`.

Passes run over a lower-cased copy of the request; each one claims the characters it used (they
are blanked out so later passes cannot reuse them and phrases cannot match across them):

1. availability and rating phrases ("in stock", "4 stars and up"),
2. prices ("under $50", "between 20 and 40", "above 114", "less than 30 dollars"),
3. sort cues ("cheapest", "top rated"),
4. quantities with units ("32 oz", "2 pack", "pack of 6"),
5. negations ("not leather", "without a hood", "no red or pink"),
6. sizes ("size 30", "XL", "size 10.5"), brands, colours, materials, other attributes, gender,
7. the category (the head noun of the first phrase: "laptop backpack" -> backpack),
8. bare numbers as sizes for apparel and footwear ("sneakers 10.5"),

and what is left (minus stop words) becomes ``text``. Likely typos are corrected against the
vocabulary first ("lether" -> "leather"). With ``context`` (earlier requests in the same
conversation, oldest first) a follow-up such as "in blue instead" refines the earlier query.

:func:`parse` never raises for any ``str``: input is truncated to :data:`MAX_REQUEST_CHARS`, and
should a pass fail unexpectedly the result degrades to a text-only query.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from .common_words import is_english_word
from .query import Exclusion, PriceRange, SearchQuery
from .vocabulary import (
    ATTRIBUTE_OF,
    AVAILABILITY_CUES,
    BRAND_OF,
    CATEGORY_OF,
    CJK_PRICE_MAX_CUES,
    CJK_PRICE_MAX_PREFIXES,
    CJK_PRICE_MIN_CUES,
    CJK_PRICE_MIN_PREFIXES,
    COLOR_OF,
    CURRENCY_WORDS,
    FOLLOW_UP_MARKERS,
    FOLLOW_UP_OPENERS,
    GENDER_OF,
    GLOSS_OF,
    LETTER_SIZED_CATEGORIES,
    MATERIAL_OF,
    NEGATION_CUES,
    PRICE_MAX_CUES,
    PRICE_MIN_CUES,
    PROTECTED_WORDS,
    SIZE_OF,
    SIZED_CATEGORIES,
    SORT_CUES,
    STOPWORDS,
    UNITS,
)

__all__ = [
    "MAX_CONTEXT_TURNS",
    "MAX_REQUEST_CHARS",
    "asks_other_than",
    "canonical_quantity",
    "cut_request",
    "gloss",
    "parse",
    "price_clash",
]

MAX_REQUEST_CHARS = 2000
"""Longer requests are cut to this many characters before parsing (:func:`cut_request`)."""
MAX_CONTEXT_TURNS = 8
"""Only the most recent context entries are considered."""
_MAX_TEXT_TOKENS = 48
_GAP = "\x1f"  # marks claimed characters; not a word character, removed from input first

# ---------------------------------------------------------------------------------- regexes


def _alternation(forms: Iterable[str]) -> str:
    unique = sorted(set(forms), key=lambda f: (-len(f), f))
    return "|".join(re.escape(f).replace(r"\ ", " ") for f in unique)


def _word_re(forms: Iterable[str]) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'&-])(?:{_alternation(forms)})(?![\w&-]|'\w)")


# Every vocabulary phrase -> (kind, key, canonical); used by negation and follow-ups.
_VOCAB: dict[str, tuple[str, str, str]] = {}
for _form, _canon in CATEGORY_OF.items():
    _VOCAB[_form] = ("category", "category", _canon)
for _form, (_key, _canon) in ATTRIBUTE_OF.items():
    _VOCAB[_form] = ("attribute", _key, _canon)
for _form, _canon in GENDER_OF.items():
    _VOCAB[_form] = ("attribute", "gender", _canon)
for _form, _canon in BRAND_OF.items():
    _VOCAB[_form] = ("brand", "brand", _canon)
for _form, _canon in MATERIAL_OF.items():
    _VOCAB[_form] = ("attribute", "material", _canon)
for _form, _canon in COLOR_OF.items():
    _VOCAB[_form] = ("option", "color", _canon)
for _form in ("xs", "xxs", "xl", "xxl", "2xl", "3xl", "xxxl", "4xl"):
    _VOCAB[_form] = ("option", "size", SIZE_OF[_form])

# "blu" is Italian for blue, but "blu ray" is a disc.
# "Charcoal" is a grill as often as a grey: left in the text, the catalog's own words place it.
_COLOR_RE = re.compile(r"(?!blu ray\b)" + _word_re(f for f in COLOR_OF if f != "charcoal").pattern)
_GLOSS_RE = _word_re(GLOSS_OF)
_MATERIAL_RE = _word_re(MATERIAL_OF)
_GENDER_RE = _word_re(GENDER_OF)
_CATEGORY_RE = _word_re(CATEGORY_OF)
_BRAND_RE = _word_re(BRAND_OF)
_ATTRIBUTE_RE = _word_re(ATTRIBUTE_OF)
_VOCAB_AT_RE = re.compile(rf"(?:{_alternation(_VOCAB)})(?![\w&-]|'\w)")
_AVAILABLE_RE = _word_re(AVAILABILITY_CUES)
_CHEAPER_RE = _word_re(
    ("cheaper", "less expensive", "more affordable", "budget", "cheap", "affordable", "inexpensive")
)
_SORT_OF = {form: sort for sort, forms in SORT_CUES.items() for form in forms}
# One pattern, longest form first: "sort by price high to low" is not "sort by price".
_SORT_RE = _word_re(_SORT_OF)

_NUM = r"\d{1,9}(?:,\d{3})*(?:\.\d{1,2})?k?"
_SYMBOL = r"[$€£¥]"


def _cjk(word: str) -> bool:
    return any(ord(c) >= 0x2E80 for c in word)  # written without spaces ("元", "円")


_CUR_WORD = rf"(?:{_alternation(w for w in CURRENCY_WORDS if w[0].isalpha() and not _cjk(w))})"
_CJK_CUR = rf"(?:{_alternation(w for w in CURRENCY_WORDS if w.isalpha() and _cjk(w))})"
_AMOUNT = rf"(?P<sym>{_SYMBOL})?\s?(?P<num>{_NUM})\s?(?P<cur>{_SYMBOL}|{_CUR_WORD}\b)?"
_AMOUNT2 = rf"(?P<sym2>{_SYMBOL})?\s?(?P<num2>{_NUM})\s?(?P<cur2>{_SYMBOL}|{_CUR_WORD}\b)?"
_PRICE_WORDS = r"(?:(?:priced|price|cost(?:s|ing)?|costing|for|at|is|of|a|with)\s)*"

_RANGE_WORD_RE = re.compile(
    rf"(?<![\w.])(?:between|from|entre)\s{_PRICE_WORDS}{_AMOUNT}\s?(?:and|to|-|y|et|und|a|à)\s?"
    rf"{_AMOUNT2}(?![\w.])"
)
_RANGE_DASH_RE = re.compile(rf"(?<![\w.]){_AMOUNT}\s?(?:-|to)\s?{_AMOUNT2}(?![\w.])")
# "at least a 512 ssd", "up to 500 pieces", "about 35 cm": a measure of something other than
# money.
_NOT_MONEY = (
    r"(?!\s?(?:ssd|hdd|emmc|storage|ram|memory|gigs?|pieces?|pcs|people|persons|watts?|lumens"
    r"|mah|cups?|cm|mm|inch(?:es)?|ft|feet|foot|kg|kilos?|lbs?|pounds|ml|liters?|litres?|gb|tb"
    r"|zoll|pouces?|pulgadas?)\b)"
)
_MAX_RE = re.compile(
    rf"(?<![\w])(?:{_alternation(PRICE_MAX_CUES)})\s{{0,1}}{_PRICE_WORDS}{_AMOUNT}(?![\w.])"
    rf"{_NOT_MONEY}"
)
_MIN_RE = re.compile(
    rf"(?<![\w])(?:{_alternation(PRICE_MIN_CUES)})\s{{0,1}}{_PRICE_WORDS}{_AMOUNT}"
    rf"(?:\s(?:or|and)\s(?:more|above|up|over))?(?![\w.]){_NOT_MONEY}"
)
_MAX_AFTER_RE = re.compile(
    rf"(?<![\w.]){_AMOUNT}\s(?:or|and)\s(?:less|under|below|cheaper|lower)(?![\w])"
)
_MIN_AFTER_RE = re.compile(
    rf"(?<![\w.]){_AMOUNT}\s(?:or|and)\s(?:more|above|up|over|higher)(?![\w])"
)
# "100元以下", "低于100元": no spaces around the number, so no word-boundary look-arounds.
_CJK_AMOUNT = rf"(?P<sym>{_SYMBOL})?\s?(?P<num>{_NUM})\s?(?P<cur>{_CJK_CUR})?"
_MAX_CJK_RE = re.compile(rf"(?<![\d.,]){_CJK_AMOUNT}\s?(?:{_alternation(CJK_PRICE_MAX_CUES)})")
_MAX_CJK_BEFORE_RE = re.compile(
    rf"(?<!不)(?:{_alternation(CJK_PRICE_MAX_PREFIXES)})\s?{_CJK_AMOUNT}(?![\d.,])"
)
_MIN_CJK_RE = re.compile(rf"(?<![\d.,]){_CJK_AMOUNT}\s?(?:{_alternation(CJK_PRICE_MIN_CUES)})")
_MIN_CJK_BEFORE_RE = re.compile(
    rf"(?:{_alternation(CJK_PRICE_MIN_PREFIXES)})\s?{_CJK_AMOUNT}(?![\d.,])"
)
# A request that speaks of money: there a bare "250-270" is a price range.
_PRICE_TALK = re.compile(
    r"\b(?:price|priced|price-wise|pricewise|budget|spend|pay|cost|costs|bucks|dollars?|euros?)\b"
)
_AROUND_RE = re.compile(
    rf"(?<![\w])(?:around|about|approximately|roughly|approx\.?|~)\s?{_AMOUNT}(?![\w.])"
    rf"{_NOT_MONEY}"
)
_BARE_PRICE_RE = re.compile(
    rf"(?<![\w.])(?:(?P<sym>{_SYMBOL})\s?(?P<num>{_NUM})(?P<cur>)|(?P<num_b>{_NUM})\s?"
    rf"(?P<cur_b>{_SYMBOL}|{_CUR_WORD}\b))(?![\w.])"
)
_RATING_RE = re.compile(
    r"(?<![\w.])(?:(?:rated|rating|ratings|reviews?|with)\s(?:of\s)?(?:at\sleast\s|above\s|over\s"
    r"|>=?\s?)?(?P<a>[0-5](?:\.\d)?)(?:\s?\+|\s?stars?)?(?:\s(?:or|and|&)\s(?:up|above|higher|"
    r"more|better))?|(?:at\sleast\s|min(?:imum)?\s)?(?P<b>[0-5](?:\.\d)?)\s?\+?\s?-?\s?"
    r"(?:stars?|★)(?:\s(?:rating|rated|reviews?))?(?:\s?(?:\+|(?:and|&|or)\s(?:up|above|higher"
    r"|more|better)))?)(?![\w])"
)
_UNIT_RE = re.compile(
    r"(?<![\w.])(?P<num>\d{1,6}(?:\.\d{1,3})?)\s?-?\s?(?P<unit>"
    + _alternation(u for u in UNITS if u not in {"in", '"'})
    + r")(?![\w])|(?<![\w.])(?P<num_in>\d{1,3}(?:\.\d)?)(?P<unit_in>in\b|\"|-inch\b)"
    r"|(?<![\w])(?:pack|set|box|case) of (?P<num_of>\d{1,4})(?![\w.])"
)
# The lower end of an amount range right before its upper end: "30-" of "30-50 lb".
_RANGE_LOW_RE = re.compile(
    r"(?<![\w.])(?P<low>\d{1,6}(?:\.\d{1,3})?)\s?(?:-|\u2013|to|a|à|bis)\s?$"
)  # "30-50 lb", "5 to 25 lbs", "de 55 a 75 libras", "de 5 à 25 kg", "5 bis 25 kg"
# "16gb ram", "16 gb of memory", "16 GB de RAM", "16 Go de mémoire", "16 GB Arbeitsspeicher".
_RAM_AFTER_RE = re.compile(
    r"\s(?:of\s|de\s)?(?:ram|memory|memoria|m[ée]moire|arbeitsspeicher)(?![\w])"
)
_NAMED_SIZES = "|".join(
    re.escape(f) for f in sorted(SIZE_OF, key=len, reverse=True) if f not in {"xs", "xxs"}
)
_SIZE_RE = re.compile(
    r"(?<![\w])(?:(?:in\s)?(?:a\s)?(?:us\s|eu\s|uk\s)?(?:sizes?|taille|talla|größe|groesse|taglia"
    r"|tamanho|sz)(?:\s?[:=]\s?|\s(?:is\s|of\s)?|(?=\d))"
    r"(?P<v>\d{1,2}(?:\.5)?(?:\s?[x/]\s?\d{1,2})?w?(?:\s(?:wide|w))?|[2-5]?x{0,3}[sml]|"
    rf"{_NAMED_SIZES}|xxs|xs)|in\s(?:a\s)?(?P<w>small|medium|large|x-large|xx-large|"
    r"extra large|extra small)|(?P<a>\d{2}\s?x\s?\d{2})|(?P<bed>twin xl|twin|full|queen|"
    r"california king|cal king|king)[\s-]size)(?![\w])"
)
_MORE_SIZES_RE = re.compile(
    r"(?:\s?,\s?(?:or\s)?|\s(?:or|/)\s|/)(?P<v>\d{1,2}(?:\.5)?|[2-5]?x{0,3}[sml]|xxs|xs)(?![\w])"
)
_SIZE_ABBR_RE = re.compile(
    r"(?<![\w'-])(?P<v>xxs|xs|xl|xxl|xxxl|[2-5]xl|x-large|xx-large|[2-5]x-large|extra large|"
    r"extra small|x-small)(?![\w-])"
)
_NOT_BRANDS = frozenset({"new", "name", "good", "any", "other", "same", "different", "cheap"})
_BRAND_CUE_RE = re.compile(
    r"(?<![\w])(?:brand(?:\sname)?\s?:?\s(?P<a>[a-z0-9][\w&'-]{0,30})|(?:by|from)\s(?:the\s)?"
    r"brand\s(?P<b>[a-z0-9][\w&'-]{0,30})|(?P<c>[a-z0-9][\w&'-]{0,30})\sbrand)(?![\w])"
)
_NEGATION_RE = re.compile(
    rf"(?<![\w'])(?:{_alternation(NEGATION_CUES)})(?![\w'])\s?"
    r"(?:(?:a|an|any|the|some|more|made of|made from|made by|from|by|in|with|of|colou?r:?"
    r"|sea|sean|aus|en|de|du|in|le|la|les|el|los|las|das|die|der|den)\s)*"
    # "que no sea rojo", "nicht aus Eisen", "pas en noir", "sauf le noir"
)
_OR_GLUE_RE = re.compile(r"\s?(?:,\s?(?:or|nor)\s|\sor\s|\snor\s|/)\s?")
_LIST_GLUE_RE = re.compile(r"\s?(?:,\s?(?:or\s|nor\s|and\s)?|\sor\s|\snor\s|\sand\s|/)\s?")
_BARE_NUMBER_RE = re.compile(r"(?<![\w.$€£])(?P<v>\d{1,2}(?:\.5)?)(?![\w.%])")
_BARE_SIZE_WORD_RE = re.compile(r"(?<![\w'-])(?P<v>small|medium|large)(?![\w-])")
_TOKEN_RE = re.compile(r"[\w][\w'&.+-]*")
# "speaker I can control from my phone": a clause after the product noun ("I can", "from",
# "while", "so") names what it is used with, not what is wanted.
_SEGMENT_BREAK_RE = re.compile(
    r"[,;.!?()]|\s(?:for|with|that|which|to go with|to match|under|over|in|without|but"
    r"|from|while|when|so|i|i'd|i'm|you|we"
    r"|avec|pour|sans|para|con|sin|mit|für|ohne|que|qui|die|der|das)\s"
)
# "5O dollars", "1OO": a letter O typed for a zero inside a number.
_O_FOR_ZERO_RE = re.compile(r"(?<![\w.,])\d[\do]*o[\do]*(?![\w])")
# "1,5 Liter", "2,5 kg": a decimal comma (two digits at most after it, so never "1,500").
_DECIMAL_COMMA_RE = re.compile(
    r"(?<![\d,.])(\d{1,3}),(\d{1,2})(?=\s?(?:l|liter|litre|liters|litres|ml|kg|g|cm|mm|m|zoll"
    r"|pouces?|pulgadas?|inch|inches|€|euros?)(?![\w]))"
)
_FILLER_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u2028-\u202e\ufeff]")

# Amounts in words ("fifty bucks", "between twenty and forty dollars", "a hundred and ten
# euros") become digits, only where a currency word follows: "a tent for four" stays words.
_UNIT_WORDS = {
    w: n
    for n, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
    )
}  # fmt: skip
_TENS_WORDS = {
    w: 10 * n
    for n, w in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2
    )
}
_UNDER_HUNDRED = (
    rf"(?:(?:{'|'.join(_TENS_WORDS)})(?:[- ](?:{'|'.join(list(_UNIT_WORDS)[1:10])}))?"
    rf"|{_alternation(_UNIT_WORDS)})"
)
_HUNDREDS = (
    rf"(?:(?:a|{_UNDER_HUNDRED})\shundred(?:\s(?:and\s)?{_UNDER_HUNDRED})?|{_UNDER_HUNDRED})"
)
_WORDED = rf"(?:(?:a|{_HUNDREDS})\sthousand(?:\s(?:and\s)?{_HUNDREDS})?|{_HUNDREDS})"
_MONEY_WORDS = rf"(?:{_alternation(w for w in CURRENCY_WORDS if w[0].isalpha() and not _cjk(w))})"
_WORDED_AMOUNT_RE = re.compile(
    rf"\b(?P<first>{_WORDED})(?:(?P<glue>\s(?:and|to|or)\s|\s?-\s?)(?P<second>{_WORDED}))?"
    rf"(?=\s{_MONEY_WORDS}\b)"
)


def _worded_number(words: str) -> int:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", words):
        if word in _UNIT_WORDS:
            current += _UNIT_WORDS[word]
        elif word in _TENS_WORDS:
            current += _TENS_WORDS[word]
        elif word == "a":
            current = 1
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total += max(current, 1) * 1000
            current = 0
    return total + current


def _digits_for_worded_amounts(text: str) -> str:
    def digits(m: re.Match[str]) -> str:
        first = str(_worded_number(m["first"]))
        if m["second"] is None:
            return first
        return f"{first}{m['glue']}{_worded_number(m['second'])}"

    return _WORDED_AMOUNT_RE.sub(digits, text)


_CUES_BY_WORD = {
    w for cue in (*PRICE_MAX_CUES, *PRICE_MIN_CUES, *NEGATION_CUES) for w in cue.split()
}
_KNOWN_WORDS = {w for phrase in (*_VOCAB, *SIZE_OF) for w in phrase.split()}
# Brands are never a correction target: a brand is a proper noun that rarely carries a typo, and
# ordinary words one edit away ("basics" -> Asics) are far more common than misspelt brands.
_BRAND_WORDS = {w for form in BRAND_OF for w in form.split()}
_CORRECTABLE = {w for w in _KNOWN_WORDS if len(w) >= 5 and w.isalpha() and w not in _BRAND_WORDS}
# A unit ("litros", "pulgadas") is never a typo of a vocabulary word ("libros").
_NEVER_CORRECT = (
    set(STOPWORDS) | _CUES_BY_WORD | set(PROTECTED_WORDS) | {w for u in UNITS for w in u.split()}
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"

# ----------------------------------------------------------------------------- the draft


@dataclass
class _Draft:
    """What the passes found; mutable while parsing, frozen into a SearchQuery at the end."""

    text: list[str] = field(default_factory=list)
    category: str | None = None
    brand: str | None = None
    attributes: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, list[str]] = field(default_factory=dict)
    price_min: Decimal | None = None
    price_max: Decimal | None = None
    currency: str = "USD"
    sort: str = "relevance"
    min_rating: float | None = None
    available_only: bool = False
    # Bounds said apart that cannot both hold ("less than 500 but more than 1000").
    clash: bool = False
    exclude: list[tuple[str | None, str]] = field(default_factory=list)

    def add(self, kind: str, key: str, value: str) -> None:
        if kind == "category":
            self.category = value
        elif kind == "brand":
            self.brand = value
        else:
            bucket = (self.options if kind == "option" else self.attributes).setdefault(key, [])
            if value not in bucket:
                bucket.append(value)

    def add_exclusion(self, key: str | None, value: str) -> None:
        if (key, value) not in self.exclude:
            self.exclude.append((key, value))

    def has_price(self) -> bool:
        return self.price_min is not None or self.price_max is not None

    def constrained(self) -> bool:
        return bool(
            self.category
            or self.brand
            or self.attributes
            or self.options
            or self.has_price()
            or self.sort != "relevance"
            or self.min_rating is not None
            or self.available_only
            or self.exclude
        )

    def to_query(self) -> SearchQuery:
        price = None
        if self.has_price():
            low, high = self.price_min, self.price_max
            if low is not None and high is not None and low > high:
                low, high = high, low
            price = PriceRange(min=low, max=high, currency=self.currency)
        sort = self.sort if self.sort in {"price_asc", "price_desc", "rating"} else "relevance"
        return SearchQuery.model_validate(
            {
                "text": " ".join(self.text[:_MAX_TEXT_TOKENS]),
                "category": self.category,
                "brand": self.brand,
                "attributes": self.attributes,
                "options": self.options,
                "price": price,
                "sort": sort,
                "min_rating": self.min_rating,
                "available_only": self.available_only,
                "exclude": [Exclusion(field=k, value=v) for k, v in self.exclude],
            }
        )


class _Work:
    """The request being parsed, with claimed spans blanked out."""

    def __init__(self, text: str) -> None:
        self.s = text

    def claim(self, start: int, end: int) -> None:
        self.s = self.s[:start] + _GAP * (end - start) + self.s[end:]

    def matches(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Non-empty matches over the current text, left to right; the caller claims them."""
        pos = 0
        while pos <= len(self.s):
            m = pattern.search(self.s, pos)
            if m is None:
                return
            pos = m.end() if m.end() > m.start() else m.end() + 1
            if m.end() > m.start():
                yield m

    def take(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Like :meth:`matches`, claiming every match."""
        for m in self.matches(pattern):
            self.claim(m.start(), m.end())
            yield m


# ------------------------------------------------------------------------------ helpers


def _two_word_forms() -> set[tuple[str, str]]:
    pairs = set()
    for form in (*ATTRIBUTE_OF, *CATEGORY_OF):
        words = re.split(r"[ -]", form)
        if len(words) == 2 and all(w.isalpha() for w in words):
            pairs.add((words[0], words[1]))
    return pairs


# "over the ear" is "over ear" (over-ear): an article said inside a two-word form of the word
# lists ("in the ear", "on the ear") is dropped before the forms are read.
_ARTICLE_INSIDE_RE = re.compile(
    r"\b("
    + "|".join(
        rf"{re.escape(first)}(?= (?:the|a|an) {re.escape(second)}\b)"
        for first, second in sorted(_two_word_forms())
    )
    + r") (?:the|a|an) (\w+)"
)


# A request pasted as a search form's JSON ('{"query": "kettle", "max_price": 100}'): its keys
# say what its values are.
_JSON_BOUNDS = {
    "max_price": "under",
    "price_max": "under",
    "maxprice": "under",
    "max": "under",
    "budget": "under",
    "min_price": "over",
    "price_min": "over",
    "minprice": "over",
    "min": "over",
}
_JSON_TEXT = frozenset({"query", "q", "search", "text", "keywords", "product", "item"})


def _json_request(request: str) -> str:
    """``request`` in words when it is a flat JSON object, else as it is."""
    stripped = request.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return request
    try:
        found = json.loads(stripped)
    except ValueError:
        return request
    if not isinstance(found, dict):
        return request
    words: list[str] = []
    for key, value in found.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            continue
        name = str(key).casefold().replace("-", "_")
        if name in _JSON_BOUNDS and not isinstance(value, str):
            words.append(f"{_JSON_BOUNDS[name]} {value}")
        elif name in _JSON_TEXT:
            words.append(str(value))
        else:
            words.append(f"{name.replace('_', ' ')} {value}")
    return ", ".join(words)


# "PVC ones give me a headache": a complaint about what is named before it is "not PVC".
_COMPLAINT_RE = re.compile(
    r"(?<![\w-])(?P<what>[\w-]+(?: [\w-]+)?) (?:ones? |stuff |things? )?(?:give|gives|gave|make"
    r"|makes|made) me (?:a |an |so )?(?:headaches?|rash(?:es)?|sick|nauseous|migraines?|itch)"
)

# "another colour than red", "any size but XL", "eine andere Farbe als rot", "une autre couleur
# que rouge": "other than" the value (a comparative between is a bound: "any cheaper than 50").
_OTHER_THAN_RE = re.compile(
    r"(?<![\w-])(?:an ?other|any other|any|other|otr[oa]s?|anderen?|andere[rsm]?|autres?"
    r"|une autre|un autre) (?!more |less |fewer )(?![\w-]+er )[\w-]+ (?:than|but|als|que(?! no))"
    r"(?![\w-])"
)

_OTHER_THAN_SAID_RE = re.compile(
    r"(?<![\w-])(?:other than|anything but|que no sea|que no sean|sauf|außer|ausser)(?![\w-])"
)


def asks_other_than(text: str) -> bool:
    """Whether ``text`` asks for another value than one it names ("does it come in another
    colour than red?", "¿viene en otro color que no sea rojo?"): a search without that value,
    not a question about the one on screen."""
    said = " ".join(text.casefold().split())
    return bool(_OTHER_THAN_SAID_RE.search(_OTHER_THAN_RE.sub("other than", said)))


# "nothing too hard", "not too heavy": a wish for the middle, no value to require or rule out
# (price words stay: "nothing too expensive" sorts by price).
_NOT_TOO_RE = re.compile(
    r"(?<![\w-])(?:nothing|not|none)\s+(?:too|very|so|overly|super)\s+"
    r"(?!expensive\b|pricey\b|pricy\b|costly\b|dear\b|cheap\b)[a-z]+(?![\w-])"
)


_CUT_WORD_RE = re.compile(r"\s+\S*\Z")


def cut_request(text: str) -> str:
    """``text`` cut to :data:`MAX_REQUEST_CHARS` characters, at the end of a word: the piece of
    a word cut in two is no word the shopper wrote (the "l" of "lorem")."""
    if len(text) <= MAX_REQUEST_CHARS:
        return text
    head = text[:MAX_REQUEST_CHARS]
    if text[MAX_REQUEST_CHARS].isspace():
        return head
    return _CUT_WORD_RE.sub("", head) or head


def _normalise(request: str) -> str:
    request = _json_request(request[: MAX_REQUEST_CHARS * 2])
    text = cut_request(unicodedata.normalize("NFKC", request[: MAX_REQUEST_CHARS * 2]))
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2013", "-")
    text = _FILLER_RE.sub(" ", text).lower()
    text = _COMPLAINT_RE.sub(lambda m: f"not {m['what']}", text)
    text = _OTHER_THAN_RE.sub("other than", text)
    text = _NOT_TOO_RE.sub(" ", text)
    text = _O_FOR_ZERO_RE.sub(lambda m: m.group(0).replace("o", "0"), text)
    text = _DECIMAL_COMMA_RE.sub(r"\1.\2", text)
    text = gloss(text)
    text = _ARTICLE_INSIDE_RE.sub(r"\1 \2", text)
    return _digits_for_worded_amounts(" ".join(text.split()))


def gloss(text: str) -> str:
    """``text`` (lower-cased) with the words of other languages the word lists know read as
    the catalog's English (:data:`~cartagent.retrieval.vocabulary.GLOSSES`)."""
    return _GLOSS_RE.sub(lambda m: GLOSS_OF[m.group(0)], text)


def glossed_spans(text: str) -> list[tuple[int, int, str]]:
    """Where ``text`` says something :func:`gloss` reads as the catalog's English: (start,
    end, the English) for each such phrase ("wasserdicht", "snorkeling" -> "waterproof"), and
    each name of a kind, colour or material ("electronic readers" -> "e-reader", "schwarz" ->
    "black")."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: no offsets to give
        return []
    return [
        (m.start(), m.end(), table[m.group(0)])
        for pattern, table in (
            (_GLOSS_RE, GLOSS_OF),
            (_CATEGORY_RE, CATEGORY_OF),
            (_COLOR_RE, COLOR_OF),
            (_MATERIAL_RE, MATERIAL_OF),
        )
        for m in pattern.finditer(lowered)
    ]


def _edits1(word: str) -> Iterator[str]:
    for i in range(len(word) + 1):
        left, right = word[:i], word[i:]
        if right:
            yield left + right[1:]
        if len(right) > 1:
            yield left + right[1] + right[0] + right[2:]
        for c in _LETTERS:
            if right:
                yield left + c + right[1:]
            yield left + c + right


def _correct_typos(text: str) -> str:
    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        if len(word) < 5 or word in _KNOWN_WORDS or word in _NEVER_CORRECT:
            return word
        if is_english_word(word):  # "blown", "brain": a word, no typo of "brown"
            return word
        if word.endswith("s") and word[:-1] in _KNOWN_WORDS:
            return word
        if word.endswith("ing"):  # a verb form ("biking", "surfing"), not a misspelt noun
            return word
        for candidate in _edits1(word):
            # Typists rarely get the first letter wrong; allowing it turns real words into
            # vocabulary ("beans" -> jeans). A short word one letter longer than a vocabulary
            # word is more often another real word ("plants" -> pants) than a typo.
            if candidate[:1] != word[:1] or candidate not in _CORRECTABLE:
                continue
            if len(candidate) < len(word) and len(word) < 7:
                continue
            return candidate
        return word

    return re.sub(r"(?<![\w'-])[a-z]{5,20}(?![\w'-])", fix, text)


def _decimal(raw: str) -> Decimal | None:
    raw = raw.replace(",", "")
    scale = Decimal(1)
    if raw.endswith("k"):
        raw, scale = raw[:-1], Decimal(1000)
    try:
        value = Decimal(raw) * scale
    except InvalidOperation:
        return None
    if not value.is_finite() or value < 0 or value > Decimal("99999999"):
        return None
    return Decimal(int(value)) if value == value.to_integral_value() else value


def _number_text(value: Decimal) -> str:
    return str(int(value)) if value == value.to_integral_value() else format(value, "f")


def _currency(*marks: str | None) -> str | None:
    for mark in marks:
        if mark:
            code = CURRENCY_WORDS.get(mark.strip())
            if code:
                return code
    return None


def canonical_quantity(text: str) -> str | None:
    """``"32oz"``, ``"32 ounces"`` -> ``"32 oz"``; ``"pack of 2"`` -> ``"2 pack"``; else ``None``.

    The same normalisation the parser applies to quantities, so a catalog's option values can be
    compared with a query's.
    """
    m = _UNIT_RE.fullmatch(_normalise(text))
    if m is None:
        return None
    return _quantity(m)[1]


def _quantity(m: re.Match[str]) -> tuple[str, str]:
    if m.group("num_of"):
        return "pack", f"{int(m.group('num_of'))} pack"
    if m.group("num_in"):
        number, key, unit = m.group("num_in"), "length", "inch"
    else:
        number = m.group("num")
        key, unit = UNITS[m.group("unit")]
    value = _decimal(number) or Decimal(0)
    return key, f"{_number_text(value)} {unit}"


# ------------------------------------------------------------------------------- passes


def _pass_flags(work: _Work, draft: _Draft) -> None:
    for _ in work.take(_AVAILABLE_RE):
        draft.available_only = True
    for m in work.take(_RATING_RE):
        raw = m.group("a") or m.group("b")
        value = float(raw) if raw else None
        if value is not None and 0 <= value <= 5:
            draft.min_rating = value


def _set_bound(draft: _Draft, bound: str, m: re.Match[str], suffix: str = "") -> bool:
    value = _decimal(m.group("num" + suffix))
    if value is None:
        return False
    code = _currency(m.group("sym" + suffix), m.group("cur" + suffix))
    if code:
        draft.currency = code
    if bound == "min":
        draft.price_min = value
    else:
        draft.price_max = value
    return True


def _range(work: _Work, draft: _Draft, m: re.Match[str], *, worded: bool) -> None:
    marked = m.group("sym") or m.group("cur") or m.group("sym2") or m.group("cur2")
    if not marked:
        # "2-3 cups", "6-8 years" are not prices; a bare "20-40" is only one after "between".
        unit = re.match(r"\s*([^\W\d_]+(?:\s[^\W\d_]+)?)", work.s[m.end() : m.end() + 12])
        head = unit.group(1).split(" ", 1)[0] if unit else ""
        if head in UNITS or not (worded or _PRICE_TALK.search(work.s)):
            return
    work.claim(m.start(), m.end())
    _set_bound(draft, "min", m)
    _set_bound(draft, "max", m, "2")
    code = _currency(m.group("sym2"), m.group("cur2"))
    if code:
        draft.currency = code


def _pass_price(work: _Work, draft: _Draft) -> None:
    cued: set[str] = set()
    for pattern in (_RANGE_WORD_RE, _RANGE_DASH_RE):
        for m in work.matches(pattern):
            _range(work, draft, m, worded=pattern is _RANGE_WORD_RE)

    for pattern, bound in (
        (_MAX_RE, "max"),
        (_MAX_CJK_RE, "max"),
        (_MAX_CJK_BEFORE_RE, "max"),
        (_MIN_RE, "min"),
        (_MIN_CJK_RE, "min"),
        (_MIN_CJK_BEFORE_RE, "min"),
        (_MAX_AFTER_RE, "max"),
        (_MIN_AFTER_RE, "min"),
    ):
        for m in work.take(pattern):
            _set_bound(draft, bound, m)
            cued.add(bound)
    low, high = draft.price_min, draft.price_max
    draft.clash = cued == {"min", "max"} and low is not None and high is not None and low > high
    for m in work.take(_AROUND_RE):
        value = _decimal(m.group("num"))
        if value is not None:
            draft.price_min = (value * Decimal("0.8")).quantize(Decimal(1))
            draft.price_max = (value * Decimal("1.2")).quantize(Decimal(1))
            draft.currency = _currency(m.group("sym"), m.group("cur")) or draft.currency
    if not draft.has_price():
        for m in work.take(_BARE_PRICE_RE):
            value = _decimal(m.group("num") or m.group("num_b") or "")
            if value is not None:
                draft.price_max = value
                draft.currency = (
                    _currency(m.group("sym"), m.group("cur"), m.group("cur_b")) or draft.currency
                )


def _pass_sort(work: _Work, draft: _Draft) -> None:
    found = {_SORT_OF[m.group()] for m in work.take(_SORT_RE)}
    if found:  # several: the later kind in SORT_CUES wins ("top rated cheapest" is by rating)
        draft.sort = max(found, key=list(SORT_CUES).index)
    if draft.sort == "relevance":
        for _ in work.take(_CHEAPER_RE):
            draft.sort = "price_asc"


def _pass_units(work: _Work, draft: _Draft) -> None:
    for m in work.matches(_UNIT_RE):
        unit = m.group("unit")
        number = m.group("num")
        # "5g" is a network generation, "size 10 w" is a width; neither is a quantity.
        if unit == "g" and number and _decimal(number) is not None and Decimal(number) < 10:
            continue
        work.claim(m.start(), m.end())
        key, value = _quantity(m)
        low = _RANGE_LOW_RE.search(work.s, 0, m.start()) if m.group("num") else None
        if low is not None and (below := _decimal(low.group("low"))) is not None:
            high = _decimal(m.group("num"))
            if high is not None and below < high:  # "30-50 lb": a range is one value
                value = f"{_number_text(below)}-{value}"
                work.claim(low.start(), low.end())
        after = _RAM_AFTER_RE.match(work.s, m.end())
        if key == "storage" and after:
            key = "ram"
            work.claim(after.start(), after.end())
        draft.add("option", key, value)


def _vocab_at(text: str, pos: int) -> tuple[re.Match[str], tuple[str, str, str]] | None:
    m = _VOCAB_AT_RE.match(text, pos)
    if m is None:
        return None
    return m, _VOCAB[m.group(0)]


def _pass_negation(work: _Work, draft: _Draft) -> None:
    pos = 0
    while True:
        cue = _NEGATION_RE.search(work.s, pos)
        if cue is None:
            return
        pos = cue.end()
        if cue.group(0).strip() in {"no", "no,"} and work.s[cue.start() : cue.end() + 1].endswith(
            ","
        ):
            continue
        start, end = cue.start(), cue.end()
        found = _vocab_at(work.s, end)
        if found is None:
            word_end = _negated_word(work.s, end, draft)
            if word_end is None:
                continue
            end = word_end
        else:
            while found is not None:
                m, (kind, key, canonical) = found
                draft.add_exclusion(key if kind != "brand" else "brand", canonical)
                end = m.end()
                glue = _LIST_GLUE_RE.match(work.s, end)
                found = _vocab_at(work.s, glue.end()) if glue else None
                if found is not None and found[1][1] != key and glue and "and" in glue.group(0):
                    found = None  # "no red and size 30": the list ended at "red"
        # "no pods or capsules", "not leather or pleather": an "or" list goes on, known or not.
        while (glue := _OR_GLUE_RE.match(work.s, end)) is not None:
            found = _vocab_at(work.s, glue.end())
            if found is not None:
                m, (kind, key, canonical) = found
                draft.add_exclusion(key if kind != "brand" else "brand", canonical)
                end = m.end()
                continue
            word_end = _negated_word(work.s, glue.end(), draft)
            if word_end is None:
                break
            end = word_end
        work.claim(start, end)
        pos = end


def _negated_word(text: str, at: int, draft: _Draft) -> int | None:
    """Exclude the word at ``at`` (no vocabulary word: the caller tried); its end, or ``None``
    for a word that carries no meaning ("not too", "no the")."""
    token = _TOKEN_RE.match(text, at)
    if token is None:
        return None
    word = token.group(0).strip(".'")
    if not word or word in STOPWORDS or word in _CUES_BY_WORD or word in {"too", "so"}:
        return None
    draft.add_exclusion(None, word)
    return token.end()


def _size_value(raw: str) -> str:
    raw = raw.strip()
    value = SIZE_OF.get(raw)
    if value is None:
        value = raw.upper() if raw[:1].isalpha() or raw[-1:] in "sml" else raw
        value = re.sub(r"\s?([x/])\s?", lambda g: g.group(1), value)
        if re.fullmatch(r"\d{1,2}(?:\.5)?w", value):
            value = value[:-1] + " wide"
    return value


def _pass_sizes(work: _Work, draft: _Draft) -> None:
    for m in work.take(_SIZE_RE):
        raw = m.group("v") or m.group("w") or m.group("a") or m.group("bed") or ""
        if m.group("bed"):
            draft.add("option", "size", raw)
            continue
        draft.add("option", "size", _size_value(raw))
        if m.group("v"):  # "size 9 or 10", "size s, m or l": the list goes on in kind
            numeric = raw[:1].isdigit()
            pos = m.end()
            while (more := _MORE_SIZES_RE.match(work.s, pos)) is not None:
                if more.group("v")[:1].isdigit() != numeric:
                    break
                draft.add("option", "size", _size_value(more.group("v")))
                work.claim(more.start(), more.end())
                pos = more.end()
    for m in work.take(_SIZE_ABBR_RE):
        draft.add("option", "size", SIZE_OF.get(m.group("v"), m.group("v").upper()))


def _pass_vocabulary(work: _Work, draft: _Draft) -> None:
    for m in work.take(_BRAND_RE):
        draft.brand = BRAND_OF[m.group(0)]
    if draft.brand is None:
        for m in work.matches(_BRAND_CUE_RE):
            name = m.group("a") or m.group("b") or m.group("c") or ""
            letter = len(name) == 1 and not m.group("c")  # "brand a" is a brand; "a brand" not
            if (name in STOPWORDS and not letter) or name in _NOT_BRANDS:
                continue
            work.claim(m.start(), m.end())
            draft.brand = f"Brand {name.upper()}" if len(name) == 1 else name.title()
            break
    # Categories first claim nothing: a compound like "fleece jacket" must beat "fleece".
    categories = list(_CATEGORY_RE.finditer(work.s))
    chosen = _head_category(work.s, categories)
    if chosen is not None:
        draft.category = CATEGORY_OF[chosen.group(0)]
        work.claim(chosen.start(), chosen.end())
    for pattern, kind, key, table in (
        (_COLOR_RE, "option", "color", COLOR_OF),
        (_MATERIAL_RE, "attribute", "material", MATERIAL_OF),
        (_GENDER_RE, "attribute", "gender", GENDER_OF),
    ):
        for m in work.take(pattern):
            draft.add(kind, key, table[m.group(0)])
    for m in work.take(_ATTRIBUTE_RE):
        key, canonical = ATTRIBUTE_OF[m.group(0)]
        draft.add("attribute", key, canonical)


def _head_category(text: str, found: list[re.Match[str]]) -> re.Match[str] | None:
    """The category noun heading the first phrase: the last one before a break like 'for'."""
    if not found:
        return None
    first = found[0]
    brk = _SEGMENT_BREAK_RE.search(text, first.end())
    limit = brk.start() if brk else len(text)
    head = first
    for m in found[1:]:
        if m.start() >= limit:
            break
        between = text[head.end() : m.start()]
        if _GAP in between.strip():
            break
        head = m
    return head


def _pass_bare_sizes(work: _Work, draft: _Draft) -> None:
    if draft.category not in SIZED_CATEGORIES or "size" in draft.options:
        return
    for m in work.matches(_BARE_NUMBER_RE):
        value = Decimal(m.group("v"))
        if Decimal(1) <= value <= Decimal(60):
            work.claim(m.start(), m.end())
            draft.add("option", "size", m.group("v"))
            return
    if draft.category in LETTER_SIZED_CATEGORIES:
        # "a large t-shirt": the bare word is the size ("in large" is read by _pass_sizes).
        for m in work.matches(_BARE_SIZE_WORD_RE):
            work.claim(m.start(), m.end())
            draft.add("option", "size", SIZE_OF[m.group("v")])
            return


def _pass_text(work: _Work, draft: _Draft) -> None:
    for m in _TOKEN_RE.finditer(work.s):
        token = m.group(0).strip(".'-")
        if not token or token in STOPWORDS or token in _CUES_BY_WORD:
            continue
        if token.endswith("'s") and token[:-2] in STOPWORDS:
            continue
        if token not in draft.text:
            draft.text.append(token)


def _extract(request: str) -> _Draft:
    draft = _Draft()
    work = _Work(_correct_typos(_normalise(request)))
    for step in (
        _pass_flags,
        _pass_price,
        _pass_sort,
        _pass_units,
        _pass_negation,
        _pass_sizes,
        _pass_vocabulary,
        _pass_bare_sizes,
        _pass_text,
    ):
        step(work, draft)
    return draft


# ---------------------------------------------------------------------------- follow-ups


def _is_follow_up(request: str) -> bool:
    text = _normalise(request)[:200] + " "
    if text.startswith(FOLLOW_UP_OPENERS):
        return True
    padded = " " + " ".join(re.sub(r"[^\w' ]", " ", text).split()) + " "
    return any(f" {marker} " in padded for marker in FOLLOW_UP_MARKERS)


def _merge(base: _Draft, new: _Draft, request: str) -> _Draft:
    """Apply follow-up ``new`` to ``base``; an unrelated request replaces it."""
    cue = _is_follow_up(request)
    if new.category and new.category != base.category and not cue:
        return new
    if not cue and not new.constrained() and new.text:
        return new
    merged = _Draft(
        text=list(base.text),
        category=new.category or base.category,
        brand=new.brand or base.brand,
        attributes={k: list(v) for k, v in base.attributes.items()},
        options={k: list(v) for k, v in base.options.items()},
        price_min=base.price_min,
        price_max=base.price_max,
        currency=base.currency,
        sort=new.sort if new.sort != "relevance" else base.sort,
        min_rating=new.min_rating if new.min_rating is not None else base.min_rating,
        available_only=new.available_only or base.available_only,
    )
    if new.category and new.category != base.category:
        merged.text = []
        if new.category not in SIZED_CATEGORIES:
            # "and a water bottle" after "running shoes for women size 8": a size and a
            # gender are the clothes' and shoes', not a water bottle's.
            merged.options.pop("size", None)
            merged.attributes.pop("gender", None)
    for token in new.text:
        if token not in merged.text:
            merged.text.append(token)
    merged.attributes.update({k: list(v) for k, v in new.attributes.items()})
    merged.options.update({k: list(v) for k, v in new.options.items()})
    if new.has_price():
        merged.price_min, merged.price_max = new.price_min, new.price_max
        merged.currency = new.currency
    included = {
        (key, value)
        for table in (new.attributes, new.options)
        for key, values in table.items()
        for value in values
    }
    merged.exclude = [e for e in base.exclude if e not in included]
    for key, value in new.exclude:
        merged.add_exclusion(key, value)
        for table in (merged.attributes, merged.options):
            if key in table and value in table[key]:
                table[key] = [v for v in table[key] if v != value]
                if not table[key]:
                    del table[key]
        if key == "category" and merged.category == value:
            merged.category = None
        if key == "brand" and merged.brand == value:
            merged.brand = None
    return merged


# --------------------------------------------------------------------------------- entry


def price_clash(request: str) -> tuple[Decimal, Decimal] | None:
    """The lower and the upper bound of a request that asks for a price above an amount and
    below a smaller one ("less than 500 but more than 1000"), or ``None``. :func:`parse`
    reads such bounds as the range between them."""
    try:
        draft = _extract(request) if isinstance(request, str) else None
    except Exception:  # as parse: a bug must not take the search box down
        return None
    if draft is None or not draft.clash or draft.price_min is None or draft.price_max is None:
        return None
    return draft.price_min, draft.price_max


def parse(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
    """Parse a shopper's ``request`` (refining earlier ``context`` requests) into a query.

    Never raises for a ``str`` request; non-``str`` context entries are ignored.
    """
    if not isinstance(request, str):
        request = ""
    try:
        draft: _Draft | None = None
        for turn in list(context)[-MAX_CONTEXT_TURNS:]:
            if isinstance(turn, str) and turn.strip():
                found = _extract(turn)
                draft = found if draft is None else _merge(draft, found, turn)
        current = _extract(request)
        if draft is not None:
            current = _merge(draft, current, request)
        return current.to_query()
    except Exception:  # a bug must not take the search box down; degrade to plain text
        tokens = _TOKEN_RE.findall(_normalise(request))
        return SearchQuery(text=" ".join(tokens[:_MAX_TEXT_TOKENS]))
