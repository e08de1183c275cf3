"""The web app in-process: its pages and their CSP, guest tokens, the cart view, and the
merchant panels on the in-process sandbox."""

from __future__ import annotations

import asyncio
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.assistant import Assistant, CartLine, ConversationStore, PlacedOrder
from cartagent.assistant.toolkit import assistant_toolkit
from cartagent.cli.serve import serve
from cartagent.errors import ConfigurationError
from cartagent.paypal import AsyncPayPalClient
from cartagent.retrieval.search import Searcher
from cartagent.sandbox import Sandbox
from cartagent.web import ApiKeys, GuestTokens, create_api, guest_secret
from cartagent.web.guest import IssueLimit
from cartagent.web.pages import STATIC
from tests.conftest import START

from .conftest import ALICE, BOB, MERCHANT, bearer, make_assistant, new_session, say

SECRET = bytes(range(32))
PAINTING = {
    "currency": "USD",
    "due_in_days": 10,
    "items": [
        {
            "name": "Painting a house",
            "quantity": "1",
            "unit_price": "450",
            "tax_percent": "8",
            "discount_percent": "5",
        }
    ],
}
PANELS = ["transactions", "invoices", "plans", "disputes"]


def guest(client: TestClient) -> tuple[str, str]:
    issued = client.post("/api/guest")
    assert issued.status_code == 201, issued.text
    body = issued.json()
    return str(body["token"]), str(body["name"])


# ------------------------------------------------------------------------------ pages


@pytest.mark.parametrize("path", ["/shop", "/merchant", "/login"])
def test_each_page_is_html_with_a_same_origin_csp_and_no_inline_script(
    client: TestClient, path: str
) -> None:
    page = client.get(path)
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page.text, re.DOTALL)
    assert scripts and all(body.strip() == "" for body in scripts)
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", page.text))
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page.text)  # no inline event handlers
    assert "http://" not in page.text and "https://" not in page.text  # no CDN


def test_the_root_sends_shoppers_to_the_shop(client: TestClient) -> None:
    response = client.get("/", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/shop"


@pytest.mark.parametrize(
    ("name", "kind"),
    [("app.css", "text/css"), ("chat.js", "text/javascript"), ("shop.js", "text/javascript")],
)
def test_assets_are_served_with_their_type(client: TestClient, name: str, kind: str) -> None:
    response = client.get(f"/static/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(kind)
    assert response.content == (STATIC / name).read_bytes()


@pytest.mark.parametrize("name", ["shop.html", "..%2Fapi.py", "nope.js", "%2Fetc%2Fpasswd"])
def test_only_the_named_assets_are_served(client: TestClient, name: str) -> None:
    assert client.get(f"/static/{name}").status_code == 404


def test_the_api_still_wins_over_the_pages(client: TestClient) -> None:
    assert client.get("/api/health").json()["status"] == "ok"
    assert client.get("/api/sessions").status_code == 401


@pytest.mark.parametrize("script", sorted(p.name for p in STATIC.glob("*.js")))
def test_scripts_never_parse_data_as_html(script: str) -> None:
    source = (STATIC / script).read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in source, f"{script} uses {sink}"


@pytest.mark.parametrize("page", ["shop.html", "merchant.html", "login.html"])
def test_every_input_of_a_page_has_a_label(page: str) -> None:
    html = (STATIC / page).read_text()
    inputs = re.findall(r"<input\b[^>]*\bid=\"([^\"]+)\"", html)
    assert inputs and len(inputs) == len(re.findall(r"<input\b", html))
    for input_id in inputs:
        assert f'<label for="{input_id}">' in html


# ----------------------------------------------------------------------------- guests


def test_a_guest_token_authenticates_a_shopper_of_its_own(client: TestClient) -> None:
    token, name = guest(client)
    assert re.fullmatch(r"guest\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}", token)
    assert name == "guest-" + token.split(".")[1]
    session_id = new_session(client, token)
    assert say(client, session_id, "show me t-shirts", token).json()["cards"]
    listed = client.get("/api/sessions", headers=bearer(token)).json()["sessions"]
    assert [s["id"] for s in listed] == [session_id]
    other, _ = guest(client)
    assert client.get(
        f"/api/sessions/{session_id}/messages", headers=bearer(other)
    ).status_code == (404)
    assert client.get(
        f"/api/sessions/{session_id}/messages", headers=bearer(ALICE)
    ).status_code == (404)


def _tampered(token: str) -> list[str]:
    _, guest_id, signature = token.split(".")
    flipped = "A" if signature[-1] != "A" else "B"
    other_id = ("x" if guest_id[0] != "x" else "y") + guest_id[1:]
    return [
        f"guest.{guest_id}.{signature[:-1]}{flipped}",
        f"guest.{other_id}.{signature}",
        f"guest.{guest_id}.{signature}x",
        f"guest.{guest_id}",
        f"guest..{signature}",
    ]


def test_a_tampered_guest_token_gets_401(client: TestClient) -> None:
    token, _ = guest(client)
    for forged in _tampered(token):
        response = client.post("/api/sessions", headers=bearer(forged))
        assert response.status_code == 401, forged


def test_a_guest_token_works_on_a_new_app_with_the_same_secret(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    def app() -> TestClient:
        assistant = make_assistant(store, shop_searcher)
        return TestClient(create_api(assistant, keys, guests=GuestTokens(SECRET)))

    with app() as first:
        token, _ = guest(first)
        session_id = new_session(first, token)
    with app() as restarted:
        history = restarted.get(f"/api/sessions/{session_id}/messages", headers=bearer(token))
        assert history.status_code == 200
    other = GuestTokens(bytes(reversed(SECRET)))
    with TestClient(create_api(make_assistant(store, shop_searcher), keys, guests=other)) as c:
        assert c.post("/api/sessions", headers=bearer(token)).status_code == 401


def test_guest_tokens_are_checked_without_state() -> None:
    tokens = GuestTokens(SECRET)
    token, principal = tokens.issue()
    assert tokens.principal(token) == principal and principal.role == "shopper"
    assert GuestTokens(SECRET).principal(token) == principal
    assert tokens.principal(ALICE) is None
    assert tokens.principal(token + "." * 10_000) is None
    with pytest.raises(ConfigurationError, match="32 bytes"):
        GuestTokens(b"short")


def test_the_secret_file_is_made_on_first_use_for_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "data" / "guest-secret"
    tokens = GuestTokens(lambda: guest_secret(path))
    assert not path.exists()
    token, principal = tokens.issue()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert guest_secret(path) == guest_secret(path)
    assert GuestTokens(lambda: guest_secret(path)).principal(token) == principal
    path.write_text("not hex\n")
    with pytest.raises(ConfigurationError, match="cannot read"):
        guest_secret(path)


def test_issuing_is_rate_limited_per_address_in_bounded_memory() -> None:
    now = [0.0]
    limit = IssueLimit(per_minute=6, burst=2, max_clients=3, clock=lambda: now[0])
    assert [limit.allow("a") for _ in range(3)] == [True, True, False]
    now[0] += 10  # one token back every 10 s
    assert limit.allow("a") and not limit.allow("a")
    for address in ("b", "c", "d", "e"):
        assert limit.allow(address)
    assert len(limit._buckets) == 3


def test_the_guest_endpoint_answers_429_once_an_address_asked_too_often(
    client: TestClient,
) -> None:
    statuses = [client.post("/api/guest").status_code for _ in range(6)]
    assert statuses == [201] * 5 + [429]
    refused = client.post("/api/guest")
    assert refused.headers["retry-after"] == "60" and "too many" in refused.json()["detail"]


# ------------------------------------------------------------------------------- cart


def test_the_cart_view_shows_lines_and_the_quote_to_the_owner_only(client: TestClient) -> None:
    session_id = new_session(client)
    empty = client.get(f"/api/sessions/{session_id}/cart", headers=bearer(ALICE)).json()
    assert empty == {"lines": [], "quote": None, "orders": []}
    assert say(client, session_id, "show me red t-shirts").json()["cards"][0]["price"] == "46.66"
    added = say(client, session_id, "add #1 to my cart")
    assert added.status_code == 200 and added.json()["data"] == {"added": True}
    # The confirmation is marked so in the history too (its card offers no second add).
    response = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
    history = response.json()["messages"]
    assert [m["added"] for m in history if m["role"] == "assistant"] == [False, True]
    view = client.get(f"/api/sessions/{session_id}/cart", headers=bearer(ALICE))
    assert view.status_code == 200
    (line,) = view.json()["lines"]
    assert (line["variant_id"], line["quantity"], line["line_price"]) == ("tee-red-l", 1, "46.66")
    assert view.json()["quote"] == {
        "items": "46.66",
        "tax": "3.73",
        "shipping": "5.99",
        "total": "56.38",
        "currency": "USD",
    }
    for key in (BOB, MERCHANT):
        assert client.get(f"/api/sessions/{session_id}/cart", headers=bearer(key)).status_code == (
            404
        )
    assert client.get(f"/api/sessions/{session_id}/cart").status_code == 401
    assert client.get("/api/sessions/nope/cart", headers=bearer(ALICE)).status_code == 404


SHIRT = CartLine("p1", "v1", "T-Shirt", Decimal("46.66"), "USD", 1, {"color": "red"})


def test_the_cart_view_lists_the_sessions_orders_newest_first(
    client: TestClient, store: ConversationStore
) -> None:
    session_id = new_session(client)
    state = store.load(session_id)
    for n, status in enumerate(("COMPLETED", "CREATED")):
        state.update_order(
            PlacedOrder(
                order_id=f"ORDER{n}",
                status=status,  # type: ignore[arg-type]
                total=Decimal("56.38"),
                currency="USD",
                lines=(SHIRT,) if status == "COMPLETED" else (),
                created_at=datetime(2026, 11, 21, 12, n, tzinfo=UTC),
                approve_url=f"http://127.0.0.1:9/checkoutnow?token=ORDER{n}",
            )
        )
    store.save_turn(state, [])
    orders = client.get(f"/api/sessions/{session_id}/cart", headers=bearer(ALICE)).json()["orders"]
    assert [(o["id"], o["status"], o["total"]) for o in orders] == [
        ("ORDER1", "CREATED", "56.38"),
        ("ORDER0", "COMPLETED", "56.38"),
    ]
    assert orders[0]["lines"] == []
    [line] = orders[1]["lines"]
    assert (line["title"], line["options"], line["quantity"]) == ("T-Shirt", {"color": "red"}, 1)
    assert (line["line_price"], orders[1]["refunded"]) == ("46.66", "0")


# ---------------------------------------------------------------------------- merchant


@pytest.mark.parametrize("panel", ["overview", *PANELS])
def test_merchant_panels_need_the_merchants_key(client: TestClient, panel: str) -> None:
    token, _ = guest(client)
    assert client.get(f"/api/merchant/{panel}").status_code == 401
    for shopper in (ALICE, token):
        refused = client.get(f"/api/merchant/{panel}", headers=bearer(shopper))
        assert refused.status_code == 403 and refused.json()["detail"] == (
            "this needs the merchant's API key"
        )


def test_the_overview_names_the_merchant(client: TestClient) -> None:
    overview = client.get("/api/merchant/overview", headers=bearer(MERCHANT))
    assert overview.json() == {"name": "mel", "role": "merchant", "payments": False}


def test_without_payments_the_panels_say_so(client: TestClient) -> None:
    response = client.get("/api/merchant/invoices", headers=bearer(MERCHANT))
    assert response.status_code == 503
    assert response.json() == {"detail": "payments are not configured in this assistant"}


def _merchant_client(
    store: ConversationStore, searcher: Searcher, keys: ApiKeys, client: AsyncPayPalClient
) -> TestClient:
    assistant: Assistant = make_assistant(store, searcher)
    assistant.toolkit = assistant_toolkit(client, today=lambda: START.date())
    return TestClient(create_api(assistant, keys), raise_server_exceptions=False)


@pytest.fixture
def merchant(
    store: ConversationStore,
    shop_searcher: Searcher,
    keys: ApiKeys,
    paypal_client: AsyncPayPalClient,
) -> Iterator[TestClient]:
    with _merchant_client(store, shop_searcher, keys, paypal_client) as http:
        yield http


def test_the_panels_read_the_merchants_data_from_the_sandbox(
    merchant: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    toolkit = assistant_toolkit(paypal_client, today=lambda: START.date())
    created = asyncio.run(toolkit.call("create_invoice", PAINTING))
    assert not created.is_error, created.content
    found: dict[str, Any] = {}
    for panel in PANELS:
        response = merchant.get(f"/api/merchant/{panel}", headers=bearer(MERCHANT))
        assert response.status_code == 200, response.text
        found[panel] = response.json()
    (invoice,) = found["invoices"]["invoices"]
    assert (invoice["id"], invoice["total"], invoice["status"]) == (
        created.content["id"],
        "461.70",
        "DRAFT",
    )
    assert found["transactions"]["transactions"] == []
    assert found["plans"]["plans"] == [] and found["disputes"]["disputes"] == []
    overview = merchant.get("/api/merchant/overview", headers=bearer(MERCHANT)).json()
    assert overview["payments"] is True


def _paid_order(client: AsyncPayPalClient, http: TestClient, value: str) -> str:
    """A captured order of ``value`` USD: created, approved on the buyer page, captured."""
    unit = {"amount": {"currency_code": "USD", "value": value}}
    body = {"intent": "CAPTURE", "purchase_units": [unit]}
    order = asyncio.run(client.post("/v2/checkout/orders", body))
    approved = http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
    assert approved.status_code == 200
    asyncio.run(client.post(f"/v2/checkout/orders/{order['id']}/capture", {}))
    return str(order["id"])


def test_the_transactions_panel_shows_the_newest_first_across_pages(
    merchant: TestClient, paypal_client: AsyncPayPalClient, sandbox: Sandbox, http: TestClient
) -> None:
    paid = []
    for value in ("10.00", "20.00", "30.00"):
        paid.append(_paid_order(paypal_client, http, value))
        sandbox.clock.advance(timedelta(hours=1))
    response = merchant.get("/api/merchant/transactions?page_size=2", headers=bearer(MERCHANT))
    assert response.status_code == 200, response.text
    shown = response.json()["transactions"]
    assert [(t["paypal_reference_id"], t["amount"]) for t in shown] == [
        (paid[2], "30.00"),
        (paid[1], "20.00"),
    ]
    assert response.json()["total_items"] == 3


@pytest.mark.parametrize(
    ("panel", "size"),
    [("invoices", 51), ("plans", 21), ("disputes", 0), ("transactions", 101)],
)
def test_panel_page_sizes_are_bounded(client: TestClient, panel: str, size: int) -> None:
    response = client.get(f"/api/merchant/{panel}?page_size={size}", headers=bearer(MERCHANT))
    assert response.status_code == 422 and "page_size" in response.json()["detail"]


def test_a_failing_payment_backend_gets_a_clear_502(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        body = {"error": "invalid_client", "error_description": "Client Authentication failed"}
        return httpx.Response(401, json=body)

    broken = AsyncPayPalClient(
        "id", "secret", base_url="http://paypal.test", transport=httpx.MockTransport(refuse)
    )
    with _merchant_client(store, shop_searcher, keys, broken) as http:
        for panel in PANELS:
            response = http.get(f"/api/merchant/{panel}", headers=bearer(MERCHANT))
            assert response.status_code == 502
            detail = response.json()["detail"]
            assert detail.startswith("the payment backend failed: ") and len(detail) > 28
    asyncio.run(broken.aclose())


# ------------------------------------------------------------------------------ serve


def test_serve_sends_paypal_back_to_the_shop_and_prints_the_pages(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    store: ConversationStore,
    shop_searcher: Searcher,
) -> None:
    configs: list[uvicorn.Config] = []
    built: dict[str, Any] = {}

    async def record(started: list[uvicorn.Config]) -> None:
        configs.extend(started)

    def build(options: Any, client: Any, **kwargs: Any) -> Assistant:
        built.update(kwargs)
        return make_assistant(store, shop_searcher)

    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.delenv("CARTAGENT_API_KEYS_FILE", raising=False)
    monkeypatch.setattr("cartagent.web.server.serve_together", record)
    monkeypatch.setattr("cartagent.cli.serve.build_assistant", build)
    monkeypatch.setattr("cartagent.cli.serve._log_requests", lambda: None)
    monkeypatch.setattr(ConversationStore, "close", lambda self: None)  # the fixture closes it
    args = ["--paypal", "http://127.0.0.1:9", "--client-id", "c", "--client-secret", "s"]
    result = CliRunner().invoke(serve, [*args, "--port", "8123"])
    assert result.exit_code == 0, result.output
    assert "shop on http://127.0.0.1:8123/shop" in result.output
    assert "merchant on http://127.0.0.1:8123/merchant" in result.output
    assert built["return_url"] == "http://127.0.0.1:8123/shop?session={session}"

    secret = data / "cartagent" / "guest-secret"
    assert not secret.exists()  # made when the first guest comes
    (api,) = configs
    assert isinstance(api.app, FastAPI)
    with TestClient(api.app) as http:
        printed = re.findall(r"http://127\.0\.0\.1:8123(/[^\s,)]*)", result.output)
        assert {"/api", "/docs", "/shop", "/merchant"} <= set(printed)
        for path in printed:
            assert http.get(path).status_code == 200, path
        token, _ = guest(http)
        assert http.post("/api/sessions", headers=bearer(token)).status_code == 201
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert GuestTokens(guest_secret(secret)).principal(token) is not None


def test_transactions_carry_their_type_and_add_up_and_filter_by_type(
    merchant: TestClient, paypal_client: AsyncPayPalClient, sandbox: Sandbox, http: TestClient
) -> None:
    order = _paid_order(paypal_client, http, "40.00")
    captured = asyncio.run(paypal_client.get(f"/v2/checkout/orders/{order}"))
    capture = captured["purchase_units"][0]["payments"]["captures"][0]["id"]
    sandbox.clock.advance(timedelta(hours=1))
    refund = {"amount": {"currency_code": "USD", "value": "15.00"}}
    asyncio.run(paypal_client.post(f"/v2/payments/captures/{capture}/refund", refund))
    body = merchant.get("/api/merchant/transactions", headers=bearer(MERCHANT)).json()
    assert [(t["type"], t["amount"]) for t in body["transactions"]] == [
        ("refund", "-15.00"),
        ("payment", "40.00"),
    ]
    totals = body["totals"]["USD"]
    assert (totals["payments"], totals["refunds"]) == ("40.00", "15.00")
    fees = Decimal(totals["fees"])
    assert Decimal(totals["net"]) == Decimal("25.00") - fees
    only = merchant.get("/api/merchant/transactions?kind=refund", headers=bearer(MERCHANT)).json()
    assert [t["type"] for t in only["transactions"]] == ["refund"]
    assert only["totals"]["USD"]["payments"] == "0"
    bad = merchant.get("/api/merchant/transactions?kind=bogus", headers=bearer(MERCHANT))
    assert bad.status_code == 422


@pytest.mark.parametrize(
    ("code", "kind"),
    [("T0006", "payment"), ("T1107", "refund"), ("T1106", "reversal"), ("T0113", "fee"),
     ("T2001", "other"), (None, "other")],
)  # fmt: skip
def test_paypal_event_codes_read_as_a_merchant_would(code: str | None, kind: str) -> None:
    from cartagent.web.panels import transaction_kind

    assert transaction_kind(code) == kind


def test_the_sales_chart_adds_up_each_day(
    merchant: TestClient, paypal_client: AsyncPayPalClient, sandbox: Sandbox, http: TestClient
) -> None:
    order = _paid_order(paypal_client, http, "40.00")
    _paid_order(paypal_client, http, "2.50")
    captured = asyncio.run(paypal_client.get(f"/v2/checkout/orders/{order}"))
    capture = captured["purchase_units"][0]["payments"]["captures"][0]["id"]
    refund = {"amount": {"currency_code": "USD", "value": "15.00"}}
    asyncio.run(paypal_client.post(f"/v2/payments/captures/{capture}/refund", refund))
    body = merchant.get("/api/merchant/sales", headers=bearer(MERCHANT)).json()
    assert body["currency"] == "USD" and len(body["days"]) == len(body["sales"]) <= 31
    today = body["days"].index(sandbox.clock.now().date().isoformat())
    assert (body["sales"][today], body["refunds"][today]) == ("42.50", "15.00")
    assert sum(Decimal(value) for value in body["sales"]) == Decimal("42.50")


def test_daily_sales_of_nothing_is_an_empty_series() -> None:
    from cartagent.web.panels import daily_sales

    assert daily_sales([], "", "") == {"currency": "", "days": [], "sales": [], "refunds": []}
    [day] = daily_sales([], "2026-12-01", "2026-12-01")["days"]
    assert day == "2026-12-01"


def test_the_totals_cover_every_transaction_of_the_window_not_only_those_shown(
    merchant: TestClient, paypal_client: AsyncPayPalClient, sandbox: Sandbox, http: TestClient
) -> None:
    for value in ("10.00", "20.00", "30.00"):
        _paid_order(paypal_client, http, value)
        sandbox.clock.advance(timedelta(hours=1))
    body = merchant.get(
        "/api/merchant/transactions?page_size=1&kind=payment", headers=bearer(MERCHANT)
    ).json()
    assert [t["amount"] for t in body["transactions"]] == ["30.00"]
    assert (body["matched"], body["complete"]) == (3, True)
    assert body["totals"]["USD"]["payments"] == "60.00"


def test_the_transactions_window_is_chosen_by_date_and_checked(
    merchant: TestClient, paypal_client: AsyncPayPalClient, sandbox: Sandbox, http: TestClient
) -> None:
    _paid_order(paypal_client, http, "10.00")
    today = sandbox.clock.now().date()
    tomorrow = today + timedelta(days=1)
    later = merchant.get(
        f"/api/merchant/transactions?start={tomorrow}&end={tomorrow + timedelta(days=2)}",
        headers=bearer(MERCHANT),
    ).json()
    assert (later["start_date"], later["matched"]) == (tomorrow.isoformat(), 0)
    same = merchant.get(
        f"/api/merchant/transactions?start={today}&end={today}", headers=bearer(MERCHANT)
    ).json()
    assert (same["start_date"], same["end_date"], same["matched"]) == (
        today.isoformat(),
        today.isoformat(),
        1,
    )
    backwards = merchant.get(
        f"/api/merchant/transactions?start={today}&end={today - timedelta(days=1)}",
        headers=bearer(MERCHANT),
    )
    assert backwards.status_code == 422
    assert backwards.json()["detail"] == "end_date is before start_date"
    too_long = merchant.get(
        f"/api/merchant/transactions?start={today - timedelta(days=40)}&end={today}",
        headers=bearer(MERCHANT),
    )
    assert too_long.status_code == 422
    assert "at most 31 days" in too_long.json()["detail"]
    assert (
        merchant.get(
            "/api/merchant/transactions?start=yesterday", headers=bearer(MERCHANT)
        ).status_code
        == 422
    )


def test_panels_that_ask_at_once_share_one_read_of_the_window() -> None:
    from cartagent.web.panels import TransactionWindows

    calls: list[dict[str, Any]] = []

    async def read(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        calls.append(arguments)
        await asyncio.sleep(0.01)
        rows = [{"id": f"T{arguments.get('page', 1)}", "amount": "1.00"}]
        return {"transactions": rows, "total_pages": 2, "total_items": 2,
                "start_date": "2026-11-01", "end_date": "2026-11-30"}  # fmt: skip

    async def scenario() -> None:
        windows = TransactionWindows(read)
        first, second = await asyncio.gather(windows.read(None, None), windows.read(None, None))
        assert first is second and [r["id"] for r in first.rows] == ["T1", "T2"]
        assert len(calls) == 2  # two pages, read once for both
        await windows.read(None, None)  # nothing is kept once the read is done
        assert len(calls) == 4

    asyncio.run(scenario())


def test_a_draft_invoice_is_previewed_with_its_lines_then_sent_once(
    merchant: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    toolkit = assistant_toolkit(paypal_client, today=lambda: START.date())
    made = asyncio.run(toolkit.call("create_invoice", PAINTING))
    invoice_id = made.content["id"]
    shown = merchant.get(f"/api/merchant/invoices/{invoice_id}", headers=bearer(MERCHANT))
    assert shown.status_code == 200, shown.text
    preview = shown.json()
    assert (preview["status"], preview["total"], preview["currency"]) == ("DRAFT", "461.70", "USD")
    assert preview["items"] == [
        {"name": "Painting a house", "quantity": "1", "unit_price": "450.00",
         "tax_percent": "8", "discount_percent": "5"},
    ]  # fmt: skip
    assert preview["breakdown"] == {
        "item_total": "450.00", "discount": "22.50", "tax_total": "34.20"
    }  # fmt: skip
    assert "payer_view_url" not in preview

    sent = merchant.post(f"/api/merchant/invoices/{invoice_id}/send", headers=bearer(MERCHANT))
    assert sent.status_code == 200, sent.text
    after = merchant.get(f"/api/merchant/invoices/{invoice_id}", headers=bearer(MERCHANT)).json()
    assert after["status"] in ("SENT", "UNPAID") and after["payer_view_url"]
    again = merchant.post(f"/api/merchant/invoices/{invoice_id}/send", headers=bearer(MERCHANT))
    assert again.status_code == 409

    missing = "INV2-AAAA-BBBB-CCCC-DDDD"
    for answer in (
        merchant.get(f"/api/merchant/invoices/{missing}", headers=bearer(MERCHANT)),
        merchant.post(f"/api/merchant/invoices/{missing}/send", headers=bearer(MERCHANT)),
    ):
        assert answer.status_code == 404
    for bad in ("nope", "INV2-<script>", "INV2-" + "A" * 40):
        refused = merchant.get(f"/api/merchant/invoices/{bad}", headers=bearer(MERCHANT))
        assert refused.status_code == 422
    shopper = merchant.get(f"/api/merchant/invoices/{invoice_id}", headers=bearer(ALICE))
    assert shopper.status_code == 403
    assert merchant.post(f"/api/merchant/invoices/{invoice_id}/send").status_code == 401


def test_a_paid_order_shows_its_shipments_in_the_cart_view(
    merchant: TestClient,
    store: ConversationStore,
    paypal_client: AsyncPayPalClient,
    http: TestClient,
) -> None:
    order_id = _paid_order(paypal_client, http, "56.38")
    captured = asyncio.run(paypal_client.get(f"/v2/checkout/orders/{order_id}"))
    capture = captured["purchase_units"][0]["payments"]["captures"][0]["id"]
    session_id = new_session(merchant)
    state = store.load(session_id)
    placed = datetime(2026, 11, 21, 12, tzinfo=UTC)
    for order in (
        PlacedOrder(order_id, "COMPLETED", Decimal("56.38"), "USD", (SHIRT,), placed,
                    capture_id=capture),
        PlacedOrder("UNPAID0", "CREATED", Decimal("56.38"), "USD", (SHIRT,), placed),
    ):  # fmt: skip
        state.update_order(order)
    store.save_turn(state, [])

    def orders() -> dict[str, Any]:
        view = merchant.get(f"/api/sessions/{session_id}/cart", headers=bearer(ALICE)).json()
        return {order["id"]: order["trackers"] for order in view["orders"]}

    assert orders() == {"UNPAID0": None, order_id: []}  # paid, not shipped yet
    tracker = {"transaction_id": capture, "tracking_number": "1Z999AA10123456784",
               "status": "SHIPPED", "carrier": "UPS", "shipment_date": "2026-11-22"}  # fmt: skip
    asyncio.run(paypal_client.post("/v1/shipping/trackers-batch", {"trackers": [tracker]}))
    assert orders()[order_id] == [
        {"carrier": "UPS", "tracking_number": "1Z999AA10123456784", "status": "SHIPPED",
         "shipment_date": "2026-11-22"},
    ]  # fmt: skip
