"""What the store sells, in a few lines: "what do you sell?", "what kinds of products do you
have?".

:class:`CatalogOverview` is made once from the catalog the assistant searches: each department
(a product's first category) with its kinds of product (its last category, else its title),
the most stocked first. :data:`CATALOG_QUESTION` recognises the question.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from ..catalog import Product

__all__ = ["CATALOG_QUESTION", "CatalogOverview"]

CATALOG_QUESTION = re.compile(
    r"\bwhat\s+(?:do|does|can)\s+(?:you|the\s+store|this\s+store|your\s+store|y'?all)\s+"
    r"(?:sell|have|carry|stock|offer)(?:\s+(?:here|now|today|at\s+all|in\s+(?:the|your|this)"
    r"\s+(?:store|shop)))?\s*[?.!]*\s*$"
    r"|\bwhat\s+(?:kinds?|sorts?|types?)\s+of\s+(?:products?|things|stuff|items|goods)\b"
    r"|\bwhat\s+(?:products|categories|departments)\s+(?:do|are|does|can)\b"
    r"|\bwhat(?:'s|\s+is)\s+in\s+(?:the|your|this)\s+(?:store|shop|catalog(?:ue)?)\b"
    r"|\b(?:show|list)\s+(?:me\s+)?(?:all\s+)?(?:your\s+|the\s+)?(?:categories|departments)\b",
    re.IGNORECASE,
)
"""A question about what the store sells as a whole."""
MAX_DEPARTMENTS = 12
MAX_EXAMPLES = 6
MAX_KINDS = 6
_OTHER = "Other"


@dataclass(frozen=True)
class CatalogOverview:
    """Departments with the number of products of each kind in them, and each kind's
    products' lowest prices (what example requests are made from)."""

    departments: dict[str, Counter[str]] = field(default_factory=dict)
    prices: dict[str, list[Decimal]] = field(default_factory=dict)

    @classmethod
    def of(cls, products: Iterable[Product]) -> CatalogOverview:
        departments: dict[str, Counter[str]] = {}
        prices: dict[str, list[Decimal]] = {}
        for product in products:
            path = [part for part in product.category if part.strip()]
            department = path[0] if path else _OTHER
            kind = path[-1] if len(path) > 1 else product.title
            departments.setdefault(department, Counter())[kind] += 1
            offered = [v.price for v in product.variants if v.available]
            if offered:
                prices.setdefault(kind, []).append(min(offered))
        return cls(departments, prices)

    def examples(self, limit: int = MAX_EXAMPLES) -> list[str]:
        """Requests a shopper could start with that this store answers: what it sells, its
        most stocked kinds of product (one with a price most of them are under), a policy."""
        kinds = Counter[str]()
        for counted in self.departments.values():
            kinds.update(counted)
        ranked = [kind for kind, _ in kinds.most_common()]
        out = ["What do you sell?"]
        if ranked:
            out.append(f"Show me {ranked[0].lower()}")
        for kind in ranked[1:3]:
            prices = sorted(self.prices.get(kind, []))
            if prices:
                typical = prices[(len(prices) * 3) // 4]  # three in four of them cost less
                out.append(f"{kind.lower().capitalize()} under ${math.floor(typical) + 1}")
            else:
                out.append(f"Do you have {kind.lower()}?")
        out.append("What is your return policy?")
        return out[:limit]

    def __bool__(self) -> bool:
        return bool(self.departments)

    def sells(self, category: str) -> bool | None:
        """Whether some kind of product in the store is ``category`` ("hoodie" is the kind
        "Hoodies"); ``None`` when the catalog is not known."""
        if not self.departments:
            return None
        wanted = _singular(category)
        return any(
            wanted in _singular(kind) or _singular(kind) in wanted
            for kinds in self.departments.values()
            for kind in kinds
        )

    def departments_line(self) -> str:
        """The departments in one line, largest first."""
        ranked = sorted(self.departments, key=lambda d: -sum(self.departments[d].values()))
        return ", ".join(ranked)

    def describe(self) -> str:
        """The departments, largest first, each with its most stocked kinds."""
        if not self.departments:
            return "I can search the store for you: tell me what you are looking for."
        total = sum(sum(kinds.values()) for kinds in self.departments.values())
        ranked = sorted(
            self.departments.items(), key=lambda item: (-sum(item[1].values()), item[0])
        )
        rows = [f"The store has {total} product{'s' if total != 1 else ''}:"]
        for department, kinds in ranked[:MAX_DEPARTMENTS]:
            named = [kind for kind, _ in sorted(kinds.items(), key=lambda k: (-k[1], k[0]))]
            more = f" and {len(named) - MAX_KINDS} more" if len(named) > MAX_KINDS else ""
            rows.append(f"- {department}: {', '.join(named[:MAX_KINDS])}{more}")
        if len(ranked) > MAX_DEPARTMENTS:
            rows.append(f"- and {len(ranked) - MAX_DEPARTMENTS} more departments")
        rows.append("Tell me what you are looking for ('a blue t-shirt under $60').")
        return "\n".join(rows)


def _singular(words: str) -> str:
    """Lower case, each word without a plural -s ("T-Shirts" -> "t-shirt")."""
    return " ".join(
        w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w
        for w in words.casefold().split()
    )
