"""Tools that take PayPal ids, valid calls of each, and ids that try to leave their segment."""

from __future__ import annotations

from typing import Any

import httpx

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ALL_TOOLS, Tool, Toolkit, ToolkitConfig

from .conftest import approve_all

TOKEN_PATH = "/v1/oauth2/token"
ORDER = "5O190127TN364715T"
CAPTURE = "2GG279541U471931P"
INVOICE = "INV2-Z56S-5LLA-Q52L-CPZ5"
PLAN = "P-5ML4271244454362WXNWU5NQ"
PRODUCT = "PROD-XXCD1234QWER65782"
SUBSCRIPTION = "I-BW452GLLEP1G"
DISPUTE = "PP-D-27803"
TRANSACTION = "8MC585209K746392H"
SERIES = "RI-9Y6699772R098892C"
REMINDER = "RC-239531651S471944P"

# A valid call of every tool that takes an id; the ids are what the bad values replace.
VALID: dict[str, dict[str, Any]] = {
    "get_order": {"order_id": ORDER},
    "capture_order": {"order_id": ORDER},
    "create_refund": {"capture_id": CAPTURE},
    "get_refund": {"refund_id": "1JU08902781691411"},
    "get_invoice": {"invoice_id": INVOICE},
    "update_invoice": {"invoice_id": INVOICE, "note": "Thanks"},
    "delete_invoice": {"invoice_id": INVOICE},
    "send_invoice": {"invoice_id": INVOICE},
    "send_invoice_reminder": {"invoice_id": INVOICE},
    "cancel_sent_invoice": {"invoice_id": INVOICE},
    "generate_invoice_qr_code": {"invoice_id": INVOICE},
    "record_invoice_payment": {"invoice_id": INVOICE, "method": "CASH"},
    "record_invoice_refund": {"invoice_id": INVOICE, "method": "CASH"},
    "show_product_details": {"product_id": PRODUCT},
    "update_product": {"product_id": PRODUCT, "description": "Mugs"},
    "create_subscription_plan": {"product_id": PRODUCT, "name": "Monthly", "price": "9"},
    "list_subscription_plans": {"product_id": PRODUCT},
    "show_subscription_plan_details": {"plan_id": PLAN},
    "update_subscription_plan": {"plan_id": PLAN, "name": "Yearly"},
    "activate_subscription_plan": {"plan_id": PLAN},
    "deactivate_subscription_plan": {"plan_id": PLAN},
    "create_subscription": {"plan_id": PLAN, "shipping_amount": "5"},
    "show_subscription_details": {"subscription_id": SUBSCRIPTION},
    "update_subscription": {"subscription_id": SUBSCRIPTION, "custom_id": "ref-1"},
    "suspend_subscription": {"subscription_id": SUBSCRIPTION, "reason": "Paused"},
    "activate_subscription": {"subscription_id": SUBSCRIPTION},
    "cancel_subscription": {"subscription_id": SUBSCRIPTION, "reason": "Done"},
    "create_shipment_tracking": {
        "transaction_id": TRANSACTION,
        "tracking_number": "9400111899223197428490",
        "carrier": "USPS",
    },
    "get_shipment_tracking": {"transaction_id": TRANSACTION, "tracking_number": "1Z999AA1"},
    "update_shipment_tracking": {
        "transaction_id": TRANSACTION,
        "tracking_number": "1Z999AA1",
        "status": "DELIVERED",
    },
    "list_disputes": {"disputed_transaction_id": TRANSACTION},
    "get_dispute": {"dispute_id": DISPUTE},
    "accept_dispute_claim": {"dispute_id": DISPUTE, "note": "Sorry"},
    "provide_dispute_evidence": {"dispute_id": DISPUTE, "notes": "Shipped"},
    "list_transactions": {"transaction_id": TRANSACTION},
    "get_recurring_series": {"recurring_series_id": SERIES},
    "update_recurring_series": {"recurring_series_id": SERIES, "note": "Thanks"},
    "activate_recurring_series": {"recurring_series_id": SERIES},
    "cancel_recurring_series": {"recurring_series_id": SERIES},
    "delete_recurring_series": {"recurring_series_id": SERIES},
    "update_invoice_auto_reminder": {
        "reminder_configuration_id": REMINDER,
        "type": "AFTER_DUE",
        "days": 3,
    },
    "cancel_invoice_auto_reminder": {"invoice_id": INVOICE},
    "create_conditional_rules_for_invoice": {"invoice_id": INVOICE, "cancel_days_after_due": 7},
}
# Fields named like ids that are the merchant's own free-text references, never in a path.
REFERENCES = {
    ("create_order", "invoice_id"),
    ("create_refund", "invoice_id"),
    ("create_subscription", "custom_id"),
    ("update_subscription", "custom_id"),
}
ID_FIELD_NAMES = ("_id", "tracking_number")

BAD_IDS = [
    "../../../v1/billing/plans",
    "%2e%2e/%2e%2e/v1/billing/plans",
    "..",
    "ABC/capture",
    "ABC?page=2",
    "ABC#top",
    "ABC%2Fcapture",
    "ABC\\..\\DEF",
    "ABC DEF",
    "ABC\u2215DEF",
]


def id_fields(tool: Tool[Any]) -> list[str]:
    names = tool.args.model_fields
    return [n for n in names if n.endswith(ID_FIELD_NAMES) and (tool.name, n) not in REFERENCES]


CASES = [(t, field) for t in ALL_TOOLS for field in id_fields(t)]


class Wire:
    """A PayPal that records what reaches it: tokens are granted, every resource is missing."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == TOKEN_PATH:
            return httpx.Response(200, json={"access_token": "t", "expires_in": 3600})
        self.paths.append(request.url.raw_path.decode().split("?", 1)[0])
        error = {"name": "RESOURCE_NOT_FOUND", "message": "not found", "debug_id": "d1"}
        return httpx.Response(404, json=error)


def wire_toolkit(wire: Wire) -> Toolkit:
    """Every tool, every approval granted, on a client whose only PayPal is ``wire``."""
    client = AsyncPayPalClient(
        "id", "secret", base_url="https://paypal.test", transport=httpx.MockTransport(wire)
    )
    config = ToolkitConfig.everything((t.family, t.action) for t in ALL_TOOLS)
    return Toolkit(client, ALL_TOOLS, config=config, approve=approve_all)
