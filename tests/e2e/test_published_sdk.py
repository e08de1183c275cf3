"""PayPal's own published Python SDK (``paypal-server-sdk``) driving the sandbox over HTTP.

The SDK is used unchanged; the only thing it is told is where the server is. Its
``Configuration`` has no setting for a custom base URL (only the SANDBOX and PRODUCTION
environments), so a subclass answers ``get_base_uri`` with the local server's address and is
handed to the client through its public ``config`` argument.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from cartagent.sandbox import create_app, ensure_merchant, open_sandbox

# Whole journeys (tests/e2e/): out of the fast lane.
pytestmark = pytest.mark.slow

sdk = pytest.importorskip(
    "paypalserversdk", reason="paypal-server-sdk is not installed (pip install paypal-server-sdk)"
)

from paypalserversdk.configuration import Configuration, Environment, Server  # noqa: E402
from paypalserversdk.exceptions.error_exception import ErrorException  # noqa: E402
from paypalserversdk.exceptions.o_auth_provider_exception import (  # noqa: E402
    OAuthProviderException,
)
from paypalserversdk.http.auth.o_auth_2 import ClientCredentialsAuthCredentials  # noqa: E402
from paypalserversdk.models.amount_with_breakdown import AmountWithBreakdown  # noqa: E402
from paypalserversdk.models.checkout_payment_intent import CheckoutPaymentIntent  # noqa: E402
from paypalserversdk.models.money import Money  # noqa: E402
from paypalserversdk.models.order_request import OrderRequest  # noqa: E402
from paypalserversdk.models.purchase_unit_request import PurchaseUnitRequest  # noqa: E402
from paypalserversdk.models.refund_request import RefundRequest  # noqa: E402
from paypalserversdk.paypal_serversdk_client import PaypalServersdkClient  # noqa: E402

CLIENT_ID = "sdk-client"
CLIENT_SECRET = "sdk-secret"


class LocalSandbox(Configuration):  # type: ignore[misc]
    """The SDK's configuration, pointed at a local server instead of api-m.sandbox.paypal.com."""

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        self.base_url = base_url
        super().__init__(environment=Environment.SANDBOX, **kwargs)

    def get_base_uri(self, server: Server = Server.DEFAULT) -> str:
        return self.base_url


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    """The sandbox on a real socket, served by uvicorn from a background thread."""
    sandbox = open_sandbox(f"sqlite:///{tmp_path / 's.db'}")
    ensure_merchant(sandbox, CLIENT_ID, CLIENT_SECRET)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(sandbox), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the sandbox server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sandbox.store.engine.dispose()


@pytest.fixture
def client(base_url: str) -> Any:
    credentials = ClientCredentialsAuthCredentials(
        o_auth_client_id=CLIENT_ID, o_auth_client_secret=CLIENT_SECRET
    )
    return PaypalServersdkClient(
        config=LocalSandbox(base_url, client_credentials_auth_credentials=credentials, timeout=10)
    )


def _order(value: str) -> OrderRequest:
    return OrderRequest(
        intent=CheckoutPaymentIntent.CAPTURE,
        purchase_units=[
            PurchaseUnitRequest(
                amount=AmountWithBreakdown(currency_code="USD", value=value),
                invoice_id="SDK-INV-1",
            )
        ],
    )


def test_the_sdk_creates_approves_captures_reads_and_refunds_an_order(
    client: Any, base_url: str
) -> None:
    created = client.orders.create_order(
        {"body": _order("25.00"), "prefer": "return=representation"}
    )
    assert created.status_code == 201
    order_id = created.body.id
    assert created.body.status == "CREATED"
    assert any(link.rel == "approve" for link in created.body.links)

    approved = httpx.post(f"{base_url}/checkoutnow?token={order_id}")
    assert approved.status_code == 200

    captured = client.orders.capture_order({"id": order_id, "prefer": "return=representation"})
    assert captured.status_code == 201
    assert captured.body.status == "COMPLETED"
    (capture,) = captured.body.purchase_units[0].payments.captures
    assert capture.status == "COMPLETED"
    assert Decimal(capture.amount.value) == Decimal("25.00")
    breakdown = capture.seller_receivable_breakdown
    assert Decimal(breakdown.net_amount.value) == Decimal("25.00") - Decimal(
        breakdown.paypal_fee.value
    )

    shown = client.orders.get_order({"id": order_id})
    assert shown.status_code == 200
    assert shown.body.status == "COMPLETED"
    assert shown.body.purchase_units[0].payments.captures[0].id == capture.id
    assert shown.body.payer.email_address

    refunded = client.payments.refund_captured_payment(
        {
            "capture_id": capture.id,
            "body": RefundRequest(amount=Money(currency_code="USD", value="10.00")),
            "prefer": "return=representation",
        }
    )
    assert refunded.status_code == 201
    assert refunded.body.status == "COMPLETED"
    assert refunded.body.amount.value == "10.00"
    partially = client.payments.get_captured_payment({"capture_id": capture.id})
    assert partially.body.status == "PARTIALLY_REFUNDED"
    refund = client.payments.get_refund({"refund_id": refunded.body.id})
    assert refund.body.id == refunded.body.id


def test_the_sdk_raises_paypals_error_for_capturing_an_unapproved_order(client: Any) -> None:
    created = client.orders.create_order({"body": _order("5.00")})
    with pytest.raises(ErrorException) as raised:
        client.orders.capture_order({"id": created.body.id})
    assert raised.value.response_code == 422
    assert raised.value.name == "UNPROCESSABLE_ENTITY"
    assert [d.issue for d in raised.value.details] == ["ORDER_NOT_APPROVED"]


def test_the_sdk_is_refused_a_token_with_the_wrong_secret(base_url: str) -> None:
    wrong = ClientCredentialsAuthCredentials(
        o_auth_client_id=CLIENT_ID, o_auth_client_secret="not-the-secret"
    )
    client = PaypalServersdkClient(
        config=LocalSandbox(base_url, client_credentials_auth_credentials=wrong, timeout=10)
    )
    with pytest.raises(OAuthProviderException) as raised:
        client.oauth_2.fetch_token()
    assert raised.value.response_code == 401
    assert raised.value.error == "invalid_client"
