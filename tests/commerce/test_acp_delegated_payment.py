"""An ACP checkout paid with a delegated token: the agent vaults the buyer's card at the sandbox
(ACP delegate_payment), then completes with the ``vt_`` token; the allowance is enforced."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.sandbox import Sandbox, ensure_merchant
from tests.commerce.conftest import AcpClient
from tests.commerce.test_acp_checkout import ready, totals
from tests.conftest import Api
from tests.sandbox.test_delegate_payment import delegate, vault_body


@pytest.fixture
def platform(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    client_id = "platform-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


def _shop_id(request: pytest.FixtureRequest) -> str:
    # The merchant_paypal fixture's client id: the allowance names the merchant that may charge.
    return "shop-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]


def vault(platform: Api, merchant: str, **allowance: Any) -> str:
    """A ``vt_`` token for the test card, chargeable by ``merchant`` under ``allowance``."""
    body = vault_body(merchant, **allowance)
    key = hashlib.sha1(repr(sorted(body["allowance"].items())).encode()).hexdigest()
    response = delegate(platform, body, key=key)
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
    short = vault(platform, _shop_id(request), max_amount=total - 1)
    declined = acp.post(f"/checkout_sessions/{session['id']}/complete", _pay(short))
    assert (declined.status_code, declined.json()["code"]) == (402, "payment_declined")
    elsewhere = vault(platform, "another-shop", max_amount=total)
    refused = acp.post(f"/checkout_sessions/{session['id']}/complete", _pay(elsewhere))
    assert (refused.status_code, refused.json()["code"]) == (402, "payment_declined")
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"
