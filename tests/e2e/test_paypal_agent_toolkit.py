"""PayPal's own agent toolkit (``paypal-agent-toolkit``) running every one of its tools against
the sandbox as a real process (issue 13).

The toolkit's framework-neutral core (``paypal_agent_toolkit.shared``) is used unchanged, in
sandbox mode; the only thing it is told is where the server is: its ``PayPalClient`` keeps the
base URL (``https://api-m.sandbox.paypal.com``) in an attribute, set once to the local server.
Every tool in ``tools.tools`` is run through ``PayPalAPI.run`` with the arguments a model would
give it, in the order a merchant would need them (an order before it is paid, a product before a
plan before a subscription, an invoice before it is sent, paid and refunded, a capture before it
is tracked and disputed). The steps only a buyer can take (approving an order or a subscription,
opening a dispute) go to the sandbox's own routes over HTTP.

Bounded: about sixty requests to one local server, every one of them through ``requests``
without a timeout of the toolkit's own, so the module carries a pytest timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from starlette.routing import Match

from cartagent.child_process import SandboxProcess
from cartagent.sandbox import create_app, open_sandbox

pytest.importorskip(
    "paypal_agent_toolkit.shared.api",
    reason="paypal-agent-toolkit is not installed (make install puts it in with --no-deps)",
)
import requests
from paypal_agent_toolkit.shared import tools as toolkit_tools
from paypal_agent_toolkit.shared.api import PayPalAPI
from paypal_agent_toolkit.shared.configuration import Context
from paypal_agent_toolkit.shared.constants import SANDBOX_BASE_URL
from paypal_agent_toolkit.shared.insights.tool_handlers import get_merchant_insights

pytestmark = [
    pytest.mark.slow,  # a whole journey (tests/e2e/)
    pytest.mark.timeout(120),
    # The toolkit's own code still calls pydantic v1's .dict().
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
]

CLIENT_ID = "toolkit-client"
CLIENT_SECRET = "toolkit-secret"

# Tools that fail because the sandbox has no route for them yet (it answers 404), with the route
# each needs; empty since the recurring series, reminder, conditional rule and insight routes
# landed. test_tools_not_yet_served_still_fail_on_a_missing_route keeps it honest.
NOT_YET: dict[str, str] = {}

# The toolkit itself refuses these in sandbox mode, before any request is sent.
REFUSED_IN_SANDBOX = {"get_merchant_insights"}

# Not a missing route: the toolkit's request breaks PayPal's published spec, which the sandbox
# enforces. list_transactions always sends `transaction_id=None` (it urlencodes the unset
# field), and the spec's transaction_id is 17 to 19 characters, so the sandbox answers 400
# INVALID_STRING_MIN_LENGTH. Whether live PayPal refuses it too is not verified; kept out of
# the succeeding tools until that is decided.
REFUSED_BY_PAYPALS_SPEC: dict[str, str] = {
    "list_transactions": "/transaction_id INVALID_STRING_MIN_LENGTH",
}

# A syntactically valid recurring series ID (RI- and 17 characters) for the series tools to act
# on should create_recurring_series fail.
PLACEHOLDER_SERIES_ID = "RI-ABCDEFGHJKLMNPQRS"


@dataclass
class Outcome:
    """What one tool call did: its parsed result, or why it failed."""

    ok: bool
    result: Any = None
    status: int | None = None  # the HTTP status of a failed request
    method: str = ""  # and that request's method and path
    path: str = ""
    detail: str = ""


def _failure(error: requests.HTTPError) -> Outcome:
    response = error.response
    request = response.request
    body = request.body.decode() if isinstance(request.body, bytes) else request.body
    return Outcome(
        ok=False,
        status=response.status_code,
        method=str(request.method),
        path=urlparse(request.url).path,
        detail=f"{request.method} {request.url} {body or ''} -> "
        f"{response.status_code} {response.text[:1000]}",
    )


class ToolRun:
    """Runs tools through ``PayPalAPI.run`` and keeps each one's outcome by name."""

    def __init__(self, api: PayPalAPI) -> None:
        self.api = api
        self.outcomes: dict[str, Outcome] = {}

    def __call__(self, method: str, params: dict[str, Any], *, variant: str = "") -> Any:
        """Run ``method``; return its parsed result, or ``None`` when it failed."""
        name = f"{method}[{variant}]" if variant else method
        assert name not in self.outcomes, f"{name} run twice"
        try:
            result = self.api.run(method, params)
        except requests.HTTPError as error:
            self.outcomes[name] = _failure(error)
            return None
        # The toolkit validates its arguments with pydantic (ValidationError is a ValueError) and
        # refuses a tool with ValueError; some of its own bugs surface as other exceptions.
        except Exception as error:
            self.outcomes[name] = Outcome(ok=False, detail=f"{type(error).__name__}: {error}")
            return None
        parsed = json.loads(result) if isinstance(result, str) and result[:1] in "{[" else result
        self.outcomes[name] = Outcome(ok=True, result=parsed)
        return parsed


def _id_from_links(result: Any) -> str | None:
    """A created resource's ID: its ``id``, or the last segment of its ``self`` link."""
    if not isinstance(result, dict):
        return None
    if isinstance(result.get("id"), str):
        return str(result["id"])
    href = result.get("href") or next(
        (link["href"] for link in result.get("links", []) if link.get("rel") == "self"), None
    )
    return urlparse(href).path.rsplit("/", 1)[-1] if href else None


def _quietly(api: PayPalAPI, method: str, params: dict[str, Any]) -> Any:
    """A set-up call; if it fails, the tool it sets up for fails and says why."""
    try:
        return json.loads(api.run(method, params))
    except Exception:
        return None


def _reminder_id(result: Any, kind: str) -> str | None:
    """The ID of the ``kind`` (BEFORE_DUE or AFTER_DUE) configuration setup answered with."""
    if not isinstance(result, dict):
        return None
    for config in result.get("configurations", []):
        if isinstance(config, dict) and config.get("type") == kind and config.get("id"):
            return str(config["id"])
    return None


def _date(days: int) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).date().isoformat()


def _instant(days: int) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


RECIPIENT = {
    "billing_info": {
        "name": {"given_name": "Ada", "surname": "Lovelace"},
        "email_address": "ada@example.com",
        "address": {
            "address_line_1": "12 Analytical Row",
            "admin_area_2": "San Jose",
            "admin_area_1": "CA",
            "postal_code": "95131",
            "country_code": "US",
        },
    }
}
INVOICE_ITEMS = [
    {
        "name": "Garden design",
        "description": "Two site visits and a planting plan",
        "quantity": "2",
        "unit_amount": {"currency_code": "USD", "value": "150.00"},
        "tax": {"name": "Sales Tax", "percent": "8"},
        "unit_of_measure": "HOURS",
    },
    {
        "name": "Seed mix",
        "quantity": "1",
        "unit_amount": {"currency_code": "USD", "value": "24.50"},
        "discount": {"percent": "10"},
    },
]


def _invoice(number: str, **extra: Any) -> dict[str, Any]:
    return {
        "currency_code": "USD",
        "invoice_number": number,
        "reference": "PO-4471",
        "note": "Thank you for your business.",
        "invoicer_business_name": "Green Thumb Gardens",
        "invoicer_email_address": "merchant@example.com",
        "primary_recipients": [RECIPIENT],
        "items": INVOICE_ITEMS,
        "shipping_cost": "10.00",
        **extra,
    }


def _series(start: str) -> dict[str, Any]:
    return {
        "interval_unit": "MONTH",
        "interval_count": 1,
        "start_series_date": start,
        "total_cycles": 6,
        "currency_code": "USD",
        "reference": "Monthly garden care",
        "invoicer_business_name": "Green Thumb Gardens",
        "primary_recipients": [RECIPIENT],
        "items": INVOICE_ITEMS[:1],
    }


def _run_orders(run: ToolRun, buyer: httpx.Client) -> tuple[str | None, str | None]:
    """An order created, approved by the buyer, paid and read back: (order ID, capture ID)."""
    order = run(
        "create_order",
        {
            "currency_code": "USD",
            "items": [
                {
                    "name": "Trail running socks",
                    "description": "Merino, size M",
                    "item_cost": 12.5,
                    "tax_percent": 8,
                    "item_total": 27.0,
                    "quantity": 2,
                }
            ],
            "shipping_cost": 5,
            "shipping_address": {
                "address_line_1": "2211 N First Street",
                "admin_area_2": "San Jose",
                "admin_area_1": "CA",
                "postal_code": "95131",
                "country_code": "US",
            },
            "notes": "Leave at the door",
        },
    )
    order_id = _id_from_links(order)
    if order_id is None:
        return None, None
    # The buyer approves on the order's approve page; it redirects to the order's return_url.
    approved = buyer.post("/checkoutnow", params={"token": order_id}, data={})
    assert approved.status_code == 303, approved.text
    paid = run("pay_order", {"order_id": order_id})
    run("get_order_details", {"order_id": order_id})
    captures = (paid or {}).get("raw", {}).get("purchase_units", [{}])[0]
    capture_id = captures.get("payments", {}).get("captures", [{}])[0].get("id")
    return order_id, capture_id


def _run_subscriptions(run: ToolRun, buyer: httpx.Client) -> None:
    product = run(
        "create_product",
        {
            "name": "Coffee club",
            "type": "PHYSICAL",
            "description": "A bag of single-origin beans every month",
            "category": "FOOD_DRINK_AND_NUTRITION",
        },
    )
    product_id = _id_from_links(product) or "PROD-PLACEHOLDER0"
    run("list_products", {"page": 1, "page_size": 10, "total_required": True})
    run("show_product_details", {"product_id": product_id})
    plan = run(
        "create_subscription_plan",
        {
            "product_id": product_id,
            "name": "Coffee club monthly",
            "description": "One bag a month",
            "billing_cycles": [
                {
                    "frequency": {"interval_unit": "MONTH", "interval_count": 1},
                    "tenure_type": "REGULAR",
                    "sequence": 1,
                    "total_cycles": 12,
                    "pricing_scheme": {"fixed_price": {"currency_code": "USD", "value": "18.00"}},
                }
            ],
            "payment_preferences": {
                "auto_bill_outstanding": True,
                "setup_fee": {"currency_code": "USD", "value": "0"},
                "setup_fee_failure_action": "CONTINUE",
                "payment_failure_threshold": 3,
            },
            "taxes": {"percentage": "8", "inclusive": False},
        },
    )
    plan_id = _id_from_links(plan) or "P-PLACEHOLDER0000"
    run("list_subscription_plans", {"product_id": product_id, "page_size": 10})
    run("show_subscription_plan_details", {"plan_id": plan_id})
    subscription = run(
        "create_subscription",
        {
            "plan_id": plan_id,
            "subscriber": {
                "name": {"given_name": "Grace", "surname": "Hopper"},
                "email_address": "grace@example.com",
            },
            "application_context": {
                "brand_name": "Coffee Club",
                "user_action": "SUBSCRIBE_NOW",
                "return_url": "https://example.com/subscribed",
                "cancel_url": "https://example.com/cancelled",
            },
        },
    )
    subscription_id = _id_from_links(subscription) or "I-PLACEHOLDER0000"
    if subscription is not None:
        # Only an active subscription can be cancelled: the subscriber approves it first.
        buyer.post(f"/v1/sandbox/subscriptions/{subscription_id}/approve").raise_for_status()
    run("show_subscription_details", {"subscription_id": subscription_id})
    run(
        "cancel_subscription",
        {"subscription_id": subscription_id, "payload": {"reason": "Moving abroad"}},
    )


def _run_invoices(run: ToolRun) -> None:
    numbered = run("generate_invoice_number", {})
    number = (numbered or {}).get("invoice_number", "INV-TOOLKIT-1")
    invoice_id = _id_from_links(run("create_invoice", _invoice(number))) or "INV2-PLACEHOLDER"
    run("get_invoice", {"invoice_id": invoice_id})
    run("list_invoices", {"page": 1, "page_size": 20, "total_required": True})
    run(
        "update_invoicing",
        {
            "resource_type": "invoice",
            "invoice_update": {
                **_invoice(number, note="Updated: paid on delivery is fine."),
                "invoice_id": invoice_id,
                "send_to_recipient": False,
            },
        },
        variant="invoice",
    )
    run(
        "create_conditional_rules_for_invoice",
        {
            "invoice_id": invoice_id,
            "rules": [
                {
                    "conditional_rule_type": "EARLY_PAYMENT_DISCOUNT",
                    "conditional_rule_value_type": "PERCENT",
                    "conditional_rule_value": "5",
                    "rule_expiry_terms": {
                        "rule_expiry_condition": "SEVEN_DAYS_AFTER_ISSUE_DATE",
                        "condition_rule_end_date": _date(days=7),
                    },
                }
            ],
        },
    )
    run(
        "send_invoice",
        {"invoice_id": invoice_id, "note": "Your invoice", "send_to_recipient": True},
    )
    run(
        "send_invoice_reminder",
        {"invoice_id": invoice_id, "subject": "Friendly reminder", "note": "Due soon"},
    )
    run("generate_invoice_qr_code", {"invoice_id": invoice_id, "width": 300, "height": 300})
    run(
        "search_invoicing",
        {
            "resource_type": "invoice",
            "total_required": True,
            "invoice_filters": {"recipient_email": "ada@example.com", "status": ["SENT"]},
        },
        variant="invoice",
    )
    reminders = run(
        "setup_invoice_auto_reminders",
        {
            "configurations": [
                {"type": "BEFORE_DUE", "interval": {"value": 3}, "repetition": 1},
                {"type": "AFTER_DUE", "interval": {"value": 7}, "repetition": 2},
            ]
        },
    )
    reminder_id = _reminder_id(reminders, "AFTER_DUE") or "RC-PLACEHOLDER0000000"
    run(
        "update_invoice_auto_reminder",
        {
            "reminder_configuration_id": reminder_id,
            "type": "AFTER_DUE",
            "status": "ACTIVE",
            "interval": {"value": 5},
            "repetition": 3,
        },
    )
    run("cancel_invoice_auto_reminder", {"invoice_id": invoice_id})
    # 300.00 + 8% tax on it + 24.50 less 10% + 10.00 shipping = 356.05, paid within the 5%
    # early payment discount's seven days: 356.05 - 17.80
    total = "338.25"
    run(
        "record_payment_for_invoice",
        {
            "invoice_id": invoice_id,
            "method": "CHECK",
            "note": "Check no. 1041",
            "amount": {"currency_code": "USD", "value": total},
        },
    )
    run(
        "record_refund_for_invoice",
        {
            "invoice_id": invoice_id,
            "method": "CHECK",
            "amount": {"currency_code": "USD", "value": "24.00"},
        },
    )

    sent = _id_from_links(_quietly(run.api, "create_invoice", _invoice(f"{number}-B")))
    _quietly(run.api, "send_invoice", {"invoice_id": sent})
    run(
        "cancel_sent_invoice",
        {"invoice_id": sent, "note": "Ordered twice", "send_to_recipient": True},
    )
    draft = _id_from_links(_quietly(run.api, "create_invoice", _invoice(f"{number}-C")))
    run("delete_invoice", {"invoice_id": draft})


def _run_recurring_series(run: ToolRun) -> None:
    series_id = _id_from_links(run("create_recurring_series", _series(_date(days=1))))
    series_id = series_id or PLACEHOLDER_SERIES_ID
    run("get_recurring_series", {"recurring_series_id": series_id})
    run(
        "update_invoicing",
        {
            "resource_type": "recurring_series",
            "recurring_series_update": {
                **_series(_date(days=2)),
                "recurring_series_id": series_id,
            },
        },
        variant="recurring_series",
    )
    run("activate_recurring_series", {"recurring_series_id": series_id})
    run(
        "search_invoicing",
        {
            "resource_type": "recurring_series",
            "recurring_series_filters": {"search_filters": {"status": ["ACTIVE"]}},
        },
        variant="recurring_series",
    )
    run("cancel_recurring_series", {"recurring_series_id": series_id})
    # Only a draft series can be deleted: a second one, never activated.
    draft = _id_from_links(_quietly(run.api, "create_recurring_series", _series(_date(days=3))))
    run("delete_recurring_series", {"recurring_series_id": draft or PLACEHOLDER_SERIES_ID})


def _run_tracking_and_disputes(
    run: ToolRun, buyer: httpx.Client, order_id: str | None, capture_id: str | None
) -> None:
    capture_id = capture_id or "CAPTURE-PLACEHOLDER"
    tracking = {"transaction_id": capture_id, "tracking_number": "1Z999AA10123456784"}
    run("create_shipment_tracking", {**tracking, "order_id": order_id, "carrier": "UPS"})
    run("get_shipment_tracking", {"transaction_id": capture_id})
    run("update_shipment_tracking", {**tracking, "status": "DELIVERED", "carrier": "UPS"})
    run("list_transactions", {"start_date": _instant(days=-7), "end_date": _instant(days=1)})

    opened = buyer.post(
        "/v1/sandbox/disputes",
        json={"capture_id": capture_id, "message": "The parcel never arrived."},
    )
    dispute_id = opened.json()["dispute_id"] if opened.is_success else "PP-D-00000"
    run("list_disputes", {"disputed_transaction_id": capture_id})
    run("get_dispute", {"dispute_id": dispute_id})
    run("accept_dispute_claim", {"dispute_id": dispute_id, "note": "Refunding in full."})


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    db = tmp_path_factory.mktemp("toolkit") / "sandbox.db"
    with SandboxProcess(
        f"sqlite:///{db}", client_id=CLIENT_ID, client_secret=CLIENT_SECRET
    ) as process:
        yield process


@pytest.fixture(scope="module")
def outcomes(sandbox: SandboxProcess) -> dict[str, Outcome]:
    """Every tool of the toolkit run once (two resource types for the two dispatching tools)."""
    api = PayPalAPI(CLIENT_ID, CLIENT_SECRET, Context(sandbox=True))
    client = api._paypal_client  # the toolkit has no public setting for the URL
    assert client.base_url == SANDBOX_BASE_URL
    client.base_url = sandbox.base_url  # the one change: where PayPal's sandbox is

    run = ToolRun(api)
    with httpx.Client(
        base_url=sandbox.base_url,
        headers={"Authorization": f"Bearer {sandbox.token()}"},
        timeout=30,
    ) as buyer:
        order_id, capture_id = _run_orders(run, buyer)
        _run_subscriptions(run, buyer)
        _run_invoices(run)
        _run_recurring_series(run)
        _run_tracking_and_disputes(run, buyer, order_id, capture_id)
    run(
        "get_merchant_insights",
        {
            "start_date": _date(days=-30),
            "end_date": _date(days=0),
            "insight_type": "SALES",
            "time_interval": "WEEKLY",
        },
    )
    return run.outcomes


def _tool_of(name: str) -> str:
    return name.split("[", 1)[0]


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], bool]:
    """Whether the sandbox app has a route for a method and path (the server answers a missing
    route and a missing resource alike: 404 RESOURCE_NOT_FOUND)."""
    db = tmp_path_factory.mktemp("routes") / "routes.db"
    app = create_app(open_sandbox(f"sqlite:///{db}"))

    def has_route(method: str, path: str) -> bool:
        scope = {"type": "http", "method": method, "path": path, "root_path": "", "headers": []}
        return any(route.matches(scope)[0] is Match.FULL for route in app.routes)

    return has_route


def test_every_toolkit_tool_is_run(outcomes: dict[str, Outcome]) -> None:
    methods = {tool["method"] for tool in toolkit_tools.tools}
    assert len(methods) == len(toolkit_tools.tools) == 42, "the toolkit changed: run its new tools"
    assert {_tool_of(name) for name in outcomes} == methods


def test_every_tool_the_sandbox_serves_succeeds(outcomes: dict[str, Outcome]) -> None:
    expected = set(outcomes) - set(NOT_YET) - REFUSED_IN_SANDBOX - set(REFUSED_BY_PAYPALS_SPEC)
    failed = {name: outcomes[name].detail for name in sorted(expected) if not outcomes[name].ok}
    assert not failed, json.dumps(failed, indent=2)


def test_tools_not_yet_served_still_fail_on_a_missing_route(
    outcomes: dict[str, Outcome], routed: Callable[[str, str], bool]
) -> None:
    now_succeed = sorted(name for name in NOT_YET if outcomes[name].ok)
    assert not now_succeed, f"these tools succeed now: take them out of NOT_YET: {now_succeed}"
    other = {
        name: outcomes[name].detail
        for name in sorted(NOT_YET)
        if outcomes[name].status != 404 or routed(outcomes[name].method, outcomes[name].path)
    }
    assert not other, f"NOT_YET tools that fail for another reason: {json.dumps(other, indent=2)}"


def test_tools_whose_requests_break_paypals_spec_are_refused_with_the_reason(
    outcomes: dict[str, Outcome],
) -> None:
    for name, reason in REFUSED_BY_PAYPALS_SPEC.items():
        outcome = outcomes[name]
        assert not outcome.ok, f"{name} succeeds now: take it out of REFUSED_BY_PAYPALS_SPEC"
        field, issue = reason.split()
        assert outcome.status == 400, outcome.detail
        assert f'"field":"{field}"' in outcome.detail, outcome.detail
        assert f'"issue":"{issue}"' in outcome.detail, outcome.detail


def test_merchant_insights_are_refused_by_the_toolkit_in_sandbox_mode(
    outcomes: dict[str, Outcome],
) -> None:
    insights = outcomes["get_merchant_insights"]
    assert not insights.ok
    assert insights.detail == "ValueError: get_merchant_insights is not supported in sandbox mode"


def test_the_request_the_toolkit_sends_for_insights_on_live_paypal_is_served(
    sandbox: SandboxProcess, outcomes: dict[str, Outcome]
) -> None:
    """The toolkit refuses insights in sandbox mode; its handler's own request, sent past that
    refusal, is what a merchant on live PayPal sends, and the sandbox answers it with the sales
    the other tools made (``outcomes`` ran them)."""
    api = PayPalAPI(CLIENT_ID, CLIENT_SECRET, Context(sandbox=True))
    client = api._paypal_client
    client.base_url = sandbox.base_url
    params = {
        "start_date": _date(days=-30),
        "end_date": _date(days=0),
        "insight_type": "SALES",
        "time_interval": "WEEKLY",
    }
    answer = json.loads(get_merchant_insights(client, params))
    assert answer["insight_type"] == "SALES" and answer["time_interval"] == "WEEKLY"
    assert answer["totals"], "the harness's captures and payments are sales"
    assert len(answer["intervals"]) == 5


def test_succeeded_not_yet_and_refused_partition_every_tool_run(
    outcomes: dict[str, Outcome],
) -> None:
    succeeded = {name for name, outcome in outcomes.items() if outcome.ok}
    groups = [succeeded, set(NOT_YET), REFUSED_IN_SANDBOX, set(REFUSED_BY_PAYPALS_SPEC)]
    assert set().union(*groups) == set(outcomes)
    assert sum(map(len, groups)) == len(outcomes), "a tool is in two groups"
