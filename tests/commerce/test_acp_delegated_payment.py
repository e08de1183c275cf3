"""An ACP checkout paid with a delegated token: the agent vaults the buyer's card at the sandbox
(ACP delegate_payment), then completes with the ``vt_`` token; the allowance is enforced: its
checkout session, merchant, amount, currency and expiry, and one order per token."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, Merchant
from cartagent.paypal import PayPalClient
from cartagent.sandbox import Sandbox, ensure_merchant
from tests.commerce.conftest import AcpClient
from tests.commerce.test_acp_checkout import PAYMENT, owner, ready, totals
from tests.conftest import Api
from tests.sandbox.test_delegate_payment import advance, delegate, vault_body


@pytest.fixture
def platform(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    client_id = "platform-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


def _shop_id(request: pytest.FixtureRequest) -> str:
    # The merchant_paypal fixture's client id: the allowance names the merchant that may charge.
    return "shop-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]


def vault(
    platform: Api, merchant: str, headers: dict[str, str] | None = None, **allowance: Any
) -> str:
    """A ``vt_`` token for the test card, chargeable by ``merchant`` under ``allowance``."""
    body = vault_body(merchant, **allowance)
    key = hashlib.sha1(repr(sorted(body["allowance"].items())).encode()).hexdigest()
    response = delegate(platform, body, key=key, headers=headers)
    assert response.status_code == 201, response.text
    token: str = response.json()["id"]
    return token


def _pay(token: str) -> dict[str, Any]:
    credential = {"type": "vault_token", "token": token}
    return {
        "payment_data": {
            "handler_id": "paypal",
            "instrument": {"type": "card", "credential": credential},
        }
    }


def test_a_delegated_token_pays_within_its_allowance(
    acp: AcpClient, platform: Api, request: pytest.FixtureRequest
) -> None:
    session = ready(acp)
    total = totals(session)["total"]
    token = vault(platform, _shop_id(request), max_amount=total, checkout_session_id=session["id"])
    done = acp.post(f"/checkout_sessions/{session['id']}/complete", _pay(token))
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"


def test_a_token_below_the_total_or_for_another_merchant_is_declined(
    acp: AcpClient, platform: Api, request: pytest.FixtureRequest
) -> None:
    session = ready(acp)
    total = totals(session)["total"]
    short = vault(
        platform, _shop_id(request), max_amount=total - 1, checkout_session_id=session["id"]
    )
    declined = acp.post(f"/checkout_sessions/{session['id']}/complete", _pay(short))
    assert (declined.status_code, declined.json()["code"]) == (402, "payment_declined")
    elsewhere = vault(platform, "another-shop", max_amount=total, checkout_session_id=session["id"])
    refused = acp.post(f"/checkout_sessions/{session['id']}/complete", _pay(elsewhere))
    assert (refused.status_code, refused.json()["code"]) == (402, "payment_declined")
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"


def _captures(
    merchant: Merchant, agents: Agents, acp: AcpClient, paypal: PayPalClient, sid: str
) -> int:
    checkout = merchant.get(owner(acp, agents), sid)
    if checkout.payment.paypal_order_id is None:
        return 0
    order = paypal.get_order(checkout.payment.paypal_order_id)
    return sum(
        len(unit.get("payments", {}).get("captures", [])) for unit in order["purchase_units"]
    )


def test_a_token_vaulted_for_one_session_does_not_pay_another(
    acp: AcpClient,
    platform: Api,
    request: pytest.FixtureRequest,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    meant, other = ready(acp), ready(acp)
    allowance = max(totals(meant)["total"], totals(other)["total"])
    token = vault(
        platform, _shop_id(request), max_amount=allowance, checkout_session_id=meant["id"]
    )
    refused = acp.post(f"/checkout_sessions/{other['id']}/complete", _pay(token))
    assert (refused.status_code, refused.json()["code"]) == (402, "payment_declined")
    assert acp.get(f"/checkout_sessions/{other['id']}").json()["status"] == "ready_for_payment"
    assert _captures(merchant, agents, acp, merchant_paypal, other["id"]) == 0
    # The refusal did not use the token up: it still pays the session it was vaulted for.
    paid = acp.post(f"/checkout_sessions/{meant['id']}/complete", _pay(token))
    assert paid.status_code == 200 and paid.json()["status"] == "completed"
    assert _captures(merchant, agents, acp, merchant_paypal, meant["id"]) == 1
    # ... and nothing else afterwards, not even the other session's next attempt.
    again = acp.post(f"/checkout_sessions/{other['id']}/complete", _pay(token))
    assert (again.status_code, again.json()["code"]) == (402, "payment_declined")


def test_a_token_in_another_currency_or_past_its_expiry_is_declined(
    acp: AcpClient, platform: Api, http: TestClient, request: pytest.FixtureRequest
) -> None:
    session = ready(acp)
    total, path = totals(session)["total"], f"/checkout_sessions/{session['id']}/complete"
    shop = _shop_id(request)
    euros = vault(
        platform, shop, max_amount=total, currency="eur", checkout_session_id=session["id"]
    )
    assert acp.post(path, _pay(euros)).json()["code"] == "payment_declined"
    expiring = vault(platform, shop, max_amount=total, checkout_session_id=session["id"])
    advance(Api(http, shop, "secret"), seconds=3600)  # the allowance expired at 13:00
    assert acp.post(path, _pay(expiring)).json()["code"] == "payment_declined"
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"
    assert acp.post(path, {"payment_data": PAYMENT}).json()["status"] == "completed"


def test_a_token_vaulted_with_a_mock_response_declines_through_the_merchant(
    acp: AcpClient, platform: Api, request: pytest.FixtureRequest
) -> None:
    session = ready(acp)
    total, path = totals(session)["total"], f"/checkout_sessions/{session['id']}/complete"
    mock = {"PayPal-Mock-Response": '{"mock_application_codes": "INSTRUMENT_DECLINED"}'}
    declining = vault(
        platform, _shop_id(request), mock, max_amount=total, checkout_session_id=session["id"]
    )
    declined = acp.post(path, _pay(declining))
    assert (declined.status_code, declined.json()["code"]) == (402, "payment_declined")
    assert "INSTRUMENT_DECLINED" in declined.json()["message"]
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"
    good = vault(
        platform, _shop_id(request), max_amount=total + 1, checkout_session_id=session["id"]
    )
    assert acp.post(path, _pay(good)).json()["status"] == "completed"
