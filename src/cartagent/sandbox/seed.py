"""The demo store: the tau-bench retail catalogue and its order history, loaded as PayPal data.

Products become catalog products; each past order becomes a Checkout order paid by its
customer. Shipped orders (``processed``, ``delivered``) are COMPLETED with a capture,
``cancelled`` ones were captured and then fully refunded, and ``pending`` ones are APPROVED and
wait for the merchant to capture. Captures and refunds go through the same ledger and events
as the API's own, dated over the last 90 days, so transaction search sees a real history.

Every id is derived from the merchant and the tau-bench id, so seeding twice adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from tqdm import tqdm

from .amounts import money
from .api import Call, require
from .app import ensure_merchant, open_sandbox
from .billing.products import PRODUCT
from .billing.products import render as render_product
from .clock import Clock, iso
from .ids import IdFactory
from .payments.captures import refund_amount
from .payments.order_amounts import check_purchase_units
from .payments.orders import ORDER, render
from .payments.settlement import CAPTURE, create_capture
from .state import Sandbox
from .store import Tx, resources
from .webhooks.events import emit

CURRENCY = "USD"
DATA_FILES = ("products.json", "users.json", "orders.json")
DEFAULT_BASE_URL = "http://127.0.0.1:8765"
HISTORY = timedelta(days=90)
BATCH = 50
ACCOUNT_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

# tau-bench's product names mapped onto PayPal's catalog ``product_category`` enum.
CATEGORIES = {
    "Action Camera": "CAMERAS_AND_PHOTOGRAPHY", "Air Purifier": "APPLIANCES",
    "Backpack": "LUGGAGE_AND_LEATHER_GOODS", "Bicycle": "BICYCLES_AND_ACCESSORIES",
    "Bluetooth Speaker": "HOME_AUDIO", "Bookshelf": "FURNITURE", "Coffee Maker": "APPLIANCES",
    "Cycling Helmet": "BICYCLES_AND_ACCESSORIES", "Desk Lamp": "HOME_DECOR",
    "Digital Camera": "CAMERAS_AND_PHOTOGRAPHY", "Dumbbell Set": "EXERCISE_AND_FITNESS",
    "E-Reader": "GADGETS_AND_OTHER_ELECTRONICS", "Electric Kettle": "APPLIANCES",
    "Electric Toothbrush": "HEALTH_AND_PERSONAL_CARE", "Espresso Machine": "APPLIANCES",
    "Fleece Jacket": "CLOTHING", "Gaming Mouse": "COMPUTER_HARDWARE_AND_SOFTWARE",
    "Garden Hose": "GARDEN_SUPPLIES", "Grill": "HOME_AND_GARDEN", "Headphones": "HOME_AUDIO",
    "Hiking Boots": "CLOTHING_ACCESSORIES_AND_SHOES", "Indoor Security Camera": "HOME_ELECTRONICS",
    "Jigsaw Puzzle": "TOYS_AND_GAMES", "LED Light Bulb": "HOME_AND_GARDEN",
    "Laptop": "COMPUTER_HARDWARE_AND_SOFTWARE", "Luggage Set": "LUGGAGE_AND_LEATHER_GOODS",
    "Makeup Kit": "BEAUTY", "Mechanical Keyboard": "COMPUTER_HARDWARE_AND_SOFTWARE",
    "Notebook": "OFFICE_SUPPLIES_AND_EQUIPMENT", "Office Chair": "FURNITURE",
    "Patio Umbrella": "HOME_AND_GARDEN", "Perfume": "FRAGRANCES_AND_PERFUMES",
    "Pet Bed": "PET_SHOPS_PET_FOOD_AND_SUPPLIES",
    "Portable Charger": "GADGETS_AND_OTHER_ELECTRONICS",
    "Running Shoes": "CLOTHING_ACCESSORIES_AND_SHOES", "Skateboard": "SPORTING_GOODS",
    "Smart Thermostat": "HOME_ELECTRONICS", "Smart Watch": "GADGETS_AND_OTHER_ELECTRONICS",
    "Smartphone": "TELEPHONE_EQUIPMENT", "Sneakers": "CLOTHING_ACCESSORIES_AND_SHOES",
    "Sunglasses": "CLOTHING_ACCESSORIES_AND_SHOES", "T-Shirt": "CLOTHING",
    "Tablet": "COMPUTER_HARDWARE_AND_SOFTWARE", "Tea Kettle": "HOME_AND_GARDEN",
    "Vacuum Cleaner": "APPLIANCES", "Wall Clock": "HOME_DECOR",
    "Water Bottle": "SPORTS_AND_OUTDOORS", "Wireless Earbuds": "GADGETS_AND_OTHER_ELECTRONICS",
    "Wristwatch": "RETAIL_FINE_JEWELRY_AND_WATCHES", "Yoga Mat": "EXERCISE_AND_FITNESS",
}  # fmt: skip

CAPTURED = ("processed", "delivered", "cancelled")
STATUSES = (*CAPTURED, "pending")

# When each kind of order was placed, in days before now: shipped orders are older, pending
# ones are recent (PayPal keeps an approved order capturable for a few days).
PLACED_DAYS_AGO = {
    "delivered": (14.0, 90.0),
    "processed": (2.0, 14.0),
    "cancelled": (2.0, 90.0),
    "pending": (0.0, 3.0),
}


class SeedDataNotFound(Exception):
    """The tau-bench retail files are not where they were looked for (``message`` says where
    it looked and how to point at them)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class RetailData:
    """The three tau-bench retail files, keyed by their own ids."""

    folder: Path
    products: dict[str, dict[str, Any]]
    users: dict[str, dict[str, Any]]
    orders: dict[str, dict[str, Any]]


@dataclass
class SeedResult:
    products: int = 0
    orders: int = 0
    captures: int = 0
    refunds: int = 0
    skipped_products: int = 0
    skipped_orders: int = 0

    def summary(self, merchant_id: str, folder: Path) -> str:
        line = (
            f"seeded {self.products} products, {self.orders} orders ({self.captures} captures, "
            f"{self.refunds} refunds) for merchant {merchant_id} from {folder}"
        )
        if self.skipped_products or self.skipped_orders:
            line += (
                f"; {self.skipped_products} products and {self.skipped_orders} orders "
                "were already there"
            )
        return line


def seed_store(
    db_url: str,
    client_id: str,
    client_secret: str,
    *,
    data_dir: str | Path,
    progress: bool = False,
    base_url: str = DEFAULT_BASE_URL,
) -> str:
    """Load the tau-bench retail store in ``data_dir`` for the merchant with these
    credentials; say what."""
    data = load_retail(locate_data(data_dir))
    sandbox = open_sandbox(db_url)
    try:
        merchant_id = ensure_merchant(sandbox, client_id, client_secret)
        result = seed_sandbox(sandbox, merchant_id, data, base_url=base_url, progress=progress)
    finally:
        sandbox.store.engine.dispose()
    return result.summary(merchant_id, data.folder)


def locate_data(data_dir: str | Path) -> Path:
    """``data_dir``, which must hold the tau-bench retail files."""
    folder = Path(data_dir).expanduser()
    if not _complete(folder):
        raise SeedDataNotFound(
            f"{folder} does not hold the tau-bench retail files ({', '.join(DATA_FILES)})."
        )
    return folder


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in DATA_FILES)


def load_retail(folder: Path) -> RetailData:
    loaded = []
    for name in DATA_FILES:
        try:
            loaded.append(json.loads((folder / name).read_text("utf-8")))
        except (OSError, ValueError) as error:
            raise SeedDataNotFound(f"cannot read {folder / name}: {error}") from error
    products, users, orders = loaded
    return RetailData(folder=folder, products=products, users=users, orders=orders)


def seed_sandbox(
    sandbox: Sandbox,
    merchant_id: str,
    data: RetailData,
    *,
    base_url: str = DEFAULT_BASE_URL,
    progress: bool = False,
) -> SeedResult:
    """Write ``data`` as ``merchant_id``'s catalogue and history, skipping what is there."""
    merchant = sandbox.store.merchant(merchant_id)
    seeder = _Seeder(
        sandbox=sandbox,
        merchant_id=merchant_id,
        data=data,
        base_url=base_url.rstrip("/"),
        now=sandbox.clock.now().replace(microsecond=0),
        payee={
            "email_address": merchant.email if merchant else "merchant@example.com",
            "merchant_id": merchant_id,
        },
        existing=_existing_ids(sandbox, merchant_id),
    )
    with sandbox.store.transaction(merchant_id) as tx:
        for tau_id, product in data.products.items():
            seeder.product(tx, tau_id, product)
    orders = list(data.orders.values())
    with _progress(len(orders), progress) as advance:
        for start in range(0, len(orders), BATCH):
            batch = orders[start : start + BATCH]
            with sandbox.store.transaction(merchant_id) as tx:
                for order in batch:
                    seeder.order(tx, order)
            advance(len(batch))
    return seeder.result


def _existing_ids(sandbox: Sandbox, merchant_id: str) -> set[tuple[str, str]]:
    query = sa.select(resources.c.kind, resources.c.id).where(
        resources.c.merchant_id == merchant_id, resources.c.kind.in_([PRODUCT, ORDER])
    )
    with sandbox.store.engine.connect() as conn:
        return {(row.kind, row.id) for row in conn.execute(query)}


@contextmanager
def _progress(total: int, show: bool) -> Iterator[Any]:
    if not show:
        yield lambda steps: None
        return
    with tqdm(total=total, desc="seeding orders", unit="order") as bar:
        yield bar.update


def _digest(*parts: str) -> int:
    text = "|".join(parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _fraction(*parts: str) -> float:
    return _digest("fraction", *parts) / float(1 << 64)


def product_ids(merchant_id: str, tau_product_id: str) -> IdFactory:
    """The id source for one seeded product: its own id first, then its event's."""
    return IdFactory(_digest("product", merchant_id, tau_product_id))


def product_id_for(merchant_id: str, tau_product_id: str) -> str:
    return product_ids(merchant_id, tau_product_id).product()


def order_ids(merchant_id: str, tau_order_id: str) -> IdFactory:
    """The id source for one seeded order: its own id first, then its capture, events..."""
    return IdFactory(_digest("order", merchant_id, tau_order_id))


def order_id_for(merchant_id: str, tau_order_id: str) -> str:
    return order_ids(merchant_id, tau_order_id).order()


def product_document(call: Call, product_id: str, product: dict[str, Any]) -> dict[str, Any]:
    """A catalog product as products.py stores it (it adds the links when shown)."""
    prices = sorted(Decimal(str(v["price"])) for v in product["variants"].values())
    options = sorted({k for v in product["variants"].values() for k in v["options"]})
    description = f"{len(prices)} variants"
    if options:
        description += f" by {', '.join(options)}"
    if prices:
        description += f", {prices[0]} to {prices[-1]} {CURRENCY}"
    document: dict[str, Any] = {
        "id": product_id,
        "name": product["name"][:127],
        "description": description[:256],
        "type": "PHYSICAL",
    }
    category = CATEGORIES.get(product["name"])
    if category:
        document["category"] = category
    document["create_time"] = document["update_time"] = iso(call.now)
    return document


@dataclass
class _Seeder:
    sandbox: Sandbox
    merchant_id: str
    data: RetailData
    base_url: str
    now: datetime
    payee: dict[str, str]
    existing: set[tuple[str, str]]
    result: SeedResult = field(default_factory=SeedResult)

    def _call(self, ids: IdFactory, when: datetime) -> Call:
        # Each seeded resource has its own seeded id factory, so its capture, refund and
        # event ids come out the same however often the store is seeded.
        own = Sandbox(
            store=self.sandbox.store, clock=Clock(when), ids=ids, token_key=self.sandbox.token_key
        )
        return Call(
            sandbox=own,
            merchant_id=self.merchant_id,
            body=None,
            query={},
            headers={},
            base_url=self.base_url,
            now=when,
        )

    def product(self, tx: Tx, tau_id: str, product: dict[str, Any]) -> None:
        ids = product_ids(self.merchant_id, tau_id)
        product_id = ids.product()
        if (PRODUCT, product_id) in self.existing:
            self.result.skipped_products += 1
            return
        call = self._call(ids, self.now - HISTORY - timedelta(days=30))
        document = product_document(call, product_id, product)
        tx.insert(PRODUCT, product_id, document, now=call.now)
        row = require(tx, PRODUCT, product_id)
        emit(
            call,
            tx,
            "CATALOG.PRODUCT.CREATED",
            render_product(call, row),
            "A product has been created",
        )
        self.result.products += 1

    def order(self, tx: Tx, tau: dict[str, Any]) -> None:
        tau_id = tau["order_id"]
        ids = order_ids(self.merchant_id, tau_id)
        order_id = ids.order()
        if (ORDER, order_id) in self.existing:
            self.result.skipped_orders += 1
            return
        status = tau["status"] if tau["status"] in STATUSES else "pending"
        low, high = PLACED_DAYS_AGO[status]
        placed = self.now - timedelta(days=low + (high - low) * _fraction("placed", tau_id))
        call = self._call(ids, placed.replace(microsecond=0))
        user = self.data.users.get(tau["user_id"], {})
        document = order_document(call, order_id, tau, user, self.payee)
        approved_at = call.now + timedelta(seconds=60 + int(120 * _fraction("approve", tau_id)))
        self.result.orders += 1
        if status not in CAPTURED:
            document["update_time"] = iso(approved_at)
            document["links"] = [
                call.link(f"/v2/checkout/orders/{order_id}", "self"),
                call.link(f"/v2/checkout/orders/{order_id}", "update", "PATCH"),
                call.link(f"/v2/checkout/orders/{order_id}/capture", "capture", "POST"),
            ]
            tx.insert(ORDER, order_id, document, now=call.now, status="APPROVED")
            call.now = approved_at
            _emit_order(
                call, tx, order_id, "CHECKOUT.ORDER.APPROVED", "An order has been approved by buyer"
            )
            return
        captured_at = approved_at + timedelta(seconds=30 + int(300 * _fraction("capture", tau_id)))
        document["update_time"] = iso(captured_at)
        document["links"] = [call.link(f"/v2/checkout/orders/{order_id}", "self")]
        tx.insert(ORDER, order_id, document, now=call.now, status="COMPLETED")
        call.now = captured_at
        unit = document["purchase_units"][0]
        capture = create_capture(
            call,
            tx,
            parent_id=order_id,
            amount=Decimal(unit["amount"]["value"]),
            currency=CURRENCY,
            order_id=order_id,
            invoice_id=unit["invoice_id"],
            custom_id=unit["custom_id"],
            reference=unit["reference_id"],
        )
        self.result.captures += 1
        _emit_order(call, tx, order_id, "CHECKOUT.ORDER.COMPLETED", "Checkout Order Completed")
        history = tau.get("payment_history", [])
        refunds = [p for p in history if p.get("transaction_type") == "refund"]
        for index, payment in enumerate(refunds):
            hours = 1 + 47 * _fraction("refund", tau_id, str(index))
            call.now = (captured_at + timedelta(hours=hours)).replace(microsecond=0)
            refund_amount(
                call,
                tx,
                require(tx, CAPTURE, capture["id"]),
                Decimal(str(payment["amount"])),
                invoice_id=capture.get("invoice_id"),
                custom_id=capture.get("custom_id"),
            )
            self.result.refunds += 1


def _emit_order(call: Call, tx: Tx, order_id: str, event_type: str, summary: str) -> None:
    row = tx.get(ORDER, order_id)
    if row is not None:
        emit(call, tx, event_type, render(call, tx, row), summary)


def order_document(
    call: Call,
    order_id: str,
    tau: dict[str, Any],
    user: dict[str, Any],
    payee: dict[str, str],
) -> dict[str, Any]:
    """The order as orders.py stores it, paid by the tau-bench customer."""
    items: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for item in tau["items"]:
        counts[item["item_id"]] = counts.get(item["item_id"], 0) + 1
        items.setdefault(item["item_id"], item)
    lines = []
    total = Decimal(0)
    for item_id, item in items.items():
        price = Decimal(str(item["price"]))
        total += price * counts[item_id]
        line: dict[str, Any] = {
            "name": item["name"][:127],
            "unit_amount": money(price, CURRENCY),
            "quantity": str(counts[item_id]),
            "sku": item_id,
            "category": "PHYSICAL_GOODS",
        }
        options = ", ".join(str(v) for v in item.get("options", {}).values())
        if options:
            line["description"] = options[:127]
        lines.append(line)
    name = user.get("name", {})
    full_name = " ".join(p for p in (name.get("first_name"), name.get("last_name")) if p)
    unit: dict[str, Any] = {
        "reference_id": "default",
        "amount": {
            **money(total, CURRENCY),
            "breakdown": {"item_total": money(total, CURRENCY)},
        },
        "payee": payee,
        "description": f"Order {tau['order_id']}"[:127],
        "custom_id": tau["user_id"][:127],
        "invoice_id": tau["order_id"][:127],
        "items": lines,
        "shipping": {
            "name": {"full_name": full_name or tau["user_id"]},
            "address": _address(tau.get("address") or user.get("address") or {}),
        },
    }
    check_purchase_units([unit])
    payer = _payer(user, tau["user_id"])
    return {
        "id": order_id,
        "intent": "CAPTURE",
        "purchase_units": [unit],
        "payer": payer,
        "payment_source": _payment_source(tau, user, payer),
        "create_time": iso(call.now),
        "links": [],
    }


def _address(address: dict[str, Any]) -> dict[str, str]:
    portable = {
        "address_line_1": address.get("address1", ""),
        "address_line_2": address.get("address2", ""),
        "admin_area_2": address.get("city", ""),
        "admin_area_1": address.get("state", ""),
        "postal_code": address.get("zip", ""),
    }
    # tau-bench writes "USA"; PayPal wants ISO 3166-1 alpha-2.
    country = address.get("country", "USA")
    portable["country_code"] = "US" if country in ("USA", "US") else str(country)[:2].upper()
    return {k: v for k, v in portable.items() if v}


def _payer(user: dict[str, Any], user_id: str) -> dict[str, Any]:
    email = user.get("email") or f"{user_id}@example.com"
    name = user.get("name", {})
    return {
        "name": {
            "given_name": name.get("first_name") or user_id,
            "surname": name.get("last_name") or "Buyer",
        },
        "email_address": email,
        "payer_id": _account_id(email),
        "address": _address(user.get("address") or {}),
    }


def _account_id(email: str) -> str:
    """A stable PayPal account id for a buyer, in PayPal's alphabet (no 0, 1, I or O)."""
    digest = hashlib.sha256(email.encode()).digest()
    return "".join(ACCOUNT_ALPHABET[b % len(ACCOUNT_ALPHABET)] for b in digest[:13])


def _payment_source(
    tau: dict[str, Any], user: dict[str, Any], payer: dict[str, Any]
) -> dict[str, Any]:
    payments = tau.get("payment_history") or [{}]
    method_id = str(payments[0].get("payment_method_id", ""))
    method = user.get("payment_methods", {}).get(method_id, {})
    if method.get("source") == "credit_card":
        card: dict[str, Any] = {
            "name": f"{payer['name']['given_name']} {payer['name']['surname']}",
            "type": "CREDIT",
        }
        if method.get("last_four"):
            card["last_digits"] = str(method["last_four"])
        if method.get("brand"):
            card["brand"] = str(method["brand"]).upper()
        return {"card": card}
    # PayPal has no gift cards: a gift-card payment is shown as paid from the buyer's PayPal
    # balance, the nearest thing PayPal itself records.
    return {
        "paypal": {
            "email_address": payer["email_address"],
            "account_id": payer["payer_id"],
            "account_status": "VERIFIED",
            "name": payer["name"],
            "address": {"country_code": payer["address"].get("country_code", "US")},
        }
    }
