"""The invoice journey: a natural-language request, tool calls a good model would make, the
sandbox as the oracle.

"Create a PayPal invoice link for painting a house with a cost of $450. Add 8% tax and apply
5% discount. Make sure it expires in 10 days." must end as a SENT invoice of 461.70 (450 less
5 % is 427.50, plus 8 % tax on that, 34.20), due ten days from today, with the link to pay it
in the answer.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import orjson
import pytest

from cartagent.assistant import run_turn
from cartagent.llm import Message, ToolCall
from cartagent.paypal import AsyncPayPalClient
from cartagent.testing import ScriptedModel
from cartagent.tools import ALL_TOOLS, Toolkit, ToolkitConfig, deny_all

REQUEST = (
    "Create a PayPal invoice link for painting a house with a cost of $450. Add 8% tax and "
    "apply 5% discount. Make sure it expires in 10 days."
)
CUSTOMER = "The customer is Jamie Rivera, jamie.rivera@example.com."
TODAY = date(2026, 11, 21)  # the sandbox's pinned calendar day
# The registry, or, until it lists them, the two families the journey needs.

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a whole journey (tests/e2e/)


def result_of(messages: list[Message], call_id: str) -> dict[str, Any]:
    """The content of the tool message answering ``call_id``."""
    answer = next(m for m in messages if m.role == "tool" and m.tool_call_id == call_id)
    content: dict[str, Any] = orjson.loads(answer.content or "")
    assert "error" not in content, content
    return content


def send_the_draft(messages: list[Message]) -> Message:
    draft = result_of(messages, "call_create")
    return Message(
        "assistant",
        None,
        tool_calls=(ToolCall("call_send", "send_invoice", {"invoice_id": draft["id"]}),),
    )


def answer_with_the_link(messages: list[Message]) -> Message:
    draft = result_of(messages, "call_create")
    sent = result_of(messages, "call_send")
    return Message(
        "assistant",
        f"Done: invoice {sent['number']} for ${sent['total']} (after the 5% discount and 8% "
        f"tax) is due on {draft['due_date']}. Pay here: {sent['payer_view_url']}",
    )


def create_the_invoice() -> Message:
    arguments = {
        "recipient_email": "jamie.rivera@example.com",
        "recipient_name": "Jamie Rivera",
        "items": [{"name": "Painting a house", "unit_price": 450, "tax_percent": 8}],
        "discount_percent": 5,
        "due_in_days": 10,
    }
    return Message(
        "assistant", None, tool_calls=(ToolCall("call_create", "create_invoice", arguments),)
    )


async def test_the_request_ends_in_a_sent_invoice_with_tax_discount_due_date_and_link(
    paypal_client: AsyncPayPalClient,
) -> None:
    toolkit = Toolkit(
        paypal_client,
        ALL_TOOLS,
        config=ToolkitConfig.everything([(t.family, t.action) for t in ALL_TOOLS]),
        approve=deny_all,  # nothing in this journey moves money or destroys anything
        today=lambda: TODAY,
    )
    model = ScriptedModel([create_the_invoice(), send_the_draft, answer_with_the_link])
    conversation = [Message("system", CUSTOMER), Message("user", REQUEST)]

    added = await run_turn(model, toolkit, conversation)

    assert model.remaining == 0
    assert [m.role for m in added] == ["assistant", "tool", "assistant", "tool", "assistant"]
    invoice_id = result_of(added, "call_create")["id"]
    invoice = await paypal_client.get(f"/v2/invoicing/invoices/{invoice_id}")
    breakdown = invoice["amount"]["breakdown"]
    assert invoice["status"] == "SENT"
    assert (invoice["amount"]["currency_code"], invoice["amount"]["value"]) == ("USD", "461.70")
    assert breakdown["item_total"]["value"] == "450.00"
    assert breakdown["discount"]["invoice_discount"]["amount"]["value"] == "-22.50"
    assert breakdown["tax_total"]["value"] == "34.20"
    assert invoice["detail"]["payment_term"]["due_date"] == (TODAY + timedelta(days=10)).isoformat()
    assert invoice["primary_recipients"][0]["billing_info"]["email_address"] == (
        "jamie.rivera@example.com"
    )
    payer_link = invoice["detail"]["metadata"]["recipient_view_url"]
    assert invoice_id in payer_link
    final = added[-1].content or ""
    assert payer_link in final
    assert "461.70" in final
    assert "2026-12-01" in final
