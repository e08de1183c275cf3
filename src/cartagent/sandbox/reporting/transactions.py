"""Transaction search v1: the merchant's ledger as PayPal's reporting API shows it.

Every capture, refund, subscription payment or reversal that any API records through
``Tx.record_transaction`` is a ledger row; search pages through them in a window of at most 31
days, and balances sum them per currency.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
from fastapi import APIRouter

from ..amounts import CURRENCIES
from ..amounts import money as _minor_units_money
from ..api import Call, Reply, operation
from ..clock import iso, parse_iso
from ..errors import PayPalError, detail, invalid_request
from ..store import Tx, ledger, loads

router = APIRouter()

SPEC = "reporting_transactions_v1"
MAX_WINDOW = timedelta(days=31)
STATUSES = ("S", "P", "V", "D")
FIELDS = (
    "transaction_info",
    "payer_info",
    "shipping_info",
    "cart_info",
    "store_info",
    "auction_info",
    "incentive_info",
)
ORDER = "order"

# What the spec's string patterns allow; values that do not fit are left out, not mangled.
_ALNUM = re.compile(r"^[a-zA-Z0-9]+$")
_TEXT = re.compile(r"^[a-zA-Z0-9_'\-., \":;!?]+$")
_AMOUNT_RANGE = re.compile(r"^\s*\[?\s*(-?\d+)\s+TO\s+(-?\d+)\s*\]?\s*$")
_ACCOUNT_ID_SWAPS = str.maketrans({"0": "Q", "1": "L", "I": "J", "O": "P"})


def money(value: Decimal, currency: str) -> dict[str, str]:
    """PayPal's money object; a currency the sandbox does not know keeps its stored value."""
    if currency in CURRENCIES:
        return _minor_units_money(value, currency)
    return {"currency_code": currency, "value": str(value)}


def _when(call: Call, name: str, *, required: bool = True) -> datetime | None:
    raw = call.query.get(name)
    if raw is None:
        if required:
            raise invalid_request("MISSING_REQUIRED_PARAMETER", field=name, location="query")
        return None
    try:
        return parse_iso(str(raw))
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=name, value=str(raw), location="query"
        ) from None


def _bad_value(name: str, value: str, description: str | None = None) -> PayPalError:
    return invalid_request(
        "INVALID_PARAMETER_VALUE", description, field=name, value=value, location="query"
    )


def _window(call: Call) -> tuple[datetime, datetime]:
    start = _when(call, "start_date")
    end = _when(call, "end_date")
    assert start is not None and end is not None
    if end < start:
        raise _bad_value("end_date", str(call.query["end_date"]), "End date is before start date.")
    if end - start > MAX_WINDOW:
        # PayPal's own wording, used as the issue (there is no code for it in the spec).
        raise PayPalError(
            400,
            details=[
                detail(
                    "Date range is greater than 31 days",
                    "The maximum supported range is 31 days.",
                    field="end_date",
                    value=str(call.query["end_date"]),
                    location="query",
                )
            ],
        )
    return start, end


def _fields(call: Call) -> tuple[str, ...]:
    raw = str(call.query.get("fields") or "transaction_info")
    wanted = [part.strip() for part in raw.split(",") if part.strip()]
    if "all" in wanted:
        return FIELDS
    unknown = [name for name in wanted if name not in FIELDS]
    if unknown or not wanted:
        raise _bad_value("fields", raw)
    return tuple(name for name in FIELDS if name in wanted or name == "transaction_info")


def _filters(call: Call, start: datetime, end: datetime) -> list[sa.ColumnElement[bool]]:
    query = call.query
    where: list[sa.ColumnElement[bool]] = [
        ledger.c.merchant_id == call.merchant_id,
        ledger.c.occurred_at >= start,
        ledger.c.occurred_at <= end,
    ]
    if "transaction_id" in query:
        where.append(ledger.c.transaction_id == query["transaction_id"])
    if "transaction_type" in query:
        where.append(ledger.c.event_code == str(query["transaction_type"]).upper())
    if "transaction_status" in query:
        status = str(query["transaction_status"]).upper()
        if status not in STATUSES:
            raise _bad_value("transaction_status", str(query["transaction_status"]))
        where.append(ledger.c.status == status)
    if "transaction_currency" in query:
        currency = str(query["transaction_currency"]).upper()
        if currency not in CURRENCIES:
            raise _bad_value("transaction_currency", str(query["transaction_currency"]))
        where.append(ledger.c.currency == currency)
    if "transaction_amount" in query:
        raw = str(query["transaction_amount"])
        found = _AMOUNT_RANGE.match(raw)
        if found is None:
            raise invalid_request(
                "INVALID_PARAMETER_SYNTAX",
                "Specify the range as '<start-range> TO <end-range>' in minor units.",
                field="transaction_amount",
                value=raw,
                location="query",
            )
        low, high = int(found.group(1)), int(found.group(2))
        if low > high:
            raise _bad_value("transaction_amount", raw)
        # The range is in minor units; compare per currency so JPY (0 places) is right too.
        per_currency = [
            (ledger.c.currency == code)
            & (ledger.c.amount >= Decimal(low).scaleb(-places))
            & (ledger.c.amount <= Decimal(high).scaleb(-places))
            for code, places in CURRENCIES.items()
        ]
        where.append(sa.or_(*per_currency))
    flag = str(query.get("balance_affecting_records_only", "Y")).upper()
    if flag not in ("Y", "N"):
        raise _bad_value("balance_affecting_records_only", flag)
    if flag == "Y":
        where.append(ledger.c.status != "D")
    return where


def _text(value: object, limit: int = 127) -> str | None:
    if isinstance(value, str) and value and len(value) <= limit and _TEXT.match(value):
        return value
    return None


def _info(record: Any, data: dict[str, Any]) -> dict[str, Any]:
    currency = record.currency
    info: dict[str, Any] = {
        "transaction_id": record.transaction_id,
        "transaction_event_code": record.event_code,
        "transaction_initiation_date": iso(_aware(record.occurred_at)),
        "transaction_updated_date": iso(_aware(record.updated_at)),
        "transaction_amount": money(Decimal(record.amount), currency),
        "fee_amount": money(Decimal(record.fee), currency),
        "transaction_status": record.status,
        "protection_eligibility": "01",
    }
    payer_id = data.get("payer_id")
    if isinstance(payer_id, str) and _ALNUM.match(payer_id) and len(payer_id) <= 24:
        info["paypal_account_id"] = payer_id
    reference, kind = _reference(record, data)
    if reference is not None:
        info["paypal_reference_id"] = reference
        info["paypal_reference_id_type"] = kind
    for source, target in (("invoice_id", "invoice_id"), ("custom_id", "custom_field")):
        value = _text(data.get(source))
        if value is not None:
            info[target] = value
    return info


def _reference(record: Any, data: dict[str, Any]) -> tuple[str | None, str]:
    candidates = [
        (data.get("paypal_reference_id"), str(data.get("paypal_reference_id_type") or "TXN")),
        (data.get("order_id"), "ODR"),
        (data.get("parent_id"), "TXN"),
    ]
    for value, kind in candidates:
        if (
            isinstance(value, str)
            and _ALNUM.match(value)
            and len(value) <= 24
            and value != record.transaction_id
            and kind in ("ODR", "TXN", "SUB", "PAP")
        ):
            return value, kind
    return None, "TXN"


def _payer_info(order: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any]:
    payer = (order or {}).get("payer") or data.get("payer") or {}
    info: dict[str, Any] = {}
    payer_id = payer.get("payer_id")
    if isinstance(payer_id, str) and _ALNUM.match(payer_id) and len(payer_id) <= 13:
        info["account_id"] = payer_id
    email = payer.get("email_address")
    if isinstance(email, str) and 3 <= len(email) <= 254 and "@" in email:
        info["email_address"] = email
    name = {
        key: value[:140]
        for key, value in (payer.get("name") or {}).items()
        if key in ("given_name", "surname") and isinstance(value, str)
    }
    if name:
        info["payer_name"] = name
        info["payer_status"] = "Y"
    country = (payer.get("address") or {}).get("country_code")
    if isinstance(country, str) and re.match(r"^([A-Z]{2}|C2)$", country):
        info["country_code"] = country
        info["address_status"] = "Y"
    return info


def _unit(order: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any]:
    units = (order or {}).get("purchase_units") or []
    for unit in units:
        if data.get("invoice_id") and unit.get("invoice_id") == data["invoice_id"]:
            return dict(unit)
    return dict(units[0]) if units else {}


def _shipping_info(unit: dict[str, Any]) -> dict[str, Any]:
    shipping = unit.get("shipping") or {}
    info: dict[str, Any] = {}
    name = _text((shipping.get("name") or {}).get("full_name"), 500)
    if name is not None:
        info["name"] = name
    address = shipping.get("address") or {}
    line1, city = address.get("address_line_1"), address.get("admin_area_2")
    country = address.get("country_code")
    if line1 and city and isinstance(country, str) and len(country) == 2:
        converted = {"line1": line1, "city": city, "country_code": country}
        for source, target in (
            ("address_line_2", "line2"),
            ("admin_area_1", "state"),
            ("postal_code", "postal_code"),
        ):
            if address.get(source):
                converted[target] = address[source]
        info["address"] = converted
    return info


def _cart_info(unit: dict[str, Any]) -> dict[str, Any]:
    items = []
    for item in unit.get("items") or []:
        entry: dict[str, Any] = {}
        name = _text(item.get("name"), 200)
        if name is not None:
            entry["item_name"] = name
        code = _text(item.get("sku"), 1000)
        if code is not None:
            entry["item_code"] = code
        if str(item.get("quantity", "")).isdigit():
            entry["item_quantity"] = str(item["quantity"])
        price = item.get("unit_amount")
        if isinstance(price, dict) and "value" in price:
            entry["item_unit_price"] = {
                "currency_code": price["currency_code"],
                "value": price["value"],
            }
            if "item_quantity" in entry:
                value = Decimal(price["value"]) * int(entry["item_quantity"])
                entry["item_amount"] = money(value, price["currency_code"])
        if entry:
            items.append(entry)
    return {"item_details": items} if items else {}


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything stored is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _detail(tx: Tx, record: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = loads(record.data) or {}
    result: dict[str, Any] = {"transaction_info": _info(record, data)}
    order: dict[str, Any] | None = None
    if len(fields) > 1 and isinstance(data.get("order_id"), str):
        row = tx.get(ORDER, data["order_id"])
        order = row.data if row is not None else None
    unit = _unit(order, data)
    for name in fields[1:]:
        if name == "payer_info":
            result[name] = _payer_info(order, data)
        elif name == "shipping_info":
            result[name] = _shipping_info(unit)
        elif name == "cart_info":
            result[name] = _cart_info(unit)
        else:
            # The sandbox has no stores, auctions or incentives; PayPal answers {} for them.
            result[name] = {}
    return result


def _page_link(call: Call, rel: str, page: int) -> dict[str, str]:
    params = {k: str(v) for k, v in call.query.items() if k != "page"}
    params["page"] = str(page)
    return call.link(f"/v1/reporting/transactions?{urlencode(params)}", rel)


@operation(router, "GET", "/v1/reporting/transactions", f"{SPEC}:search.get", write=False)
def search_transactions(call: Call, tx: Tx) -> Reply:
    start, end = _window(call)
    fields = _fields(call)
    where = _filters(call, start, end)
    page_size = int(call.query.get("page_size", 100))
    page = int(call.query.get("page", 1))
    total = int(
        tx.conn.execute(sa.select(sa.func.count()).select_from(ledger).where(*where)).scalar_one()
    )
    records = tx.conn.execute(
        sa.select(ledger)
        .where(*where)
        .order_by(ledger.c.occurred_at, ledger.c.transaction_id)
        .offset((page - 1) * page_size)
        .limit(page_size)
    ).all()
    total_pages = math.ceil(total / page_size)
    body: dict[str, Any] = {}
    details = [_detail(tx, record, fields) for record in records]
    # The spec gives transaction_details minItems 1, so an empty page leaves it out.
    if details:
        body["transaction_details"] = details
    links = [_page_link(call, "self", page)]
    if page < total_pages:
        links.append(_page_link(call, "next", page + 1))
    if total_pages > 1:
        links.append(_page_link(call, "last", total_pages))
    body.update(
        {
            "account_number": call.merchant_id,
            "start_date": iso(start),
            "end_date": iso(end),
            "last_refreshed_datetime": iso(call.now),
            "page": page,
            "total_items": total,
            "total_pages": total_pages,
            "links": links,
        }
    )
    return Reply(body)


@operation(router, "GET", "/v1/reporting/balances", f"{SPEC}:balances.get", write=False)
def list_balances(call: Call, tx: Tx) -> Reply:
    as_of = _when(call, "as_of_time", required=False) or call.now
    where: list[sa.ColumnElement[bool]] = [
        ledger.c.merchant_id == call.merchant_id,
        ledger.c.occurred_at <= as_of,
        ledger.c.status != "D",
    ]
    wanted = call.query.get("currency_code")
    if wanted is not None:
        if str(wanted) not in CURRENCIES:
            raise _bad_value("currency_code", str(wanted))
        where.append(ledger.c.currency == wanted)
    net = ledger.c.amount + ledger.c.fee
    pending = sa.case((ledger.c.status == "P", net), else_=0)
    rows = tx.conn.execute(
        sa.select(ledger.c.currency, sa.func.sum(net), sa.func.sum(pending))
        .where(*where)
        .group_by(ledger.c.currency)
        .order_by(ledger.c.currency)
    ).all()
    currencies = [row[0] for row in rows]
    primary = "USD" if "USD" in currencies else (currencies[0] if currencies else None)
    balances = []
    for currency, total_raw, pending_raw in rows:
        total = Decimal(total_raw or 0)
        withheld = Decimal(pending_raw or 0)
        balances.append(
            {
                "currency": currency,
                "primary": currency == primary,
                "total_balance": money(total, currency),
                "available_balance": money(total - withheld, currency),
                "withheld_balance": money(withheld, currency),
            }
        )
    return Reply(
        {
            "balances": balances,
            "account_id": account_id(call.merchant_id),
            "as_of_time": iso(as_of),
            "last_refresh_time": iso(min(as_of, call.now)),
        }
    )


def account_id(merchant_id: str) -> str:
    """The merchant id in the payer-id alphabet (PayPal's excludes 0, 1, I and O)."""
    return merchant_id.upper().translate(_ACCOUNT_ID_SWAPS)[:13].ljust(13, "Z")
