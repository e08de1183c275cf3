"""The JSON the web app's pages need beyond the chat API.

- ``POST /api/guest``: a guest shopper token (no key needed; rate-limited per address);
- ``GET /api/sessions/{id}/cart``: the session's cart, its quote and its orders (owner only);
- ``GET /api/merchant/overview``: who the merchant key belongs to (the login page's check);
- ``GET /api/merchant/{transactions,invoices,plans,disputes}``: one bounded page from the
  payment backend's read-only tools, for the merchant only (403 for shoppers and guests);
- ``GET /api/merchant/sales``: the daily series of the dashboard's chart;
- ``GET /api/merchant/invoices/{id}`` and ``POST /api/merchant/invoices/{id}/send``: one invoice
  with its lines, to preview a draft, and sending it.
"""

# No ``from __future__ import annotations``: FastAPI reads the routes' annotations at run time.

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from pydantic import BaseModel, Field

from ..assistant import Assistant, CartLine, Conversation, Domain, UnknownSession
from ..commerce.terms import DEMO_STORE, StoreTerms
from .auth import Principal, Role
from .failures import NOT_FOUND
from .guest import GuestTokens, IssueLimit
from .schemas import Problem

__all__ = ["CartView", "GuestToken", "MerchantOverview", "panels_router"]

MAX_ORDERS_SHOWN = 20
NOT_MERCHANT = "this needs the merchant's API key"
NO_PAYMENTS = "payments are not configured in this assistant"
TOO_MANY_GUESTS = "too many guest tokens from this address; wait a minute and retry"

_AUTH: dict[int | str, dict[str, Any]] = {401: {"model": Problem, "description": "No valid key."}}
_MERCHANT: dict[int | str, dict[str, Any]] = {
    **_AUTH,
    403: {"model": Problem, "description": "Not the merchant's key."},
}
_BACKEND: dict[int | str, dict[str, Any]] = {
    **_MERCHANT,
    502: {"model": Problem, "description": "The payment backend failed this request."},
    503: {"model": Problem, "description": "Payments are not configured."},
}


class GuestToken(BaseModel):
    token: str = Field(description="Send it as 'Authorization: Bearer <token>'.")
    name: str = Field(description="The shopper principal it stands for: guest-<id>.")


class CartLineOut(BaseModel):
    product_id: str
    variant_id: str
    title: str
    options: dict[str, str]
    quantity: int
    unit_price: str
    line_price: str = Field(description="unit_price times quantity, before tax.")
    currency: str


class QuoteOut(BaseModel):
    items: str
    tax: str
    shipping: str
    total: str
    currency: str


class TrackerOut(BaseModel):
    carrier: str | None
    tracking_number: str | None
    status: str | None
    shipment_date: str | None


class OrderOut(BaseModel):
    id: str
    status: str
    total: str
    currency: str
    approve_url: str | None
    capture_id: str | None
    created_at: datetime
    paid_at: datetime | None
    lines: list[CartLineOut] = Field(description="What the order is for.")
    refunded: str = Field(description="What has been refunded of it so far.")
    trackers: list[TrackerOut] | None = Field(
        default=None,
        description="Its shipments, as the merchant tracks them; null when not paid or unknown.",
    )


class CartView(BaseModel):
    lines: list[CartLineOut]
    quote: QuoteOut | None = Field(description="null for an empty cart.")
    orders: list[OrderOut] = Field(description=f"Newest first, up to {MAX_ORDERS_SHOWN}.")


class MerchantOverview(BaseModel):
    name: str
    role: Role
    payments: bool = Field(description="Whether the panels can reach the payment backend.")


TransactionKind = Literal["payment", "refund", "reversal", "fee", "other"]
ZERO = Decimal(0)


def transaction_kind(event_code: Any) -> TransactionKind:
    """What a PayPal transaction event code (``T0006``, ``T1107``...) is, in a merchant's words:
    T00xx are payments received, T1107 a refund, other T11xx reversals (chargebacks, holds
    undone), T01xx fees."""
    code = str(event_code or "")
    if code.startswith("T00"):
        return "payment"
    if code == "T1107":
        return "refund"
    if code.startswith("T11"):
        return "reversal"
    if code.startswith("T01"):
        return "fee"
    return "other"


def transaction_totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per currency: what came in (payments), went back (refunds and reversals), was charged
    in fees (less fees returned with refunds), and the net."""
    sums: dict[str, dict[str, Decimal]] = {}
    for row in rows:
        currency = str(row.get("currency") or "")
        try:
            amount = Decimal(str(row.get("amount") or "0"))
            fee = Decimal(str(row.get("fee") or "0"))
        except ArithmeticError:
            continue
        totals = sums.setdefault(currency, dict.fromkeys(("payments", "refunds", "fees"), ZERO))
        if row["type"] == "payment":
            totals["payments"] += amount
        elif row["type"] in ("refund", "reversal"):
            totals["refunds"] += -amount
        totals["fees"] -= fee  # PayPal's fee is negative when charged, positive when returned
    return {
        currency: {
            **{name: str(value) for name, value in totals.items()},
            "net": str(totals["payments"] - totals["refunds"] - totals["fees"]),
        }
        for currency, totals in sums.items()
    }


MAX_SALES_PAGES = 50


def daily_sales(rows: list[dict[str, Any]], start: str, end: str) -> dict[str, Any]:
    """``rows`` (transactions) as one series per day from ``start`` to ``end`` (ISO dates or
    timestamps): sales (payments) and refunds (refunds and reversals, positive), in the
    currency most rows are in."""
    currencies = Counter(str(row.get("currency") or "") for row in rows)
    currency = currencies.most_common(1)[0][0] if currencies else ""
    first = _day(start) or _day(min((str(r.get("date") or "") for r in rows), default=""))
    last = _day(end) or _day(max((str(r.get("date") or "") for r in rows), default=""))
    if first is None or last is None or last < first:
        return {"currency": currency, "days": [], "sales": [], "refunds": []}
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)][-MAX_DAYS:]
    sold = dict.fromkeys(days, ZERO)
    refunded = dict.fromkeys(days, ZERO)
    for row in rows:
        day = _day(str(row.get("date") or ""))
        if day not in sold or row.get("currency") != currency:
            continue
        try:
            amount = Decimal(str(row.get("amount") or "0"))
        except ArithmeticError:
            continue
        kind = transaction_kind(row.get("event_code"))
        if kind == "payment":
            sold[day] += amount
        elif kind in ("refund", "reversal"):
            refunded[day] -= amount
    return {
        "currency": currency,
        "days": [day.isoformat() for day in days],
        "sales": [str(sold[day]) for day in days],
        "refunds": [str(refunded[day]) for day in days],
    }


MAX_DAYS = 31


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _line_out(line: CartLine) -> CartLineOut:
    return CartLineOut(
        product_id=line.product_id,
        variant_id=line.variant_id,
        title=line.title,
        options=dict(line.options),
        quantity=line.quantity,
        unit_price=str(line.unit_price),
        line_price=str(line.unit_price * line.quantity),
        currency=line.currency,
    )


def _cart_view(
    conversation: Conversation,
    terms: StoreTerms,
    trackers: dict[str, list[TrackerOut]] | None = None,
) -> CartView:
    lines = [_line_out(line) for line in conversation.cart]
    quote = None
    if conversation.cart:
        try:
            priced = terms.quote(conversation.cart)
        except ValueError:  # lines in a currency the store does not sell in: no total
            priced = None
        if priced is not None:
            quote = QuoteOut(
                items=str(priced.items.amount),
                tax=str(priced.tax.amount),
                shipping=str(priced.shipping.amount),
                total=str(priced.total.amount),
                currency=priced.total.currency,
            )
    orders = [
        OrderOut(
            id=order.order_id,
            status=order.status,
            total=str(order.total),
            currency=order.currency,
            approve_url=order.approve_url,
            capture_id=order.capture_id,
            created_at=order.created_at,
            paid_at=order.paid_at,
            lines=[_line_out(line) for line in order.lines],
            refunded=str(order.refunded),
            trackers=(trackers or {}).get(order.order_id),
        )
        for order in reversed(conversation.orders[-MAX_ORDERS_SHOWN:])
    ]
    return CartView(lines=lines, quote=quote, orders=orders)


MAX_TRACKED_ORDERS = 5
InvoiceId = Annotated[
    str, Path(pattern=r"^INV2-[A-Z0-9][A-Z0-9-]{3,35}$", description="e.g. INV2-ABCD-...")
]


def _tracker_out(tracker: dict[str, Any]) -> TrackerOut:
    def text(key: str) -> str | None:
        value = tracker.get(key)
        return None if value is None else str(value)

    return TrackerOut(
        carrier=text("carrier_name_other") or text("carrier"),
        tracking_number=text("tracking_number"),
        status=text("status"),
        shipment_date=text("shipment_date"),
    )


def _backend_failure(error: dict[str, Any]) -> HTTPException:
    """A failed tool call as the HTTP answer it deserves: arguments the backend refused are
    the caller's (422), a missing object is 404, a state that forbids it 409, the rest 502."""
    why = str(error.get("message") or "unknown error")
    if error.get("error") in ("invalid_arguments", "tool_error"):
        return HTTPException(422, why)
    status = error.get("status")
    if status == 404:
        return HTTPException(404, NOT_FOUND)
    if status in (409, 422):
        return HTTPException(409, why)
    return HTTPException(502, f"the payment backend failed: {why}")


@dataclass(frozen=True)
class Window:
    """Every transaction of a window of days, as far as :data:`MAX_SALES_PAGES` reach."""

    start: str
    end: str
    rows: list[dict[str, Any]]
    total_items: int | None
    complete: bool


class TransactionWindows:
    """Reads a window's transactions, every page of them, once for all who ask at the same
    time: the dashboard's panels refresh side by side, and the chart and the transactions
    panel need the same rows. Nothing is kept once the read is done, so no answer is stale."""

    def __init__(self, read: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]):
        self._read = read
        self._running: dict[tuple[date | None, date | None], asyncio.Future[Window]] = {}

    async def read(self, start: date | None, end: date | None) -> Window:
        key = (start, end)
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(self._read_all(start, end))
            self._running[key] = running
            running.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(running)

    async def _read_all(self, start: date | None, end: date | None) -> Window:
        asked: dict[str, Any] = {"page_size": 100}
        if start is not None:
            asked["start_date"] = start.isoformat()
        if end is not None:
            asked["end_date"] = end.isoformat()
        first = await self._read("list_transactions", asked)
        rows = list(first["transactions"])
        pages = int(first.get("total_pages") or 1)
        for page in range(2, min(pages, MAX_SALES_PAGES) + 1):
            rows += (await self._read("list_transactions", {**asked, "page": page}))["transactions"]
        total = first.get("total_items")
        return Window(
            start=str(first.get("start_date") or ""),
            end=str(first.get("end_date") or ""),
            rows=rows,
            total_items=total if isinstance(total, int) else None,
            complete=pages <= MAX_SALES_PAGES,
        )


def panels_router(
    assistant: Assistant,
    caller: Callable[..., Principal],
    guests: GuestTokens,
    *,
    issue_limit: IssueLimit | None = None,
) -> APIRouter:
    """The routes above; ``caller`` is the API's dependency that authenticates a request."""
    limit = issue_limit or IssueLimit()
    checkout = assistant.specialists.get(Domain.CART_CHECKOUT)
    found_terms = getattr(checkout, "terms", None)
    terms = found_terms if isinstance(found_terms, StoreTerms) else DEMO_STORE
    router = APIRouter(prefix="/api")

    def merchant(principal: Annotated[Principal, Depends(caller)]) -> Principal:
        if principal.role is not Role.MERCHANT:
            raise HTTPException(403, NOT_MERCHANT)
        return principal

    async def read(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if assistant.toolkit is None:
            raise HTTPException(503, NO_PAYMENTS)
        result = await assistant.toolkit.call(tool, arguments)
        if result.is_error:
            raise _backend_failure(result.content)
        return result.content

    windows = TransactionWindows(read)

    @router.post("/guest", status_code=201, response_model=GuestToken, tags=["web app"])
    async def guest_token(request: Request) -> GuestToken:
        """A new guest shopper token; no key needed. A few per minute per address (429)."""
        address = request.client.host if request.client else "unknown"
        if not limit.allow(address):
            raise HTTPException(429, TOO_MANY_GUESTS, headers={"Retry-After": "60"})
        token, principal = await asyncio.to_thread(guests.issue)  # may create the secret file
        return GuestToken(token=token, name=principal.name)

    @router.get(
        "/sessions/{session_id}/cart",
        response_model=CartView,
        responses={**_AUTH, 404: {"model": Problem, "description": "No such session."}},
        tags=["web app"],
    )
    async def cart(session_id: str, principal: Annotated[Principal, Depends(caller)]) -> CartView:
        """The session's cart lines, what they cost under the store's terms, and its orders."""
        try:
            conversation = await asyncio.to_thread(assistant.store.load, session_id, history=0)
        except UnknownSession:
            raise HTTPException(404, NOT_FOUND) from None
        if conversation.owner != principal.name:
            raise HTTPException(404, NOT_FOUND)
        return _cart_view(conversation, terms, await shipments(conversation))

    async def shipments(conversation: Conversation) -> dict[str, list[TrackerOut]]:
        """The trackers of the newest paid orders shown, read side by side; an order whose
        trackers cannot be read is left out (the panel then says nothing of its shipping)."""
        if assistant.toolkit is None:
            return {}
        toolkit = assistant.toolkit
        paid = [o for o in reversed(conversation.orders[-MAX_ORDERS_SHOWN:]) if o.capture_id]
        paid = paid[:MAX_TRACKED_ORDERS]
        results = await asyncio.gather(
            *(
                toolkit.call("get_shipment_tracking", {"transaction_id": order.capture_id})
                for order in paid
            )
        )
        return {
            order.order_id: [_tracker_out(t) for t in result.content.get("trackers") or []]
            for order, result in zip(paid, results, strict=True)
            if not result.is_error
        }

    @router.get(
        "/merchant/overview",
        response_model=MerchantOverview,
        responses=_MERCHANT,
        tags=["web app"],
    )
    async def overview(principal: Annotated[Principal, Depends(merchant)]) -> MerchantOverview:
        """Who the merchant key belongs to; shoppers' keys and guests get 403."""
        return MerchantOverview(
            name=principal.name, role=principal.role, payments=assistant.toolkit is not None
        )

    @router.get("/merchant/transactions", responses=_BACKEND, tags=["web app"])
    async def transactions(
        _: Annotated[Principal, Depends(merchant)],
        page_size: Annotated[int, Query(ge=1, le=100)] = 20,
        kind: Annotated[TransactionKind | None, Query(description="Only this type.")] = None,
        start: Annotated[date | None, Query(description="First day (default: end - 30).")] = None,
        end: Annotated[date | None, Query(description="Last day (default: today).")] = None,
    ) -> dict[str, Any]:
        """The newest ``page_size`` transactions of a window of at most 31 days (of one
        ``kind``, if given), newest first, each with its ``type`` (payment, refund, fee,
        reversal, other); ``matched`` counts all of the window's transactions of that kind and
        ``totals`` adds them all up per currency (payments, refunds, fees, net), not only those
        shown. ``complete`` is false when the window held more than can be read at once."""
        window = await windows.read(start, end)
        typed = [{**row, "type": transaction_kind(row.get("event_code"))} for row in window.rows]
        matched = [row for row in typed if kind is None or row["type"] == kind]
        matched.sort(key=lambda row: str(row.get("date") or ""), reverse=True)
        return {
            "start_date": window.start,
            "end_date": window.end,
            "total_items": window.total_items,
            "complete": window.complete,
            "matched": len(matched),
            "transactions": matched[:page_size],
            "totals": transaction_totals(matched),
        }

    @router.get("/merchant/sales", responses=_BACKEND, tags=["web app"])
    async def sales(_: Annotated[Principal, Depends(merchant)]) -> dict[str, Any]:
        """Daily sales and refunds of the last 31 days, for the dashboard's chart: every page
        of the transactions (at most :data:`MAX_SALES_PAGES` of 100), added up per day in the
        currency with the most transactions."""
        window = await windows.read(None, None)
        return {**daily_sales(window.rows, window.start, window.end), "complete": window.complete}

    @router.get("/merchant/invoices", responses=_BACKEND, tags=["web app"])
    async def invoices(
        _: Annotated[Principal, Depends(merchant)],
        page: Annotated[int, Query(ge=1, le=1000)] = 1,
        page_size: Annotated[int, Query(ge=1, le=50)] = 20,
    ) -> dict[str, Any]:
        """A page of invoices, newest first."""
        return await read("list_invoices", {"page": page, "page_size": page_size})

    @router.get(
        "/merchant/invoices/{invoice_id}",
        responses={**_BACKEND, 404: {"model": Problem, "description": "No such invoice."}},
        tags=["web app"],
    )
    async def invoice(
        _: Annotated[Principal, Depends(merchant)], invoice_id: InvoiceId
    ) -> dict[str, Any]:
        """One invoice with its lines, amounts and recipient: the preview of a draft."""
        return await read("get_invoice", {"invoice_id": invoice_id})

    @router.post(
        "/merchant/invoices/{invoice_id}/send",
        responses={
            **_BACKEND,
            404: {"model": Problem, "description": "No such invoice."},
            409: {"model": Problem, "description": "It cannot be sent (already sent, paid...)."},
        },
        tags=["web app"],
    )
    async def send_invoice(
        _: Annotated[Principal, Depends(merchant)], invoice_id: InvoiceId
    ) -> dict[str, Any]:
        """Send a draft invoice to its recipient; it answers the invoice as sent, with the
        link the buyer pays it at."""
        return await read("send_invoice", {"invoice_id": invoice_id})

    @router.get("/merchant/plans", responses=_BACKEND, tags=["web app"])
    async def plans(
        _: Annotated[Principal, Depends(merchant)],
        page: Annotated[int, Query(ge=1, le=1000)] = 1,
        page_size: Annotated[int, Query(ge=1, le=20)] = 10,
    ) -> dict[str, Any]:
        """A page of subscription plans."""
        return await read("list_subscription_plans", {"page": page, "page_size": page_size})

    @router.get("/merchant/disputes", responses=_BACKEND, tags=["web app"])
    async def disputes(
        _: Annotated[Principal, Depends(merchant)],
        page_size: Annotated[int, Query(ge=1, le=50)] = 10,
    ) -> dict[str, Any]:
        """The newest disputes, every state."""
        return await read("list_disputes", {"page_size": page_size})

    return router
