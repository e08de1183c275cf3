"""Seeding the demo store: the tau-bench retail catalogue and order history as PayPal data."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from fastapi.testclient import TestClient
from jsonschema import Draft4Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from cartagent.cli.main import cli
from cartagent.data import tau_retail
from cartagent.sandbox import Clock, IdFactory, Sandbox, ensure_merchant, open_sandbox, spec
from cartagent.sandbox.seed import (
    CATEGORIES,
    RetailData,
    SeedResult,
    load_retail,
    locate_data,
    order_id_for,
    product_id_for,
    seed_sandbox,
)
from cartagent.sandbox.store import events, ledger, resources
from tests.conftest import START, Api

FULL = load_retail(locate_data(tau_retail()))

# A handful of orders of every status, including one that lists the same item twice.
SAMPLE_IDS = (
    [oid for oid, o in FULL.orders.items() if o["status"] == "pending"][:2]
    + [oid for oid, o in FULL.orders.items() if o["status"] == "delivered"][:2]
    + [oid for oid, o in FULL.orders.items() if o["status"] == "processed"][:1]
    + [oid for oid, o in FULL.orders.items() if o["status"] == "cancelled"][:2]
    + ["#W1840144"]
)


def _sample() -> RetailData:
    orders = {oid: FULL.orders[oid] for oid in SAMPLE_IDS}
    users = {o["user_id"]: FULL.users[o["user_id"]] for o in orders.values()}
    products = dict(list(FULL.products.items())[:3])
    return RetailData(folder=FULL.folder, products=products, users=users, orders=orders)


SAMPLE = _sample()


def _merchant(sandbox: Sandbox, api: Api) -> str:
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    return merchant.id


def _counts(engine: sa.Engine, merchant_id: str) -> dict[str, int]:
    with engine.connect() as conn:
        kinds = conn.execute(
            sa.select(resources.c.kind, resources.c.status, sa.func.count())
            .where(resources.c.merchant_id == merchant_id)
            .group_by(resources.c.kind, resources.c.status)
        ).all()
        codes = conn.execute(
            sa.select(ledger.c.event_code, sa.func.count())
            .where(ledger.c.merchant_id == merchant_id)
            .group_by(ledger.c.event_code)
        ).all()
        event_count = conn.execute(
            sa.select(sa.func.count())
            .select_from(events)
            .where(events.c.merchant_id == merchant_id)
        ).scalar_one()
    found = {f"{kind}:{status}": int(n) for kind, status, n in kinds}
    found.update({f"ledger:{code}": int(n) for code, n in codes})
    found["events"] = int(event_count)
    return found


def _validator(spec_name: str, schema_name: str) -> Draft4Validator:
    registry: Registry[Any] = Registry().with_resource(
        f"urn:{spec_name}",
        Resource.from_contents(spec.load(spec_name), default_specification=DRAFT4),
    )
    return Draft4Validator(
        {"$ref": f"urn:{spec_name}#/components/schemas/{schema_name}"}, registry=registry
    )


def _schema_errors(spec_name: str, schema_name: str, document: Any) -> list[str]:
    errors = _validator(spec_name, schema_name).iter_errors(document)
    return [f"{list(e.absolute_path)}: {e.message}" for e in errors]


# The whole store, seeded once per backend -------------------------------------------------------


@dataclass
class FullStore:
    sandbox: Sandbox
    merchant_id: str
    first: SeedResult
    second: SeedResult
    counts: dict[str, int]


@pytest.fixture(scope="module")
def full_store(database_url: str) -> Iterator[FullStore]:
    """The whole store seeded twice, once per backend; the counts are taken in between."""
    base = open_sandbox(database_url)
    sandbox = Sandbox(store=base.store, clock=Clock(START), ids=IdFactory(7))
    sandbox.token_key = base.token_key
    merchant_id = ensure_merchant(sandbox, "seed-full-store", "secret")
    first = seed_sandbox(sandbox, merchant_id, FULL)
    counts = _counts(sandbox.store.engine, merchant_id)
    second = seed_sandbox(sandbox, merchant_id, FULL)
    yield FullStore(sandbox, merchant_id, first, second, counts)
    base.store.engine.dispose()


def test_seeding_loads_every_product_and_order_of_the_files(
    full_store: FullStore,
) -> None:
    first, counts = full_store.first, full_store.counts
    statuses = Counter(o["status"] for o in FULL.orders.values())
    captured = statuses["processed"] + statuses["delivered"] + statuses["cancelled"]
    refunds = sum(
        1
        for o in FULL.orders.values()
        for p in o["payment_history"]
        if p["transaction_type"] == "refund"
    )
    assert (first.products, first.orders, first.captures, first.refunds) == (
        len(FULL.products),
        len(FULL.orders),
        captured,
        refunds,
    )
    assert (len(FULL.products), len(FULL.orders), captured, refunds) == (50, 1000, 577, 102)
    assert counts["product:"] == 50
    assert counts["order:COMPLETED"] == captured
    assert counts["order:APPROVED"] == statuses["pending"]
    assert counts["capture:COMPLETED"] + counts["capture:REFUNDED"] == captured
    assert counts["capture:REFUNDED"] == statuses["cancelled"]
    assert counts["refund:COMPLETED"] == refunds
    assert counts["ledger:T0006"] == captured
    assert counts["ledger:T1107"] == refunds


def test_seeding_twice_adds_nothing(full_store: FullStore) -> None:
    second = full_store.second
    assert (second.products, second.orders, second.captures, second.refunds) == (0, 0, 0, 0)
    assert (second.skipped_products, second.skipped_orders) == (50, 1000)
    assert _counts(full_store.sandbox.store.engine, full_store.merchant_id) == full_store.counts


def test_captured_amounts_are_the_sum_of_the_item_prices(
    full_store: FullStore,
) -> None:
    sandbox, merchant_id = full_store.sandbox, full_store.merchant_id
    with sandbox.store.engine.connect() as conn:
        gross = conn.execute(
            sa.select(sa.func.sum(ledger.c.amount)).where(
                ledger.c.merchant_id == merchant_id, ledger.c.event_code == "T0006"
            )
        ).scalar_one()
    expected = sum(
        (
            Decimal(str(item["price"]))
            for o in FULL.orders.values()
            if o["status"] != "pending"
            for item in o["items"]
        ),
        Decimal(0),
    )
    assert Decimal(gross) == expected


def test_history_is_dated_over_the_last_90_days(
    full_store: FullStore,
) -> None:
    sandbox, merchant_id = full_store.sandbox, full_store.merchant_id
    with sandbox.store.engine.connect() as conn:
        low, high = conn.execute(
            sa.select(sa.func.min(ledger.c.occurred_at), sa.func.max(ledger.c.occurred_at)).where(
                ledger.c.merchant_id == merchant_id
            )
        ).one()
    low = low if low.tzinfo else low.replace(tzinfo=START.tzinfo)
    high = high if high.tzinfo else high.replace(tzinfo=START.tzinfo)
    assert START - timedelta(days=90) <= low < START - timedelta(days=60)
    assert START - timedelta(days=7) < high <= START


# A few orders, read back over the API ---------------------------------------------------------


def test_a_seeded_order_reads_over_the_api_as_completed_with_its_capture(
    sandbox: Sandbox, api: Api
) -> None:
    merchant_id = _merchant(sandbox, api)
    seed_sandbox(sandbox, merchant_id, SAMPLE, base_url="http://sandbox.test")
    tau_id = next(o for o in SAMPLE_IDS if FULL.orders[o]["status"] == "delivered")
    tau = FULL.orders[tau_id]
    response = api.get(f"/v2/checkout/orders/{order_id_for(merchant_id, tau_id)}")
    assert response.status_code == 200
    order = response.json()
    assert order["status"] == "COMPLETED"
    assert order["intent"] == "CAPTURE"
    unit = order["purchase_units"][0]
    total = str(sum((Decimal(str(i["price"])) for i in tau["items"]), Decimal(0)))
    assert unit["amount"]["value"] == total
    assert unit["amount"]["breakdown"]["item_total"]["value"] == total
    assert unit["invoice_id"] == tau_id
    assert unit["custom_id"] == tau["user_id"]
    assert order["payer"]["email_address"] == FULL.users[tau["user_id"]]["email"]
    (capture,) = unit["payments"]["captures"]
    assert capture["status"] == "COMPLETED"
    assert capture["amount"] == {"currency_code": "USD", "value": total}
    assert order["create_time"] < capture["create_time"] <= order["update_time"]
    assert api.get(f"/v2/checkout/orders/{order['id']}").json() == order


def test_an_item_bought_twice_becomes_one_line_with_quantity_two(
    sandbox: Sandbox, api: Api
) -> None:
    merchant_id = _merchant(sandbox, api)
    seed_sandbox(sandbox, merchant_id, SAMPLE)
    tau = FULL.orders["#W1840144"]
    order = api.get(f"/v2/checkout/orders/{order_id_for(merchant_id, '#W1840144')}").json()
    items = order["purchase_units"][0]["items"]
    counts = Counter(i["item_id"] for i in tau["items"])
    assert {i["sku"]: i["quantity"] for i in items} == {k: str(n) for k, n in counts.items()}
    assert 2 in counts.values()
    assert sum(Decimal(i["unit_amount"]["value"]) * int(i["quantity"]) for i in items) == Decimal(
        order["purchase_units"][0]["amount"]["value"]
    )


def test_a_cancelled_order_shows_its_capture_refunded_in_full(sandbox: Sandbox, api: Api) -> None:
    merchant_id = _merchant(sandbox, api)
    seed_sandbox(sandbox, merchant_id, SAMPLE)
    tau_id = next(o for o in SAMPLE_IDS if FULL.orders[o]["status"] == "cancelled")
    order = api.get(f"/v2/checkout/orders/{order_id_for(merchant_id, tau_id)}").json()
    payments = order["purchase_units"][0]["payments"]
    (capture,) = payments["captures"]
    (refund,) = payments["refunds"]
    assert capture["status"] == "REFUNDED"
    assert refund["status"] == "COMPLETED"
    assert refund["amount"] == capture["amount"]
    assert refund["create_time"] > capture["create_time"]
    assert any(link["rel"] == "up" and capture["id"] in link["href"] for link in refund["links"])


def test_a_pending_order_is_approved_and_the_merchant_can_capture_it(
    sandbox: Sandbox, api: Api
) -> None:
    merchant_id = _merchant(sandbox, api)
    seed_sandbox(sandbox, merchant_id, SAMPLE)
    tau_id = next(o for o in SAMPLE_IDS if FULL.orders[o]["status"] == "pending")
    order_id = order_id_for(merchant_id, tau_id)
    order = api.get(f"/v2/checkout/orders/{order_id}").json()
    assert order["status"] == "APPROVED"
    assert "payments" not in order["purchase_units"][0]
    assert {link["rel"] for link in order["links"]} == {"self", "update", "capture"}
    captured = api.post(f"/v2/checkout/orders/{order_id}/capture")
    assert captured.status_code == 201
    assert captured.json()["status"] == "COMPLETED"
    (capture,) = captured.json()["purchase_units"][0]["payments"]["captures"]
    assert capture["amount"]["value"] == order["purchase_units"][0]["amount"]["value"]


def test_seeded_documents_conform_to_paypal_response_schemas(
    sandbox: Sandbox, http: TestClient
) -> None:
    # A merchant id in PayPal's account-id alphabet, as every payee.merchant_id must be.
    merchant_id = "SEEDSCHEMA2XY"
    sandbox.store.ensure_merchant(merchant_id, "seed-schema", "secret", "s@example.com", START)
    api = Api(http, "seed-schema", "secret")
    seed_sandbox(sandbox, merchant_id, SAMPLE)
    problems: list[str] = []
    for tau_id in SAMPLE_IDS:
        order = api.get(f"/v2/checkout/orders/{order_id_for(merchant_id, tau_id)}").json()
        problems += _schema_errors("checkout_orders_v2", "order", order)
        payments = order["purchase_units"][0].get("payments", {})
        for capture in payments.get("captures", []):
            problems += _schema_errors("payments_payment_v2", "capture-2", capture)
        for refund in payments.get("refunds", []):
            problems += _schema_errors("payments_payment_v2", "refund", refund)
    for tau_product_id in SAMPLE.products:
        product = api.get(f"/v1/catalogs/products/{product_id_for(merchant_id, tau_product_id)}")
        assert product.status_code == 200
        problems += _schema_errors("catalogs_products_v1", "product", product.json())
    assert problems == [], "\n".join(problems)


def test_every_category_is_one_paypal_accepts_and_every_product_has_one() -> None:
    schemas = spec.load("catalogs_products_v1")["components"]["schemas"]
    allowed = set(schemas["product_category"]["enum"])
    assert set(CATEGORIES.values()) <= allowed
    assert {p["name"] for p in FULL.products.values()} <= set(CATEGORIES)


def test_seeded_orders_belong_to_their_merchant_only(
    sandbox: Sandbox, api: Api, other_api: Api
) -> None:
    merchant_id = _merchant(sandbox, api)
    other_id = _merchant(sandbox, other_api)
    seed_sandbox(sandbox, merchant_id, SAMPLE)
    order_id = order_id_for(merchant_id, SAMPLE_IDS[0])
    response = other_api.get(f"/v2/checkout/orders/{order_id}")
    assert response.status_code == 404
    assert response.json()["name"] == "RESOURCE_NOT_FOUND"
    assert order_id_for(other_id, SAMPLE_IDS[0]) != order_id
    seed_sandbox(sandbox, other_id, SAMPLE)
    assert other_api.get(f"/v2/checkout/orders/{order_id_for(other_id, SAMPLE_IDS[0])}").is_success


# The command line -------------------------------------------------------------------------------


def _write_sample(folder: Path) -> Path:
    folder.mkdir()
    for name, content in (
        ("products.json", SAMPLE.products),
        ("users.json", SAMPLE.users),
        ("orders.json", SAMPLE.orders),
    ):
        (folder / name).write_text(json.dumps(content))
    return folder


def test_the_cli_seeds_the_default_store_and_reports_what_it_added(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    args = ["sandbox", "seed", "--db", db, "--client-id", "cli-seed", "--client-secret", "s"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "seeding orders" in result.output
    assert "seeded 50 products, 1000 orders (577 captures, 102 refunds) for merchant" in (
        result.output
    )
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert "seeded 0 products, 0 orders" in again.output
    assert "50 products and 1000 orders were already there" in again.output


def test_the_cli_seeds_from_a_data_folder(tmp_path: Path) -> None:
    folder = _write_sample(tmp_path / "retail")
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    result = CliRunner().invoke(
        cli, ["sandbox", "seed", "--db", db, "--client-id", "cli", "--data", str(folder)]
    )
    assert result.exit_code == 0, result.output
    assert f"seeded 3 products, {len(SAMPLE_IDS)} orders (6 captures, 2 refunds)" in result.output
    sandbox = open_sandbox(db)
    merchant = sandbox.store.merchant_by_client_id("cli")
    assert merchant is not None
    assert _counts(sandbox.store.engine, merchant.id)["order:APPROVED"] == 2
    sandbox.store.engine.dispose()


def test_the_cli_names_the_data_option_when_the_folder_lacks_the_files(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    result = CliRunner().invoke(
        cli, ["sandbox", "seed", "--db", db, "--data", str(tmp_path / "nowhere")]
    )
    assert result.exit_code == 1
    assert "does not hold the tau-bench retail files" in result.output
    assert not (tmp_path / "cli.db").exists()
