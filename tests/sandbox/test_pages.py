"""The sandbox's HTML pages echo every value escaped, whoever supplied it."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from tests.conftest import Api, approve
from tests.sandbox.test_plans import create_plan

MARKUP = "<script>alert(1)</script>'\"><img src=x onerror=alert(2)>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;&#x27;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"


def assert_inert(page: httpx.Response) -> None:
    assert "<script" not in page.text
    assert "<img" not in page.text


def order_with_markup(api: Api) -> str:
    item = {
        "name": MARKUP[:127],
        "quantity": "1",
        "unit_amount": {"currency_code": "USD", "value": "30.00"},
    }
    amount = {
        "currency_code": "USD",
        "value": "30.00",
        "breakdown": {"item_total": {"currency_code": "USD", "value": "30.00"}},
    }
    unit = {"amount": amount, "items": [item], "description": MARKUP[:127]}
    response = api.post("/v2/checkout/orders", {"intent": "CAPTURE", "purchase_units": [unit]})
    assert response.status_code == 201, response.text
    order_id: str = response.json()["id"]
    return order_id


def test_the_buyer_page_shows_item_names_and_descriptions_as_text(api: Api) -> None:
    order_id = order_with_markup(api)

    page = api.http.get(f"/checkoutnow?token={order_id}")

    assert page.status_code == 200
    assert_inert(page)
    assert page.text.count(ESCAPED) == 2


def test_the_approved_page_shows_them_as_text_too(api: Api) -> None:
    order_id = order_with_markup(api)

    page = approve(api, order_id)

    assert page.status_code == 200
    assert_inert(page)
    assert ESCAPED in page.text


def test_an_unknown_token_is_echoed_as_text(api: Api) -> None:
    page = api.http.get(f"/checkoutnow?token={quote(MARKUP)}")

    assert page.status_code == 404
    assert_inert(page)
    assert ESCAPED in page.text


def test_the_subscription_page_echoes_an_unknown_token_as_text(api: Api) -> None:
    page = api.http.get(f"/webapps/billing/subscriptions?ba_token={quote(MARKUP)}")

    assert page.status_code == 404
    assert_inert(page)
    assert ESCAPED in page.text


def test_the_subscription_page_shows_a_real_subscription(api: Api) -> None:
    plan = create_plan(api)
    sub = api.post("/v1/billing/subscriptions", {"plan_id": plan["id"]}).json()
    link = next(x["href"] for x in sub["links"] if x["rel"] == "approve")

    page = api.http.get(httpx.URL(link).raw_path.decode())

    assert page.status_code == 200
    assert f"<code>{sub['id']}</code>" in page.text
    assert f"<code>{plan['id']}</code>" in page.text
