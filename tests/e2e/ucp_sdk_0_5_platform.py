"""A UCP 2026-08-25 platform built from the official ``ucp-sdk`` 0.5.0 models and httpx only,
run in a process of its own (the project pins ucp-sdk 0.4.6; 0.5.0 comes from
build/ucp-sdk-0.5.0/site, installed by ``scripts/ucp-conformance.py --install-only``).

    python ucp_sdk_0_5_platform.py BASE_URL TOKEN PROFILE_URL

It discovers the business's 2026-08-25 profile, buys one item over REST (every body built from
an SDK model, every answer parsed into one) and prints what it paid as JSON:
``{"checkout_id", "order_id", "total", "order_total", "version", "sdk"}``. It shares no code
with cartagent.
"""

from __future__ import annotations

import json
import sys
import uuid
from importlib import metadata
from typing import Any

import httpx
from ucp_sdk.models.schemas.shopping.checkout_complete_request import CheckoutCompleteRequest
from ucp_sdk.models.schemas.shopping.checkout_create_request import CheckoutCreateRequest
from ucp_sdk.models.schemas.shopping.checkout_update_request import CheckoutUpdateRequest
from ucp_sdk.models.schemas.shopping.fulfillment import Checkout
from ucp_sdk.models.schemas.shopping.order import Order
from ucp_sdk.models.schemas.ucp import BusinessSchema

VERSION = "2026-08-25"
SERVICE = "dev.ucp.shopping"


def call(http: httpx.Client, method: str, path: str, body: Any | None = None) -> dict[str, Any]:
    headers = {"Request-Id": str(uuid.uuid4())}
    if method != "GET":
        headers["Idempotency-Key"] = str(uuid.uuid4())
    payload = None if body is None else body.model_dump(mode="json", exclude_none=True)
    response = http.request(method, path, json=payload, headers=headers)
    if response.status_code not in (200, 201):
        raise SystemExit(f"{method} {path}: {response.status_code} {response.text}")
    answer: dict[str, Any] = response.json()
    return answer


def main(base_url: str, token: str, profile_url: str, item: str) -> dict[str, Any]:
    root = httpx.get(f"{base_url}/.well-known/ucp", timeout=10).json()
    document = root
    if root["ucp"]["version"] != VERSION:
        document = httpx.get(root["ucp"]["supported_versions"][VERSION], timeout=10).json()
    business = BusinessSchema.model_validate(document["ucp"])
    if str(business.version.root if hasattr(business.version, "root") else business.version) != (
        VERSION
    ):
        raise SystemExit(f"the business profile is at {business.version}, not {VERSION}")
    [service] = business.services[SERVICE]
    endpoint = str(service.endpoint)
    headers = {"Authorization": f"Bearer {token}", "UCP-Agent": f'profile="{profile_url}"'}
    with httpx.Client(base_url=endpoint, timeout=30, headers=headers) as http:
        create = CheckoutCreateRequest.model_validate(
            {
                "line_items": [{"item": {"id": item}, "quantity": 2}],
                "buyer": {"email": "grace@example.com", "first_name": "Grace"},
                "fulfillment": {
                    "methods": [
                        {
                            "type": "shipping",
                            "destinations": [
                                {
                                    "type": "shipping_address",
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
        session = Checkout.model_validate(call(http, "POST", "/checkout-sessions", create))
        if session.status != "ready_for_complete":
            raise SystemExit(f"not ready: {session.messages}")
        assert session.fulfillment is not None
        [method] = session.fulfillment.methods
        [group] = method.groups or []
        cheapest = min(group.options or [], key=lambda o: o.totals[-1].amount)
        update = CheckoutUpdateRequest.model_validate(
            {
                "line_items": [{"item": {"id": item}, "quantity": 1}],
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
            call(http, "PUT", f"/checkout-sessions/{session.id}", update)
        )
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
            call(http, "POST", f"/checkout-sessions/{session.id}/complete", complete)
        )
        if done.status != "completed" or done.order is None:
            raise SystemExit(f"not completed: {done.status} {done.messages}")
        order = Order.model_validate(call(http, "GET", f"/orders/{done.order.id}"))
        paid = next(t.amount for t in order.totals if t.type == "total")
    return {
        "checkout_id": session.id,
        "order_id": order.id,
        "total": total,
        "order_total": paid,
        "version": VERSION,
        "sdk": metadata.version("ucp-sdk"),
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
