"""A second, independent UCP platform: the official ``ucp-sdk`` models and plain httpx only.

The official UCP sample server does not install from a package registry (it is a git checkout
that expects the SDK beside it), so the issue's fallback is taken: the journey is run against
``cartagent merchant`` by a platform that shares no code with cartagent's own UCP client or
wire module. Every request body is built from a ``ucp_sdk`` model and every answer parsed into
one, then the sandbox is asked how many captures the checkout made.

``ucp-sdk`` is pinned at 0.4.6, the last release generated from the schemas the merchant serves
(v2026-04-08); 0.5.0 follows a later draft (destinations carry a ``type``, option descriptions
are objects, payment moved to ``common``). Its models allow unknown fields, so they check what
the release requires: required fields, types and status values.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from cartagent.child_process import free_port
from tests.e2e.test_merchant_server import TOKEN, MerchantProcess, sandbox_captures

# Whole journeys (tests/e2e/): out of the fast lane.
pytestmark = pytest.mark.slow

ucp_sdk = pytest.importorskip("ucp_sdk")

from ucp_sdk.models.schemas.shopping.catalog_search import (  # noqa: E402
    SearchRequest,
    SearchResponse,
)
from ucp_sdk.models.schemas.shopping.checkout_complete_request import (  # noqa: E402
    CheckoutCompleteRequest,
)
from ucp_sdk.models.schemas.shopping.checkout_create_request import (  # noqa: E402
    CheckoutCreateRequest,
)
from ucp_sdk.models.schemas.shopping.checkout_update_request import (  # noqa: E402
    CheckoutUpdateRequest,
)
from ucp_sdk.models.schemas.shopping.fulfillment import Checkout  # noqa: E402
from ucp_sdk.models.schemas.shopping.order import Order  # noqa: E402
from ucp_sdk.models.schemas.ucp import BusinessSchema  # noqa: E402

SERVICE = "dev.ucp.shopping"
PLATFORM = "https://sdk-platform.test/.well-known/ucp"


def platform_profile(version: str) -> dict[str, Any]:
    """The platform's profile, in the release's shape, at the business's version."""
    site = f"https://ucp.dev/{version}"

    def capability(name: str, **extra: str) -> list[dict[str, str]]:
        short = name.rsplit(".", 1)[-1]
        return [
            {
                "version": version,
                "spec": f"{site}/specification/{short}",
                "schema": f"{site}/schemas/shopping/{short}.json",
                **extra,
            }
        ]

    return {
        "ucp": {
            "version": version,
            "services": {
                SERVICE: [
                    {
                        "version": version,
                        "spec": f"{site}/specification/overview",
                        "transport": "rest",
                        "schema": f"{site}/services/shopping/rest.openapi.json",
                    }
                ]
            },
            "capabilities": {
                "dev.ucp.shopping.checkout": capability("dev.ucp.shopping.checkout"),
                "dev.ucp.shopping.fulfillment": capability(
                    "dev.ucp.shopping.fulfillment", extends="dev.ucp.shopping.checkout"
                ),
                "dev.ucp.shopping.catalog.search": capability("dev.ucp.shopping.catalog.search"),
                "dev.ucp.shopping.order": capability("dev.ucp.shopping.order"),
            },
            "payment_handlers": {
                "com.paypal.checkout": [
                    {
                        "id": "sdk_platform_paypal",
                        "version": version,
                        "spec": "https://developer.paypal.com/docs/api/orders/v2/",
                        "schema": "https://sdk-platform.test/schemas/paypal.json",
                        "available_instruments": [{"type": "paypal"}],
                    }
                ]
            },
        }
    }


class Platform:
    """Calls the business the way the SDK's models describe: bodies in, models out."""

    def __init__(self, endpoint: str) -> None:
        self.http = httpx.Client(
            base_url=endpoint,
            timeout=30,
            headers={"Authorization": f"Bearer {TOKEN}", "UCP-Agent": f'profile="{PLATFORM}"'},
        )

    def call(self, method: str, path: str, body: Any | None = None) -> dict[str, Any]:
        headers = {"Request-Id": str(uuid.uuid4())}
        if method != "GET":
            headers["Idempotency-Key"] = str(uuid.uuid4())
        payload = None if body is None else body.model_dump(mode="json", exclude_none=True)
        response = self.http.request(method, path, json=payload, headers=headers)
        assert response.status_code in (200, 201), response.text
        assert response.headers["Request-Id"] == headers["Request-Id"]
        answer: dict[str, Any] = response.json()
        return answer


@pytest.mark.timeout(300)
def test_an_sdk_built_platform_buys_over_ucp_and_paypal_captures_once(tmp_path: Path) -> None:
    sandbox_port = free_port()
    process = MerchantProcess(tmp_path, sandbox_port, "http://127.0.0.1:9/none")
    with process:
        profile_document = httpx.get(f"{process.base_url}/.well-known/ucp", timeout=10).json()
    business = BusinessSchema.model_validate(profile_document["ucp"])
    version = str(business.version)
    profile = tmp_path / "platform.json"
    profile.write_text(json.dumps(platform_profile(version)))
    process.extra = ["--ucp-platform", f"{PLATFORM}={profile}"]

    with process:
        [service] = business.services[SERVICE]
        endpoint = str(service.endpoint)
        platform = Platform(endpoint)

        found = SearchResponse.model_validate(
            platform.call("POST", "/catalog/search", SearchRequest(query="water bottle"))
        )
        assert found.products, "the catalog search found nothing"
        variant = found.products[0].variants[0]
        assert variant.price.amount > 0

        create = CheckoutCreateRequest.model_validate(
            {
                "line_items": [{"item": {"id": variant.id}, "quantity": 2}],
                "buyer": {"email": "grace@example.com", "first_name": "Grace"},
                "fulfillment": {
                    "methods": [
                        {
                            "type": "shipping",
                            "destinations": [
                                {
                                    "first_name": "Grace",
                                    "last_name": "Hopper",
                                    "street_address": "1 Loopback Way",
                                    "address_locality": "Austin",
                                    "address_region": "TX",
                                    "postal_code": "78701",
                                    "address_country": "US",
                                }
                            ],
                        }
                    ]
                },
            }
        )
        session = Checkout.model_validate(platform.call("POST", "/checkout-sessions", create))
        assert session.status == "ready_for_complete", session.messages
        assert [(line.item.id, line.quantity) for line in session.line_items] == [(variant.id, 2)]
        totals = {total.type: total.amount for total in session.totals}
        assert totals["subtotal"] == variant.price.amount * 2
        assert totals["total"] == sum(a for kind, a in totals.items() if kind != "total")

        assert session.fulfillment is not None
        [method] = session.fulfillment.methods
        [group] = method.groups or []
        cheapest = min(group.options or [], key=lambda o: o.totals[-1].amount)
        update = CheckoutUpdateRequest.model_validate(
            {
                "line_items": [{"item": {"id": variant.id}, "quantity": 1}],
                "fulfillment": {
                    "methods": [
                        {
                            "id": method.id,
                            "type": "shipping",
                            "line_item_ids": method.line_item_ids,
                            "selected_destination_id": method.selected_destination_id,
                            "groups": [{"id": group.id, "selected_option_id": cheapest.id}],
                        }
                    ]
                },
            }
        )
        updated = Checkout.model_validate(
            platform.call("PUT", f"/checkout-sessions/{session.id}", update)
        )
        assert [line.quantity for line in updated.line_items] == [1]
        total = next(t.amount for t in updated.totals if t.type == "total")

        complete = CheckoutCompleteRequest.model_validate(
            {
                "payment": {
                    "instruments": [
                        {
                            "id": "sdk_instrument",
                            "handler_id": "paypal",
                            "type": "paypal",
                            "selected": True,
                            "credential": {"type": "paypal_payment_token", "token": "BA-SDK"},
                        }
                    ]
                }
            }
        )
        done = Checkout.model_validate(
            platform.call("POST", f"/checkout-sessions/{session.id}/complete", complete)
        )
        assert done.status == "completed" and done.order is not None

        order = Order.model_validate(platform.call("GET", f"/orders/{done.order.id}"))
        assert order.checkout_id == session.id
        assert next(t.amount for t in order.totals if t.type == "total") == total
        platform.http.close()

        captures = sandbox_captures(sandbox_port, session.id)
    assert len(captures) == 1
    assert round(float(captures[0]["transaction_amount"]["value"]) * 100) == total
