"""Questions about one product's options: "what sizes does it come in?", "which colours are
there?", "what are the options?".

:func:`find_option_question` reads which option a message asks about; :func:`describe_options`
answers it from the product's variants (what each option offers, and what is sold out).
"""

from __future__ import annotations

import re

from ..catalog import Product
from ..retrieval import canonical_key

__all__ = ["ALL_OPTIONS", "describe_options", "find_option_question", "offers_option"]

ALL_OPTIONS = ""
""":func:`find_option_question`'s answer for "what are the options?": every option."""

MAX_WORDS = 10

_ABOUT_IT = r"(?:it|they|this|that|these|those|you|i|there|the\s+\w+)"
_QUESTION_RE = re.compile(
    r"\b(?:what|which)\s+(?:other\s+|different\s+)?(?P<what>[a-z]+(?:\s[a-z]+)?)\s+"
    rf"(?:does|do|is|are|can|could)\s+(?:it\s+|they\s+)?(?:come\s+in\b|{_ABOUT_IT}\b)"
    r"|\bwhat\s+(?:are\s+)?(?:the\s+|its\s+|their\s+)?(?P<all>options|choices|variants)\b"
    r"|\b(?:in|with)\s+(?:what|which)\s+(?P<what2>[a-z]+)\b"
)
_OPTION_WORDS = frozenset({"options", "choices", "variants", "option", "choice", "variant"})
_NOT_OPTIONS = frozenset(
    {"one", "of", "product", "item", "thing", "model", "those", "these", "them", "they", "ones"}
)


def _singular(word: str) -> str:
    word = canonical_key(word)
    for ending, replacement in (("ies", "y"), ("sses", "ss"), ("es", "e"), ("s", "")):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            return word[: -len(ending)] + replacement
    return word


def find_option_question(text: str) -> str | None:
    """The option ``text`` asks about, singular ("size"; :data:`ALL_OPTIONS` for all of them),
    or ``None`` when it asks about none."""
    lowered = " ".join(text.casefold().split())
    if len(lowered.split()) > MAX_WORDS:
        return None
    found = _QUESTION_RE.search(lowered)
    if found is None:
        return None
    if found["all"]:
        return ALL_OPTIONS
    what = found["what"] or found["what2"] or ""
    if what in _OPTION_WORDS:
        return ALL_OPTIONS
    asked = _singular(what.split()[-1])
    # "which one is the best rated?" asks for a product, not an option.
    return None if asked in _NOT_OPTIONS else asked


def _offered(product: Product) -> dict[str, tuple[list[str], list[str]]]:
    """Each option name with its values, and the values no variant in stock has."""
    values: dict[str, dict[str, bool]] = {}
    for variant in product.variants:
        for name, value in variant.options.items():
            seen = values.setdefault(name, {})
            seen[value] = seen.get(value, False) or variant.available
    return {
        name: (list(seen), [v for v, in_stock in seen.items() if not in_stock])
        for name, seen in values.items()
    }


def _matches(asked: str, name: str) -> bool:
    words = [_singular(w) for w in name.casefold().split()]
    return asked in words or _singular(name.casefold()) == asked


def offers_option(products: list[Product], asked: str) -> bool:
    """Whether one of ``products`` has the option ``asked`` (any, for :data:`ALL_OPTIONS`):
    "what hardshell sets do you have?" asks for no option of suitcases, but for suitcases."""
    return any(
        asked == ALL_OPTIONS or _matches(asked, name)
        for product in products
        for name in _offered(product)
    )


def describe_options(product: Product, asked: str) -> str:
    """What ``product`` offers under the option ``asked`` (every option for
    :data:`ALL_OPTIONS`), with the values sold out everywhere."""
    offered = _offered(product)
    if not offered:
        return f"{product.title}: one version only, no options to choose."
    names = [n for n in offered if asked == ALL_OPTIONS or _matches(asked, n)]
    if not names:
        listed = ", ".join(offered)
        return f"{product.title}: no choice of {asked}; the options are {listed}."
    rows = []
    for name in names:
        values, sold_out = offered[name]
        line = f"{name} {', '.join(_ordered(values))}"
        if sold_out and len(sold_out) < len(values):
            line += f" (sold out: {', '.join(_ordered(sold_out))})"
        elif sold_out:
            line += " (all sold out)"
        rows.append(line)
    if len(rows) == 1:
        return f"{product.title}: {rows[0]}."
    return "\n".join([f"{product.title}, by option:", *(f"- {row}" for row in rows)])


def _ordered(values: list[str]) -> list[str]:
    """Numbers by value ("7, 9, 12"), then words in catalog order."""

    def key(value: str) -> tuple[int, float]:
        number = re.match(r"\d+(?:\.\d+)?", value)
        return (0, float(number.group())) if number else (1, 0.0)

    return sorted(values, key=key)
