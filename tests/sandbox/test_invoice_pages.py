"""The buyer's invoice page: the payer-view link of a sent invoice opens it on the sandbox
(the id in the URL's fragment read by the page's one script), shows what is billed, escaped,
and pays what is due through PayPal."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi.testclient import TestClient

from cartagent.sandbox import Sandbox
from tests.conftest import Api
from tests.sandbox.test_invoicing import BASE, create, event_types, house, sent, show


def payer_link(invoice: dict[str, Any]) -> str:
    return str(invoice["detail"]["metadata"]["recipient_view_url"])


def test_pay_here_opens_the_invoice_and_pays_what_is_due(
    api: Api, http: TestClient, sandbox: Sandbox
) -> None:
    body = house()
    body["items"][0]["name"] = "<b>Painting</b> a house"
    invoice = sent(api, body)
    link = urlsplit(payer_link(invoice))
    assert (link.path, link.fragment) == ("/invoice/p/", invoice["id"])
    opener = http.get(link.path)
    assert opener.status_code == 200 and "<script src='/invoice/p/view.js'>" in opener.text
    assert "script-src 'self'" in opener.headers["content-security-policy"]
    script = http.get("/invoice/p/view.js")
    assert "location.hash" in script.text and script.headers["content-type"].startswith(
        "text/javascript"
    )
    # Without scripts the page asks for the number, and the form leads to the same place.
    typed = http.get("/invoice/p/view", params={"id": invoice["id"]}, follow_redirects=False)
    assert typed.headers["location"] == f"/invoice/p/view/{invoice['id']}"
    page = http.get(f"/invoice/p/view/{invoice['id']}")
    assert page.status_code == 200
    assert "&lt;b&gt;Painting&lt;/b&gt;" in page.text and "<b>Painting" not in page.text
    due = invoice["due_amount"]["value"]
    assert f"Pay {due} USD" in page.text and "SENT" in page.text
    paid = http.post(f"/invoice/p/view/{invoice['id']}", follow_redirects=False)
    assert paid.status_code == 303
    after = http.get(paid.headers["location"])
    assert "This invoice is PAID." in after.text and "id=pay" not in after.text
    stored = show(api, invoice["id"])
    assert stored["status"] == "PAID"
    [payment] = stored["payments"]["transactions"]
    assert (payment["type"], payment["method"]) == ("PAYPAL", "PAYPAL")
    assert payment["amount"]["value"] == due
    assert "INVOICING.INVOICE.PAID" in event_types(sandbox, invoice["id"])
    again = http.post(f"/invoice/p/view/{invoice['id']}")
    assert again.status_code == 409  # nothing is due any more


def test_a_draft_or_unknown_invoice_is_not_shown(api: Api, http: TestClient) -> None:
    draft = create(api)
    assert http.get(f"/invoice/p/view/{draft['id']}").status_code == 404
    assert http.post(f"/invoice/p/view/{draft['id']}").status_code == 404
    assert http.get("/invoice/p/view/INV2-NOPE").status_code == 404
    assert http.get("/invoice/p/view/" + "x" * 100).status_code == 404
    assert api.get(f"{BASE}/{draft['id']}").json()["status"] == "DRAFT"
