"""English words the families vary requests with: synonyms, slang, occasions, gift recipients.

Every synonym names exactly its canonical category (the gold keeps the canonical), so none is a
narrower or wider product ("mechanical keyboard" has no synonym: "keyboard" is wider).
"""

from __future__ import annotations

from typing import Final

__all__ = ["AVAILABILITY", "OCCASIONS", "RELATIONS", "SLANG", "SYNONYMS"]

SYNONYMS: Final[dict[str, tuple[str, ...]]] = {
    "sneakers": ("tennis shoes",),
    "running shoes": ("runners",),
    "t-shirt": ("tee", "t shirt", "tshirt"),
    "hoodie": ("hooded sweatshirt",),
    "sweater": ("jumper", "pullover"),
    "pants": ("trousers",),
    "leggings": ("yoga pants",),
    "backpack": ("rucksack", "bookbag"),
    "wristwatch": ("watch",),
    "smart watch": ("smartwatch",),
    "headphones": ("headset",),
    "wireless earbuds": ("earbuds", "earphones"),
    "bluetooth speaker": ("speaker",),
    "smartphone": ("cell phone", "mobile phone"),
    "laptop": ("notebook computer",),
    "coffee maker": ("coffee machine",),
    "espresso machine": ("espresso maker",),
    "office chair": ("desk chair",),
    "vacuum cleaner": ("vacuum", "hoover"),
    "bicycle": ("bike",),
    "cycling helmet": ("bike helmet", "bicycle helmet"),
    "dumbbell set": ("dumbbells",),
    "jigsaw puzzle": ("puzzle",),
    "pet bed": ("dog bed",),
    "led light bulb": ("light bulb",),
    "portable charger": ("power bank",),
    "perfume": ("fragrance",),
    "grill": ("bbq", "barbecue"),
    "e-reader": ("ereader",),
    "indoor security camera": ("security camera",),
    "smart thermostat": ("thermostat",),
    "yoga mat": ("exercise mat",),
    "electric toothbrush": ("power toothbrush",),
    "skillet": ("frying pan",),
    "bed sheet set": ("sheet set",),
    "throw pillow": ("decorative pillow", "accent pillow"),
    "moisturizer": ("moisturiser",),
    "coffee beans": ("whole bean coffee",),
    "building set": ("building kit",),
    "tea kettle": ("teakettle",),
    "wall clock": ("clock",),
    "notebook": ("journal",),
    "bookshelf": ("bookcase",),
    "air purifier": ("air cleaner",),
    "garden hose": ("hose",),
    "makeup kit": ("makeup set",),
}
"""Canonical category -> other nouns for exactly that category."""

SLANG: Final[dict[str, tuple[str, ...]]] = {
    "sneakers": ("kicks",),
    "running shoes": ("kicks",),
    "t-shirt": ("tee",),
    "hoodie": ("hoody",),
    "sunglasses": ("shades",),
    "headphones": ("cans",),
    "wireless earbuds": ("buds",),
    "smartphone": ("phone",),
    "bicycle": ("bike", "ride"),
    "wristwatch": ("watch",),
    "vacuum cleaner": ("vac",),
    "water bottle": ("bottle",),
    "grill": ("bbq",),
    "bluetooth speaker": ("speaker",),
    "perfume": ("scent",),
}
"""Canonical category -> casual nouns for it."""

OCCASIONS: Final[tuple[str, ...]] = (
    "a wedding",
    "the gym",
    "my commute",
    "a beach vacation",
    "the office",
    "date night",
    "a birthday party",
    "college",
    "a road trip",
    "the holidays",
)
"""Occasions a request may name; their content words are free text in the gold."""

RELATIONS: Final[tuple[str, ...]] = (
    "mom", "dad", "sister", "brother", "wife", "husband", "boss", "friend", "grandma",
    "grandpa", "nephew", "niece", "teacher", "coworker", "girlfriend", "boyfriend",
)  # fmt: skip
"""Gift recipients."""

AVAILABILITY: Final[tuple[str, ...]] = (
    "in stock",
    "in stock only",
    "available now",
    "ready to ship",
    "that ships today",
)
"""Phrases meaning "only what is in stock"."""
