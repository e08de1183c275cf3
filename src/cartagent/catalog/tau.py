"""The tau-bench retail catalog as ``Product`` s: ``tau_catalog(data_dir)``.

tau-bench (github.com/sierra-research/tau-bench, MIT) ships ``products.json``: 50 products, each
``{name, product_id, variants: {item_id: {item_id, options, available, price}}}``. The mapping:

* ``id`` is the product_id, ``title`` the name; each variant keeps its item_id, its options
  exactly as given, its availability, and its price as an exact ``Decimal`` in USD.
* ``category`` comes from ``TAU_CATEGORIES``, an explicit table for the 50 names (an unknown
  name gets no category rather than a guess).
* ``attributes`` are the option values that describe the product rather than pick a size or a
  colour: every option whose name mentions neither (``material``, ``style``, ``processor``...),
  with the values its variants offer. A ``brand`` option shared by every variant becomes the
  product's brand instead.
* ``description`` lists the options on offer, so that text search finds them too.
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from .product import Product, Variant

__all__ = ["TAU_CATEGORIES", "TAU_PRODUCTS", "tau_catalog"]

TAU_PRODUCTS = "products.json"
"""The products file of a tau-bench retail folder."""

TAU_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Action Camera": ("Electronics", "Cameras", "Action Cameras"),
    "Air Purifier": ("Home & Kitchen", "Home Appliances", "Air Purifiers"),
    "Backpack": ("Bags & Luggage", "Bags", "Backpacks"),
    "Bicycle": ("Sports & Outdoors", "Cycling", "Bicycles"),
    "Bluetooth Speaker": ("Electronics", "Audio", "Speakers"),
    "Bookshelf": ("Home & Kitchen", "Furniture", "Bookshelves"),
    "Coffee Maker": ("Home & Kitchen", "Kitchen Appliances", "Coffee Makers"),
    "Cycling Helmet": ("Sports & Outdoors", "Cycling", "Helmets"),
    "Desk Lamp": ("Home & Kitchen", "Lighting", "Desk Lamps"),
    "Digital Camera": ("Electronics", "Cameras", "Digital Cameras"),
    "Dumbbell Set": ("Sports & Outdoors", "Fitness", "Dumbbells"),
    "E-Reader": ("Electronics", "Computers & Tablets", "E-Readers"),
    "Electric Kettle": ("Home & Kitchen", "Kitchen Appliances", "Electric Kettles"),
    "Electric Toothbrush": ("Health & Beauty", "Oral Care", "Electric Toothbrushes"),
    "Espresso Machine": ("Home & Kitchen", "Kitchen Appliances", "Espresso Machines"),
    "Fleece Jacket": ("Clothing", "Outerwear", "Jackets"),
    "Gaming Mouse": ("Electronics", "Computer Accessories", "Mice"),
    "Garden Hose": ("Garden & Outdoor", "Watering", "Garden Hoses"),
    "Grill": ("Garden & Outdoor", "Outdoor Cooking", "Grills"),
    "Headphones": ("Electronics", "Audio", "Headphones"),
    "Hiking Boots": ("Shoes", "Outdoor", "Hiking Boots"),
    "Indoor Security Camera": ("Electronics", "Smart Home", "Security Cameras"),
    "Jigsaw Puzzle": ("Toys & Games", "Puzzles", "Jigsaw Puzzles"),
    "LED Light Bulb": ("Home & Kitchen", "Lighting", "Light Bulbs"),
    "Laptop": ("Electronics", "Computers & Tablets", "Laptops"),
    "Luggage Set": ("Bags & Luggage", "Luggage", "Luggage Sets"),
    "Makeup Kit": ("Health & Beauty", "Makeup", "Makeup Kits"),
    "Mechanical Keyboard": ("Electronics", "Computer Accessories", "Keyboards"),
    "Notebook": ("Office Products", "Paper", "Notebooks"),
    "Office Chair": ("Office Products", "Office Furniture", "Office Chairs"),
    "Patio Umbrella": ("Garden & Outdoor", "Patio", "Patio Umbrellas"),
    "Perfume": ("Health & Beauty", "Fragrance", "Perfume"),
    "Pet Bed": ("Pet Supplies", "Beds & Furniture", "Pet Beds"),
    "Portable Charger": ("Electronics", "Phone Accessories", "Portable Chargers"),
    "Running Shoes": ("Shoes", "Athletic", "Running Shoes"),
    "Skateboard": ("Sports & Outdoors", "Skateboarding", "Skateboards"),
    "Smart Thermostat": ("Electronics", "Smart Home", "Thermostats"),
    "Smart Watch": ("Electronics", "Wearables", "Smart Watches"),
    "Smartphone": ("Electronics", "Phones", "Smartphones"),
    "Sneakers": ("Shoes", "Casual", "Sneakers"),
    "Sunglasses": ("Accessories", "Eyewear", "Sunglasses"),
    "T-Shirt": ("Clothing", "Tops", "T-Shirts"),
    "Tablet": ("Electronics", "Computers & Tablets", "Tablets"),
    "Tea Kettle": ("Home & Kitchen", "Cookware", "Tea Kettles"),
    "Vacuum Cleaner": ("Home & Kitchen", "Home Appliances", "Vacuum Cleaners"),
    "Wall Clock": ("Home & Kitchen", "Home Decor", "Clocks"),
    "Water Bottle": ("Sports & Outdoors", "Hydration", "Water Bottles"),
    "Wireless Earbuds": ("Electronics", "Audio", "Earbuds"),
    "Wristwatch": ("Accessories", "Watches", "Wristwatches"),
    "Yoga Mat": ("Sports & Outdoors", "Fitness", "Yoga Mats"),
}
"""Category path for each tau-bench product name."""

# Options that choose a size or a colour ("size", "frame color", "screen size"...) stay options.
_SELECTOR = re.compile(r"\b(?:colou?r|size)\b", re.IGNORECASE)


def tau_catalog(data_dir: str | os.PathLike[str]) -> list[Product]:
    """The products in ``data_dir/products.json`` (or in ``data_dir`` itself, if a file).

    Raises ``FileNotFoundError`` if the file is missing and ``ValueError`` if it is not the
    tau-bench shape.
    """
    path = Path(data_dir)
    if path.is_dir():
        path = path / "products.json"
    with path.open("rb") as file:
        data = json.load(file)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object of products keyed by product_id")
    products = []
    for key, item in data.items():
        try:
            products.append(_product(item))
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise ValueError(
                f"{path}: product {key!r} is not in the tau-bench shape: {error}"
            ) from error
    return products


def _product(item: dict[str, Any]) -> Product:
    name = str(item["name"])
    variants = tuple(
        Variant(
            id=str(variant["item_id"]),
            options=variant["options"],
            price=Decimal(str(variant["price"])),
            available=bool(variant["available"]),
        )
        for variant in item["variants"].values()
    )
    values: dict[str, list[str]] = {}
    for variant in variants:
        for option, value in variant.options.items():
            seen = values.setdefault(option, [])
            if value not in seen:
                seen.append(value)
    brands = values.get("brand", [])
    brand = brands[0] if len(brands) == 1 and len(variants) > 0 else None
    attributes = {
        option: tuple(sorted(found))
        for option, found in values.items()
        if not _SELECTOR.search(option) and not (option == "brand" and brand is not None)
    }
    offered = "; ".join(f"{option}: {', '.join(found)}" for option, found in values.items())
    description = f"{name}. Available options: {offered}." if offered else name
    return Product(
        id=str(item["product_id"]),
        title=name,
        description=description,
        brand=brand,
        category=TAU_CATEGORIES.get(name, ()),
        attributes=attributes,
        variants=variants,
    )
