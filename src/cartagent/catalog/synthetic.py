"""A synthetic catalog of any size: ``synthetic_catalog(n, seed)``.

Products are drawn from ``KINDS``, a table of product kinds across departments (clothing,
shoes, electronics, home & kitchen, sports & outdoors, beauty, grocery, pets, toys). Each kind
knows its category path, brands, descriptive attributes (some of which make up the title, as in
"Levi's Women's High-Waist Baggy Denim Jeans"), the option axes of its variants (sizes,
colours, capacities, pack counts...), and a price range. Variants are the cross product of a
random subset of each axis, priced in whole cents with shop-like endings (.99, .49, .00) and a
premium for bigger sizes and capacities; about one in eight is out of stock.

The stream is deterministic: one ``random.Random(seed)`` drives it, so the same ``(n, seed)``
gives equal products, and the first ``m`` products of a longer stream are those of
``synthetic_catalog(m, seed)``. Products are built with ``model_construct`` (the generator only
makes valid values; a test validates a sample), which is what makes a million feasible: some
20,000 products a second on a modest machine, one at a time, never holding the whole catalog.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from .product import Product, Variant

__all__ = ["KINDS", "Kind", "synthetic_catalog"]

_SIZES_TOPS = ("XS", "S", "M", "L", "XL", "XXL")
_SIZES_WOMENS_WAIST = tuple(str(w) for w in range(24, 35))
_SIZES_MENS_WAIST = tuple(str(w) for w in range(28, 44, 2))
_SIZES_WOMENS_SHOES = tuple(f"{s / 2:g}" for s in range(10, 23))  # 5 ... 11, half sizes
_SIZES_MENS_SHOES = tuple(f"{s / 2:g}" for s in range(14, 27))  # 7 ... 13, half sizes
_APPAREL_COLORS = (
    "black", "white", "navy", "grey", "blue", "red", "green", "olive", "beige", "brown", "pink",
    "burgundy", "charcoal", "cream",
)  # fmt: skip
_DENIM_COLORS = ("light wash", "medium wash", "dark wash", "black", "white", "grey")
_TECH_COLORS = ("black", "white", "silver", "space grey", "blue", "midnight", "rose gold")
_HOME_COLORS = ("white", "black", "stainless steel", "red", "cream", "sage green", "grey")
_GEAR_COLORS = ("black", "blue", "green", "red", "orange", "purple", "teal", "grey")
_BIG_SIZES = frozenset(("XL", "XXL", "King", "California King"))  # cost a little more


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of product and how to make plausible ones of it."""

    noun: str
    category: tuple[str, ...]
    """Category path; ``{gender}`` is replaced by the product's gender (Women, Men...)."""
    brands: tuple[str, ...]
    attributes: tuple[tuple[str, tuple[str, ...], bool], ...]
    """(name, values, shown in the title), in title order."""
    price: tuple[int, int]
    """Base price range in whole dollars."""
    colors: tuple[str, ...] = ()
    sizes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Size run per gender ("" for any)."""
    axis: tuple[str, tuple[str, ...], float] | None = None
    """A third option axis: (name, values from small to big, price premium per step)."""
    size_step: float = 0.0
    """Price premium per step up the size run (XL and bigger also add $2)."""
    genders: tuple[str, ...] = ()
    blurb: str = ""
    weight: int = 10
    """How often this kind is drawn, relative to the others."""


KINDS: tuple[Kind, ...] = (
    Kind(
        "Jeans", ("Clothing", "{gender}", "Jeans"),
        ("Levi's", "Wrangler", "Lee", "Gap", "Madewell", "AG", "Calvin Klein", "Abercrombie"),
        (
            ("rise", ("high-waist", "mid-rise", "low-rise"), True),
            ("fit", ("baggy", "slim", "straight", "skinny", "bootcut", "wide-leg"), True),
            ("material", ("denim", "stretch denim", "organic cotton denim"), True),
            ("closure", ("button fly", "zip fly"), False),
        ),
        (39, 129), _DENIM_COLORS,
        {"Women": _SIZES_WOMENS_WAIST, "Men": _SIZES_MENS_WAIST},
        genders=("Women", "Men"), blurb="Five-pocket styling and a comfortable all-day fit.",
        weight=14,
    ),
    Kind(
        "T-Shirt", ("Clothing", "{gender}", "T-Shirts"),
        ("Hanes", "Fruit of the Loom", "Champion", "Gap", "Uniqlo", "Carhartt", "Nike", "Adidas"),
        (
            ("neckline", ("crew neck", "v-neck", "henley"), True),
            ("fit", ("regular", "slim", "oversized", "relaxed"), False),
            ("material", ("cotton", "organic cotton", "polyester", "cotton blend", "linen"), True),
            ("sleeve", ("short sleeve", "long sleeve"), True),
        ),
        (9, 45), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women", "Men", "Unisex"), blurb="Soft, breathable and easy to layer.", weight=14,
    ),
    Kind(
        "Dress", ("Clothing", "Women", "Dresses"),
        ("Free People", "Reformation", "J.Crew", "Anthropologie", "Banana Republic", "H&M"),
        (
            ("length", ("mini", "midi", "maxi"), True),
            ("style", ("wrap", "slip", "shirt", "sundress", "a-line", "bodycon"), True),
            ("material", ("linen", "silk", "cotton", "satin", "jersey"), True),
            ("sleeve", ("sleeveless", "short sleeve", "long sleeve"), False),
        ),
        (35, 220), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women",), blurb="Flattering silhouette for day or evening.", weight=8,
    ),
    Kind(
        "Hoodie", ("Clothing", "{gender}", "Hoodies & Sweatshirts"),
        ("Champion", "Nike", "Adidas", "Carhartt", "The North Face", "Under Armour", "Patagonia"),
        (
            ("style", ("pullover", "full-zip"), True),
            ("material", ("fleece", "cotton", "french terry", "recycled polyester"), True),
            ("fit", ("regular", "oversized", "athletic"), False),
            ("hood", ("drawstring hood", "lined hood"), False),
        ),
        (29, 110), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women", "Men", "Unisex"), blurb="Warm, cosy and built for everyday wear.",
    ),
    Kind(
        "Jacket", ("Clothing", "{gender}", "Coats & Jackets"),
        ("The North Face", "Patagonia", "Columbia", "Arc'teryx", "Marmot", "Carhartt", "Levi's"),
        (
            ("feature", ("waterproof", "windproof", "packable", "water-resistant"), True),
            ("style", ("puffer", "rain", "denim", "fleece", "bomber", "softshell"), True),
            ("material", ("nylon", "polyester", "leather", "denim", "recycled polyester"), False),
            ("insulation", ("down", "synthetic", "none"), False),
        ),
        (59, 349), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women", "Men"), blurb="Made to keep the weather out.", weight=8,
    ),
    Kind(
        "Sweater", ("Clothing", "{gender}", "Sweaters"),
        ("J.Crew", "Everlane", "L.L.Bean", "Banana Republic", "Uniqlo", "Ralph Lauren"),
        (
            ("style", ("cardigan", "crewneck", "turtleneck", "v-neck", "cable-knit"), True),
            ("material", ("merino wool", "cashmere", "cotton", "wool blend", "alpaca"), True),
        ),
        (39, 198), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women", "Men"), blurb="A soft knit for cooler days.", weight=6,
    ),
    Kind(
        "Leggings", ("Clothing", "Women", "Activewear"),
        ("Lululemon", "Athleta", "Nike", "Gymshark", "Alo Yoga", "Under Armour"),
        (
            ("rise", ("high-waist", "mid-rise"), True),
            ("length", ("7/8 length", "full length", "capri"), False),
            ("material", ("nylon", "spandex blend", "recycled polyester"), False),
            ("feature", ("squat-proof", "moisture-wicking", "with pockets"), False),
        ),
        (25, 128), _APPAREL_COLORS, {"": _SIZES_TOPS},
        genders=("Women",), blurb="Four-way stretch that moves with you.", weight=6,
    ),
    Kind(
        "Running Shoes", ("Shoes", "{gender}", "Athletic Shoes"),
        ("Nike", "Adidas", "Brooks", "Hoka", "ASICS", "New Balance", "Saucony", "On"),
        (
            ("cushioning", ("max cushion", "neutral", "lightweight"), True),
            ("support", ("neutral", "stability"), False),
            ("material", ("mesh", "knit", "synthetic"), False),
            ("terrain", ("road", "trail"), True),
        ),
        (59, 189), _GEAR_COLORS, {"Women": _SIZES_WOMENS_SHOES, "Men": _SIZES_MENS_SHOES},
        genders=("Women", "Men"), blurb="Responsive cushioning mile after mile.", weight=8,
    ),
    Kind(
        "Sneakers", ("Shoes", "{gender}", "Sneakers"),
        ("Vans", "Converse", "Nike", "Adidas", "New Balance", "Puma", "Reebok", "Skechers"),
        (
            ("style", ("low-top", "high-top", "slip-on", "platform"), True),
            ("material", ("canvas", "leather", "suede", "knit"), True),
        ),
        (45, 160), _APPAREL_COLORS, {"Women": _SIZES_WOMENS_SHOES, "Men": _SIZES_MENS_SHOES},
        genders=("Women", "Men"), blurb="Everyday comfort with classic style.", weight=8,
    ),
    Kind(
        "Boots", ("Shoes", "{gender}", "Boots"),
        ("Timberland", "Dr. Martens", "UGG", "Sorel", "Merrell", "Blundstone", "Red Wing"),
        (
            ("style", ("chelsea", "hiking", "combat", "ankle", "snow", "work"), True),
            ("material", ("leather", "suede", "synthetic", "rubber"), True),
            ("feature", ("waterproof", "insulated", "slip-resistant"), False),
        ),
        (79, 289), ("black", "brown", "tan", "grey", "olive"),
        {"Women": _SIZES_WOMENS_SHOES, "Men": _SIZES_MENS_SHOES},
        genders=("Women", "Men"), blurb="Built tough for every season.", weight=6,
    ),
    Kind(
        "Sandals", ("Shoes", "{gender}", "Sandals"),
        ("Birkenstock", "Teva", "Chaco", "Crocs", "Havaianas", "Rainbow"),
        (
            ("style", ("slide", "flip-flop", "sport", "platform"), True),
            ("material", ("leather", "rubber", "cork", "eva"), False),
        ),
        (19, 150), ("black", "brown", "tan", "white", "navy"),
        {"Women": _SIZES_WOMENS_SHOES, "Men": _SIZES_MENS_SHOES},
        genders=("Women", "Men"), blurb="Easy summer comfort.", weight=4,
    ),
    Kind(
        "Headphones", ("Electronics", "Audio", "Headphones"),
        ("Sony", "Bose", "Sennheiser", "Audio-Technica", "Beats", "JBL", "Skullcandy", "Anker"),
        (
            ("connectivity", ("wireless", "wired"), True),
            ("style", ("over-ear", "on-ear"), True),
            ("feature", ("noise cancelling", "foldable", "lightweight"), True),
            ("battery life", ("20 hours", "30 hours", "40 hours", "60 hours"), False),
        ),
        (29, 449), _TECH_COLORS, weight=7, blurb="Rich sound with deep bass.",
    ),
    Kind(
        "Earbuds", ("Electronics", "Audio", "Earbuds"),
        ("Apple", "Samsung", "Sony", "Jabra", "Anker", "JBL", "Beats", "Google"),
        (
            ("connectivity", ("true wireless", "bluetooth"), True),
            ("feature", ("noise cancelling", "sweatproof", "sport"), True),
            ("water resistance", ("IPX4", "IPX5", "IPX7"), False),
        ),
        (19, 279), _TECH_COLORS, weight=7, blurb="All-day comfort and a secure fit.",
    ),
    Kind(
        "Bluetooth Speaker", ("Electronics", "Audio", "Speakers"),
        ("JBL", "Bose", "Sonos", "Ultimate Ears", "Anker", "Marshall", "Sony"),
        (
            ("form factor", ("mini", "portable", "party"), True),
            ("water resistance", ("waterproof", "splashproof"), True),
            ("battery life", ("10 hours", "12 hours", "20 hours", "24 hours"), False),
        ),
        (25, 399), _GEAR_COLORS, weight=5, blurb="Big sound that goes anywhere.",
    ),
    Kind(
        "Laptop", ("Electronics", "Computers & Tablets", "Laptops"),
        ("Dell", "HP", "Lenovo", "Apple", "ASUS", "Acer", "Microsoft", "MSI"),
        (
            ("screen size", ("13-inch", "14-inch", "15.6-inch", "16-inch"), True),
            ("type", ("ultrabook", "gaming", "2-in-1", "business"), True),
            ("processor", ("Intel Core i5", "Intel Core i7", "AMD Ryzen 7", "Apple M3"), False),
            ("ram", ("8GB", "16GB", "32GB"), False),
        ),
        (399, 2499), ("silver", "space grey", "black", "blue"),
        axis=("storage", ("256GB SSD", "512GB SSD", "1TB SSD", "2TB SSD"), 0.12),
        weight=6, blurb="Fast, light and ready for work or play.",
    ),
    Kind(
        "Smartphone", ("Electronics", "Phones", "Smartphones"),
        ("Apple", "Samsung", "Google", "Motorola", "OnePlus", "Nothing"),
        (
            ("network", ("5G", "4G LTE"), True),
            ("condition", ("new", "renewed"), False),
            ("camera", ("dual camera", "triple camera"), False),
        ),
        (149, 1399), _TECH_COLORS,
        axis=("storage", ("64GB", "128GB", "256GB", "512GB", "1TB"), 0.1),
        weight=5, blurb="A brilliant display and all-day battery.",
    ),
    Kind(
        "Smart Watch", ("Electronics", "Wearables", "Smart Watches"),
        ("Apple", "Samsung", "Garmin", "Fitbit", "Google", "Amazfit"),
        (
            ("feature", ("GPS", "heart rate monitor", "sleep tracking", "cellular"), True),
            ("band material", ("silicone", "leather", "stainless steel", "nylon"), False),
        ),
        (79, 799), _TECH_COLORS, {"": ("38mm", "40mm", "41mm", "44mm", "45mm")},
        size_step=0.05, weight=4, blurb="Track workouts, sleep and notifications at a glance.",
    ),
    Kind(
        "Coffee Maker", ("Home & Kitchen", "Kitchen Appliances", "Coffee Makers"),
        ("Keurig", "Cuisinart", "Mr. Coffee", "Breville", "De'Longhi", "Ninja", "Hamilton Beach"),
        (
            ("type", ("drip", "single-serve", "espresso", "pour-over", "cold brew"), True),
            ("feature", ("programmable", "thermal", "compact", "smart"), True),
        ),
        (29, 699), _HOME_COLORS, axis=("capacity", ("4-cup", "8-cup", "12-cup", "14-cup"), 0.08),
        weight=5, blurb="Fresh, hot coffee at the touch of a button.",
    ),
    Kind(
        "Skillet", ("Home & Kitchen", "Cookware", "Frying Pans & Skillets"),
        ("Lodge", "T-fal", "All-Clad", "Calphalon", "OXO", "Le Creuset", "GreenPan"),
        (
            ("material", ("cast iron", "stainless steel", "nonstick", "carbon steel"), True),
            ("feature", ("oven-safe", "dishwasher-safe", "induction compatible"), False),
        ),
        (19, 229), (), {"": ('8"', '10"', '12"')},
        size_step=0.25, weight=5, blurb="Even heating for perfect searing.",
    ),
    Kind(
        "Bed Sheet Set", ("Home & Kitchen", "Bedding", "Sheets"),
        ("Brooklinen", "Parachute", "Amazon Basics", "Threshold", "Pottery Barn", "Boll & Branch"),
        (
            ("material", ("percale", "sateen", "linen", "bamboo", "microfiber"), True),
            ("thread count", ("300", "400", "600", "800"), False),
            ("feature", ("deep pocket", "cooling", "wrinkle-resistant"), False),
        ),
        (29, 349), ("white", "ivory", "grey", "navy", "sage green", "blush"),
        {"": ("Twin", "Full", "Queen", "King", "California King")},
        size_step=0.12, weight=5, blurb="Soft, breathable sheets for better sleep.",
    ),
    Kind(
        "Throw Pillow", ("Home & Kitchen", "Home Decor", "Decorative Pillows"),
        ("Pottery Barn", "West Elm", "Threshold", "Safavieh", "Anthropologie"),
        (
            ("material", ("linen", "velvet", "cotton", "boucle", "faux fur"), True),
            ("style", ("boho", "modern", "farmhouse", "geometric"), False),
        ),
        (15, 89), _APPAREL_COLORS, {"": ('18" x 18"', '20" x 20"', '12" x 20"')},
        size_step=0.1, weight=3, blurb="An easy way to refresh a room.",
    ),
    Kind(
        "Yoga Mat", ("Sports & Outdoors", "Fitness", "Yoga Mats"),
        ("Manduka", "Gaiam", "Lululemon", "Jade", "Liforme", "Amazon Basics"),
        (
            ("material", ("natural rubber", "TPE", "PVC", "cork"), True),
            ("thickness", ("3mm", "4mm", "5mm", "6mm"), False),
            ("feature", ("non-slip", "extra thick", "travel"), True),
        ),
        (19, 140), _GEAR_COLORS, weight=4, blurb="Grip and cushioning for every pose.",
    ),
    Kind(
        "Water Bottle", ("Sports & Outdoors", "Hydration", "Water Bottles"),
        ("Hydro Flask", "Yeti", "CamelBak", "Nalgene", "Stanley", "Owala", "S'well"),
        (
            ("material", ("stainless steel", "BPA-free plastic", "glass"), True),
            ("feature", ("insulated", "leakproof", "straw lid"), True),
        ),
        (12, 55), _GEAR_COLORS, axis=("capacity", ("16 oz", "24 oz", "32 oz", "40 oz"), 0.1),
        weight=5, blurb="Keeps drinks cold for 24 hours.",
    ),
    Kind(
        "Backpack", ("Sports & Outdoors", "Hiking", "Backpacks"),
        ("Osprey", "JanSport", "Herschel", "The North Face", "Patagonia", "Deuter", "Gregory"),
        (
            ("style", ("hiking", "daypack", "laptop", "travel"), True),
            ("material", ("nylon", "polyester", "canvas", "recycled nylon"), False),
            ("feature", ("water-resistant", "padded laptop sleeve", "hydration compatible"), False),
        ),
        (35, 260), _GEAR_COLORS, axis=("capacity", ("20L", "28L", "35L", "50L"), 0.08),
        weight=5, blurb="Comfortable carry with room for everything.",
    ),
    Kind(
        "Tent", ("Sports & Outdoors", "Camping", "Tents"),
        ("Coleman", "REI Co-op", "Big Agnes", "MSR", "Marmot", "Kelty"),
        (
            ("season", ("3-season", "4-season"), True),
            ("style", ("backpacking", "dome", "cabin", "instant"), True),
        ),
        (69, 699), ("green", "orange", "grey", "blue"),
        axis=("capacity", ("1-person", "2-person", "4-person", "6-person"), 0.15),
        weight=3, blurb="Sets up in minutes and stands up to the wind.",
    ),
    Kind(
        "Perfume", ("Beauty", "Fragrance", "{gender}'s Fragrance"),
        ("Chanel", "Dior", "Versace", "Yves Saint Laurent", "Calvin Klein", "Tom Ford", "Gucci"),
        (
            ("scent family", ("floral", "woody", "fresh", "oriental", "citrus"), True),
            ("concentration", ("eau de parfum", "eau de toilette", "parfum"), True),
        ),
        (35, 320), (), axis=("size", ("30ml", "50ml", "100ml"), 0.35),
        genders=("Women", "Men"), weight=4, blurb="A signature scent that lasts all day.",
    ),
    Kind(
        "Moisturizer", ("Beauty", "Skin Care", "Moisturizers"),
        ("CeraVe", "Neutrogena", "Olay", "La Roche-Posay", "Clinique", "Cetaphil", "The Ordinary"),
        (
            ("skin type", ("dry", "oily", "sensitive", "combination", "all skin types"), False),
            ("feature", ("fragrance-free", "SPF 30", "hyaluronic acid", "oil-free"), True),
            ("form", ("cream", "lotion", "gel"), True),
        ),
        (9, 89), (), axis=("size", ("1.7 oz", "3 oz", "8 oz", "16 oz"), 0.3),
        weight=4, blurb="Lightweight daily hydration.",
    ),
    Kind(
        "Coffee Beans", ("Grocery", "Coffee", "Whole Bean Coffee"),
        ("Starbucks", "Lavazza", "Peet's", "Death Wish Coffee", "Intelligentsia", "Illy"),
        (
            ("roast", ("light roast", "medium roast", "dark roast", "espresso roast"), True),
            ("origin", ("Colombia", "Ethiopia", "Sumatra", "Brazil", "blend"), False),
            ("certification", ("organic", "fair trade", "decaf"), True),
        ),
        (8, 45), (), {"": ("12 oz", "2 lb", "5 lb")},
        axis=("pack", ("1 pack", "2 pack", "4 pack"), 0.9),
        size_step=1.2, weight=4, blurb="Roasted in small batches for a rich, smooth cup.",
    ),
    Kind(
        "Dog Bed", ("Pet Supplies", "Dogs", "Beds"),
        ("Furhaven", "PetFusion", "Casper", "Frisco", "Big Barker", "Orvis"),
        (
            ("style", ("orthopedic", "bolster", "donut", "elevated"), True),
            ("material", ("memory foam", "plush", "faux fur", "canvas"), True),
            ("feature", ("washable cover", "waterproof liner", "non-slip bottom"), False),
        ),
        (25, 220), ("grey", "brown", "navy", "cream", "charcoal"),
        {"": ("S", "M", "L", "XL")}, size_step=0.2,
        weight=3, blurb="Supportive rest for dogs of every size.",
    ),
    Kind(
        "Building Set", ("Toys & Games", "Building Toys", "Building Sets"),
        ("LEGO", "Mega Bloks", "K'NEX", "Magna-Tiles", "Melissa & Doug"),
        (
            ("theme", ("city", "space", "castle", "vehicles", "animals", "architecture"), True),
            ("age range", ("4+", "6+", "8+", "12+", "18+"), False),
        ),
        (14, 249), (), axis=("pieces", ("100 pieces", "500 pieces", "1000 pieces"), 0.6),
        weight=3, blurb="Hours of creative building fun.",
    ),
)  # fmt: skip
"""Every kind the generator draws from."""


def synthetic_catalog(n: int, seed: int = 0) -> Iterator[Product]:
    """Yield ``n`` deterministic, realistic products (ids ``syn<seed>-<i>``), one at a time."""
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    rng = random.Random(seed)
    random_ = rng.random
    weighted = [_plan(kind) for kind in KINDS for _ in range(kind.weight)]
    for index in range(n):
        plan = weighted[int(random_() * len(weighted))]
        yield _product(rng, plan, f"syn{seed}-{index:07d}")


@dataclass(frozen=True, eq=False)
class _Plan:
    """A kind with what every product of it shares worked out once."""

    kind: Kind
    attributes: tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...]
    """(name, values, their title words or None when not in the title)."""
    categories: dict[str, tuple[str, ...]]


@functools.cache
def _plan(kind: Kind) -> _Plan:
    def title_word(value: str) -> str:
        return value if value[:1].isupper() or value[:1].isdigit() else value.title()

    attributes = tuple(
        (name, values, tuple(title_word(v) for v in values) if in_title else None)
        for name, values, in_title in kind.attributes
    )
    genders = kind.genders or ("",)
    categories = {
        gender: tuple(level.replace("{gender}", gender) for level in kind.category)
        for gender in genders
    }
    return _Plan(kind, attributes, categories)


def _run(
    random_: Callable[[], float], values: tuple[str, ...], shortest: int, longest: int
) -> tuple[str, ...]:
    """A contiguous stretch of a run (of sizes, colours...), as shops rarely stock them all."""
    length = min(len(values), shortest + int(random_() * (longest - shortest + 1)))
    start = int(random_() * (len(values) - length + 1))
    return values[start : start + length]


def _product(rng: random.Random, plan: _Plan, product_id: str) -> Product:
    random_ = rng.random
    kind = plan.kind
    gender = kind.genders[int(random_() * len(kind.genders))] if kind.genders else ""
    brand = kind.brands[int(random_() * len(kind.brands))]
    attributes: dict[str, tuple[str, ...]] = {}
    words = [brand]
    if gender:
        words.append("Unisex" if gender == "Unisex" else f"{gender}'s")
    for name, values, title_words in plan.attributes:
        if attributes and random_() < 0.15:
            continue  # not every listing states every attribute
        pick = int(random_() * len(values))
        attributes[name] = (values[pick],)
        if title_words is not None and values[pick] != "none":
            words.append(title_words[pick])
    words.append(kind.noun)

    colors: tuple[str | None, ...] = (None,)
    if kind.colors:
        colors = _run(random_, kind.colors, 1, 3)
    sizes: tuple[str | None, ...] = (None,)
    size_run = kind.sizes.get(gender) or kind.sizes.get("")
    if size_run:
        sizes = _run(random_, size_run, 2, 6)
    extras: tuple[str | None, ...] = (None,)
    axis_name, premium = "", 0.0
    axis_values: tuple[str, ...] = ()
    if kind.axis is not None:
        axis_name, axis_values, premium = kind.axis
        extras = _run(random_, axis_values, 1, 3)

    low, high = kind.price
    dollars = int(low + (high - low) * random_() ** 1.6)  # more cheap things than dear ones
    ending = random_()
    ending_cents = 99 if ending < 0.6 else 49 if ending < 0.8 else 0 if ending < 0.9 else 95
    size_dollars = {s: 2 if s in _BIG_SIZES else 0 for s in sizes}  # bigger costs more
    if kind.size_step and size_run:
        for s in sizes:
            size_dollars[s] += int(dollars * kind.size_step * size_run.index(s or ""))
    extra_dollars = {e: int(dollars * premium * axis_values.index(e)) if e else 0 for e in extras}
    prices: dict[int, Decimal] = {}
    sold_out = random_() < 0.03
    variants = []
    number = 0
    for color in colors:
        for size in sizes:
            for extra in extras:
                number += 1
                options = {}
                if color is not None:
                    options["color"] = color
                if size is not None:
                    options["size"] = size
                if extra is not None:
                    options[axis_name] = extra
                cents = (dollars + size_dollars[size] + extra_dollars[extra]) * 100 + ending_cents
                price = prices.get(cents)
                if price is None:
                    price = prices[cents] = Decimal(f"{cents // 100}.{cents % 100:02d}")
                variants.append(
                    _build(
                        Variant,
                        {
                            "id": f"{product_id}-{number:02d}",
                            "options": options,
                            "price": price,
                            "currency": "USD",
                            "available": not sold_out and random_() > 0.12,
                            "stock": None,
                        },
                    )
                )
    rating: float | None = None
    count = 0
    if random_() < 0.9:
        rating = round(min(5.0, max(1.0, rng.gauss(4.25, 0.45))), 1)
        count = min(int(rng.paretovariate(1.0) * 12), 100_000)
    phrases = ", ".join(f"{name} {value[0]}" for name, value in attributes.items())
    for_whom = f" for {gender.lower()}" if gender and gender != "Unisex" else ""
    return _build(
        Product,
        {
            "id": product_id,
            "title": " ".join(words),
            "description": f"{kind.noun} by {brand}{for_whom}: {phrases}. {kind.blurb}".strip(),
            "brand": brand,
            "category": plan.categories[gender],
            "attributes": attributes,
            "variants": tuple(variants),
            "rating": rating,
            "rating_count": count,
            "image": None,
        },
    )


_Model = TypeVar("_Model", Product, Variant)


def _build(cls: type[_Model], values: dict[str, Any]) -> _Model:
    """``cls.model_construct(**values)`` for a complete set of valid values, three times faster.

    It sets exactly the state ``model_construct`` sets (for models without extra fields or
    private attributes); ``test_synthetic`` checks the result equals a validated model.
    """
    model = cls.__new__(cls)
    setattr_ = object.__setattr__
    setattr_(model, "__dict__", values)
    setattr_(model, "__pydantic_fields_set__", set(values))
    setattr_(model, "__pydantic_extra__", None)
    setattr_(model, "__pydantic_private__", None)
    return model
