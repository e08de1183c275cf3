"""The merchant's back office: invoices, plans, disputes and sales, for the merchant only.

With a capable model the turn is the model's: :func:`~cartagent.assistant.runner.run_turn`
restricted to this specialist's tools. On embedded defaults a small table of patterns picks
one intent, and each answer is rendered from tool results:

* "invoice for painting a house, $450, 8% tax, 5% discount, due in 10 days": create the draft
  (:mod:`..invoice_request` reads it) and send it; the answer has the payer's link;
* "unpaid invoices", "show invoice #0001", "send invoice INV2-...";
* "send it to jane@example.com" (the invoice made last in this conversation, or one named by
  id or number): the recipient is changed and the invoice sent, or reminded when already sent;
* "open disputes", "show dispute PP-D-12345", "accept the claim on dispute PP-D-12345";
* "create a monthly plan 'Coffee club' at $15", "a monthly plan for coffee beans at $20" (a
  catalog product, then the plan), "my plans";
* "subscribe jamie@example.com to plan P-...", "sign up jamie@example.com for the Coffee club
  plan", "show subscription I-..." (:mod:`..back_office_subscriptions`);
* "sales this week", "transactions in the last 30 days": count and totals per currency;
  "top selling products this month": units and money per product
  (:mod:`..back_office_sales`);
* "refund order 5O190127TN364715T", "refund $10 of the last order because it arrived late",
  "show order 5O190127TN364715T", "recent orders" (:mod:`..back_office_payments`); "ship the
  last order with UPS 1Z999AA10123456784", "order 5O190127TN364715T was delivered"
  (:mod:`..back_office_shipping`).

In both modes a money-moving or destructive call (accepting a claim, refunding a payment,
deleting or cancelling an invoice, cancelling a subscription) runs only after the merchant
answers "yes" to a question naming what it does: the toolkit refuses it otherwise, and the
refused call becomes that question (``conversation.pending``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from ....errors import ModelError, StepLimitExceeded
from ....llm import Message
from ....money import CURRENCY_DECIMALS, Money
from ....tools import ALL_TOOLS
from ....tools.plans import CreatePlanArgs
from ...confirmation import read_answer
from ...consent import Grant, granting
from ...conversation import PendingConfirmation
from ...domains import Domain
from ...policy_fallback import is_question
from ...reply import Reply
from ...runner import run_turn
from ...specialist import TurnContext, load_prompt
from .invoice_request import (
    DRAFT_ONLY,
    EMAIL,
    SEND_IT,
    InvoiceDraft,
    money_mentions,
    read_invoice_request,
)
from .payments import (
    RECENT,
    REFUND,
    SHOW_LAST,
    SHOW_ORDER,
    Transactions,
    describe_payments,
    find_payment,
    read_refund,
    recent_payments,
    refund_limit,
    search_transactions,
    show_order,
)
from .sales import ORDER_COUNT, SHOWN, TOP_SELLERS, count_orders, top_sellers
from .shipping import SHIPMENT, ship
from .subscriptions import SUBSCRIBE, show_subscription, subscribe
from .subscriptions import failure as _message

if TYPE_CHECKING:
    from ....llm import Model
    from ....tools import Toolkit

__all__ = ["BACK_OFFICE_TOOLS", "BackOfficeSpecialist"]

_FAMILIES = (
    "invoices",
    "products",
    "plans",
    "subscriptions",
    "disputes",
    "refunds",
    "transactions",
    "tracking",
)
BACK_OFFICE_TOOLS: tuple[str, ...] = tuple(
    t.name for t in ALL_TOOLS if t.family in _FAMILIES or t.name == "get_order"
)
"""The registry's invoice, product, plan, subscription, dispute, refund, transaction and
tracking tools, and reading an order."""

MERCHANT_ONLY = (
    "Back-office work (invoices, plans, disputes, sales) is for this store's merchant. "
    "Please sign in as the merchant to do it."
)
NOT_CONFIGURED = (
    "Payments are not configured in this assistant, so the back office is not available."
)
HELP = (
    "In the back office I can:\n"
    "- create and send an invoice ('invoice jamie@example.com for logo design, $900, net 30')\n"
    "- list invoices ('unpaid invoices'), show one ('show invoice #0001'), send one to someone "
    "('send it to jamie@example.com')\n"
    "- list open disputes, show one, accept a claim ('accept the claim on dispute PP-D-12345')\n"
    "- create a subscription plan ('create a monthly plan \"Coffee club\" at $15'), list plans\n"
    "- subscribe a customer ('subscribe jamie@example.com to the Coffee club plan'), show a "
    "subscription ('show subscription I-BW452GLLEP1G')\n"
    "- sum up sales ('sales this week', 'transactions in the last 30 days'), count orders "
    "('how many orders this week?'), rank products ('best sellers this month')\n"
    "- list the newest payments ('recent orders'), show an order ('show order <id>'), refund one "
    "('refund $10 of the last order because it arrived late'), add its tracking ('ship the "
    "last order with UPS 1Z999AA10123456784', 'order <id> was delivered')"
)
ACCEPT_NOTE = "The merchant accepted the claim."
CONFIRM_KIND = "confirm_tool"
MAX_HISTORY_CHARS = 2000
WINDOW_DAYS = 31  # PayPal's transaction search spans at most 31 days

# The calls that need a "yes": the argument naming what they act on, and what they do.
_CONFIRM: dict[str, tuple[str, str]] = {
    "accept_dispute_claim": (
        "dispute_id",
        "accept the claim on dispute {value}: {amount} goes back to the buyer and the dispute "
        "closes",
    ),
    "create_refund": ("capture_id", "refund {amount} of payment {value} to the buyer"),
    "delete_invoice": ("invoice_id", "delete invoice {value} for good"),
    "cancel_sent_invoice": (
        "invoice_id",
        "cancel invoice {value}: its recipient can no longer pay it",
    ),
    "cancel_subscription": ("subscription_id", "cancel subscription {value} for good"),
    "cancel_recurring_series": (
        "recurring_series_id",
        "cancel recurring invoice series {value}: it issues no more invoices",
    ),
    "delete_recurring_series": (
        "recurring_series_id",
        "delete recurring invoice series {value} for good",
    ),
}

_DISPUTE_ID = re.compile(r"\bPP-[A-Z0-9][A-Z0-9-]{2,60}\b", re.IGNORECASE)
_INVOICE_ID = re.compile(r"\bINV2-[A-Z0-9][A-Z0-9-]{3,35}\b", re.IGNORECASE)
_INVOICE_NUMBER = re.compile(
    r"\binvoice\s*(?:#\s*|no\.?\s*|number\s+)(?P<n>[A-Za-z0-9-]{1,25})\b"
    r"|\b(?:show|open|get|find|look\s+up|status\s+of|details\s+of)\s+(?:me\s+)?(?:the\s+)?"
    r"invoice\s+(?P<m>\d{1,25})\b",
    re.IGNORECASE,
)
_UNPAID = re.compile(r"\b(?:unpaid|outstanding|open|due|overdue|owed|not\s+paid)\b", re.I)
_OVERDUE = re.compile(r"\b(?:overdue|late|past\s+due)\b", re.IGNORECASE)
_UNPAID_STATUSES = ["SENT", "UNPAID", "PARTIALLY_PAID", "PAYMENT_PENDING"]
_QUOTED = re.compile(
    r"[\"'\u2018\u2019\u201c\u201d](?P<name>[^\"\u2018\u2019\u201c\u201d]{1,127}?)"
    r"[\"'\u2018\u2019\u201c\u201d](?!\w)"
)
_CALLED = re.compile(
    r"\b(?:called|named)\s+(?P<name>[^,.;:]{1,127}?)"
    r"(?=\s+(?:at|for|with|costing|priced|billed|every|per)\b|\s*[,.;:]|\s*$)",
    re.IGNORECASE,
)
# "a monthly plan for coffee beans at $20": what the plan is for names it.
_PLAN_FOR = re.compile(
    r"\b(?:plan|membership)\s+for\s+(?P<name>[^,.;:]{1,127}?)"
    r"(?=\s+(?:at|for|with|costing|priced|billed|every|per)\b|\s*[,.;:]|\s*$)",
    re.IGNORECASE,
)
_INTERVALS: tuple[tuple[re.Pattern[str], str, int], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), unit, count)
    for pattern, unit, count in (
        (r"\bdaily\b|\b(?:per|a|every)\s+day\b|/\s?day\b", "DAY", 1),
        (r"\bweekly\b|\b(?:per|a|every)\s+week\b|/\s?(?:week|wk)\b", "WEEK", 1),
        (r"\bquarterly\b|\bevery\s+quarter\b", "MONTH", 3),
        (r"\bmonthly\b|\b(?:per|a|every)\s+month\b|/\s?(?:month|mo)\b", "MONTH", 1),
        (r"\b(?:yearly|annual(?:ly)?)\b|\b(?:per|a|every)\s+year\b|/\s?(?:year|yr)\b", "YEAR", 1),
    )
)
_EVERY = re.compile(r"\bevery\s+(?P<n>\d{1,3})\s+(?P<unit>day|week|month|year)s?\b", re.I)
_LAST_DAYS = re.compile(
    r"\b(?:last|past|previous)\s+(?P<n>\d{1,4})\s+(?P<unit>days?|weeks?)\b", re.IGNORECASE
)


def _plan_for(text: str) -> re.Match[str] | None:
    """The "plan for <what>" naming a plan, unless <what> is its price or period."""
    found = _PLAN_FOR.search(text)
    if found is None or not re.search(r"[^\W\d_]", found["name"]):
        return None
    if money_mentions(found["name"]) or _interval(found["name"]) is not None:
        return None
    return found


def _count(number: int, plural: str) -> str:
    """``"1 unpaid invoice"``, ``"3 unpaid invoices"``: ``plural`` ends in a plain -s."""
    return f"{number} {plural if number != 1 else plural.removesuffix('s')}"


def _amount(value: Any, currency: Any) -> str:
    return f"{value} {currency}" if currency else str(value)


def _confirm_question(tool: str, arguments: dict[str, Any], amount: str | None) -> str:
    value = arguments.get(_CONFIRM[tool][0])
    action = _CONFIRM[tool][1].format(value=value, amount=amount)
    # What the call would also tell the buyer or keep on record is part of what is confirmed.
    said = [f'{k} "{str(arguments[k])[:200]}"' for k in ("note", "reason") if arguments.get(k)]
    with_text = f", with the {' and '.join(said)}" if said else ""
    return f"Shall I {action}{with_text}? Answer yes to go ahead, or no to leave it as it is."


Handler = Callable[["BackOfficeSpecialist", TurnContext, re.Match[str]], Awaitable[Reply]]


class BackOfficeSpecialist:
    """Serves the store's merchant: invoices, plans, disputes and sales."""

    name = "back_office"
    domain = Domain.BACK_OFFICE
    tools: tuple[str, ...] = BACK_OFFICE_TOOLS
    prompt: str | None = "back_office.md"

    def __init__(
        self,
        *,
        today: Callable[[], date] = date.today,
        max_steps: int = 8,
        history: int = 12,
    ) -> None:
        if max_steps < 1 or history < 0:
            raise ValueError("max_steps must be at least 1 and history at least 0")
        self.today = today
        self.max_steps = max_steps
        self.history = history
        self._instructions: str | None = None

    async def handle(self, turn: TurnContext) -> Reply:
        if not turn.merchant:
            return Reply(MERCHANT_ONLY, self.domain)
        if turn.toolkit is None:
            return Reply(NOT_CONFIGURED, self.domain)
        pending = turn.conversation.pending
        if pending is not None and pending.domain is self.domain:
            answer = read_answer(turn.text)
            if answer == "yes":
                return await self._confirmed(turn, pending)
            turn.conversation.pending = None  # a "no", or a new request: the question lapses
            if answer == "no":
                return Reply("OK, I left it as it is: nothing was done.", self.domain)
        if turn.model is not None:
            return await self._with_model(turn, turn.model, turn.toolkit)
        for pattern, handler in _INTENTS:
            match = pattern.search(turn.text)
            if match is not None:
                return await handler(self, turn, match)
        return Reply(HELP, self.domain)

    # ------------------------------------------------------------------ confirmations

    async def _ask_to_confirm(
        self,
        turn: TurnContext,
        tool: str,
        arguments: dict[str, Any],
        *,
        limit: Money | None = None,
        described: str | None = None,
    ) -> str:
        """Keep ``tool(arguments)`` waiting for a yes and return the question; or say why not.

        ``limit`` bounds the money the call may move once confirmed (``described`` says it in
        words); a refund without one is bounded by its payment, looked up here."""
        key = _CONFIRM[tool][0]
        value = str(arguments.get(key, ""))
        data: dict[str, Any] = {"tool": tool, "arguments": arguments}
        amount = described
        if tool == "create_refund" and limit is None:
            bound = await refund_limit(turn, arguments)
            if isinstance(bound, str):
                return f"{bound} Nothing was refunded."
            limit = bound
        if limit is not None:
            data["amount"], data["currency"] = str(limit.amount), limit.currency
            amount = amount or str(limit)
        if tool == "accept_dispute_claim":
            shown = await turn.call("get_dispute", {"dispute_id": value})
            if shown.is_error:
                return f"I could not read dispute {value}: {_message(shown)}."
            dispute = shown.content
            if "accept_claim" not in (dispute.get("allowed_actions") or []):
                return f"Dispute {value} cannot be accepted now (it is {dispute.get('status')})."
            try:
                limit = Money.of(str(dispute.get("amount")), str(dispute.get("currency")))
            except ValueError:
                return f"Dispute {value} shows no amount I can read, so I did not accept it."
            data["amount"], data["currency"] = str(limit.amount), limit.currency
            amount = str(limit)
        turn.conversation.pending = PendingConfirmation(CONFIRM_KIND, data, domain=self.domain)
        return _confirm_question(tool, arguments, amount)

    async def _confirmed(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        turn.conversation.pending = None
        tool, arguments = pending.data.get("tool"), pending.data.get("arguments")
        if pending.kind != CONFIRM_KIND or tool not in _CONFIRM or not isinstance(arguments, dict):
            return Reply("I lost track of what to confirm, so nothing was done.", self.domain)
        key = _CONFIRM[tool][0]
        limit = None
        if pending.data.get("amount") is not None:
            try:
                limit = Money.of(str(pending.data["amount"]), str(pending.data.get("currency")))
            except ValueError:
                return Reply("I lost track of the amount, so nothing was done.", self.domain)
        with granting(Grant(tool, key, str(arguments.get(key)), limit)):
            result = await turn.call(tool, arguments)
        if result.is_error:
            return Reply(f"That did not go through: {_message(result)}.", self.domain)
        return Reply(_done(tool, arguments.get(key), result.content), self.domain)

    # ------------------------------------------------------------------ capable model

    async def _with_model(self, turn: TurnContext, model: Model, toolkit: Toolkit) -> Reply:
        if self._instructions is None:
            self._instructions = load_prompt("back_office.md")
        recent = turn.conversation.messages[-self.history :] if self.history else []
        earlier = [Message(m.role, m.text[:MAX_HISTORY_CHARS]) for m in recent]
        messages = [Message("system", self._instructions), *earlier, Message("user", turn.text)]
        try:
            added = await run_turn(
                model, toolkit, messages, max_steps=self.max_steps, tools=self.tools
            )
        except StepLimitExceeded as stopped:
            called = sorted({c.name for m in stopped.messages for c in m.tool_calls})
            done = f" It had called: {', '.join(called)}." if called else ""
            return Reply(
                "I could not finish that within the steps allowed, so I stopped." + done,
                self.domain,
            )
        except ModelError:
            return Reply(
                "The language model did not answer, so nothing more was done. Please try again.",
                self.domain,
            )
        text = added[-1].content or ""
        refused = _refused_call(added)
        if refused is not None:
            question = await self._ask_to_confirm(turn, *refused)
            text = f"{text}\n\n{question}".strip()
        return Reply(text or "Done.", self.domain)

    # ------------------------------------------------------------------ invoices

    async def _create_invoice(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        read = read_invoice_request(turn.text)
        if not isinstance(read, InvoiceDraft):
            return Reply(read.question, self.domain)
        draft = await turn.call("create_invoice", read.arguments())
        if draft.is_error:
            return Reply(f"I could not create the invoice: {_message(draft)}.", self.domain)
        created = draft.content
        if DRAFT_ONLY.search(turn.text):
            return Reply(
                f"Draft invoice #{created.get('number')} is ready and not sent: "
                f"{_amount(created.get('total'), created.get('currency'))}{_breakdown(created)}"
                + "".join(_due_and_recipient(created))
                + '. Look it over in the preview, then say "send it" to send it.',
                self.domain,
                data={"invoice_id": created["id"], "invoice_draft": True},
            )
        # Sending neither moves money nor destroys anything: it makes the invoice payable.
        sent = await turn.call("send_invoice", {"invoice_id": created["id"]})
        if sent.is_error:
            return Reply(
                f"I created the draft invoice #{created.get('number')} ({created['id']}, "
                f"{_amount(created.get('total'), created.get('currency'))}) but could not send "
                f"it: {_message(sent)}.",
                self.domain,
            )
        shown = sent.content
        parts = [
            f"Invoice #{shown.get('number')} is sent: "
            f"{_amount(shown.get('total'), created.get('currency'))}{_breakdown(created)}"
        ]
        parts += _due_and_recipient(created)
        parts.append(".")
        if shown.get("payer_view_url"):
            parts.append(f" Pay here: {shown['payer_view_url']}")
        return Reply("".join(parts), self.domain, data={"invoice_id": created["id"]})

    async def _send_invoice(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        return await self._send(match["id"].upper(), turn)

    async def _send_meant(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        """ "send it" after a draft: the invoice the turn names, else the conversation's last."""
        invoice_id = await self._invoice_meant(turn)
        if invoice_id is None:
            return Reply(
                "Which invoice? Name it by number or id, e.g. 'send invoice #0001'.", self.domain
            )
        return await self._send(invoice_id, turn)

    async def _send(self, invoice_id: str, turn: TurnContext) -> Reply:
        sent = await turn.call("send_invoice", {"invoice_id": invoice_id})
        if sent.is_error:
            return Reply(f"I could not send {invoice_id}: {_message(sent)}.", self.domain)
        link = sent.content.get("payer_view_url")
        return Reply(
            f"Invoice #{sent.content.get('number')} is {sent.content.get('status')}, "
            f"total {sent.content.get('total')}." + (f" Pay here: {link}" if link else ""),
            self.domain,
            data={"invoice_id": invoice_id},
        )

    async def _send_to(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        if money_mentions(turn.text):  # "send an invoice to jo@example.com for design, $900"
            return await self._create_invoice(turn, match)
        email = match["email"]
        invoice_id = await self._invoice_meant(turn)
        if invoice_id is None:
            return Reply(
                f"Which invoice? Name it by number or id, e.g. 'send invoice #0001 to {email}'.",
                self.domain,
            )
        found = await turn.call("get_invoice", {"invoice_id": invoice_id})
        if found.is_error:
            return Reply(f"I could not read invoice {invoice_id}: {_message(found)}.", self.domain)
        status = str(found.content.get("status"))
        number = found.content.get("number")
        if status not in ("DRAFT", *_UNPAID_STATUSES):
            return Reply(f"Invoice #{number} is {status}: there is nothing to send.", self.domain)
        changed = await turn.call(
            "update_invoice", {"invoice_id": invoice_id, "recipient_email": email}
        )
        if changed.is_error:
            return Reply(
                f"I could not address #{number} to {email}: {_message(changed)}.", self.domain
            )
        # A sent invoice is already payable: a reminder is what brings it to the new address.
        if status == "DRAFT":
            sent = await turn.call("send_invoice", {"invoice_id": invoice_id})
        else:
            sent = await turn.call("send_invoice_reminder", {"invoice_id": invoice_id})
        if sent.is_error:
            return Reply(
                f"Invoice #{number} is now addressed to {email}, but I could not send it: "
                f"{_message(sent)}.",
                self.domain,
            )
        total = _amount(found.content.get("total"), found.content.get("currency"))
        return Reply(
            f"Invoice #{number} ({total}) is sent to {email}.",
            self.domain,
            data={"invoice_id": invoice_id},
        )

    async def _invoice_meant(self, turn: TurnContext) -> str | None:
        """The invoice named in the turn by id or number, else the one this conversation made
        or showed last."""
        if (by_id := _INVOICE_ID.search(turn.text)) is not None:
            return by_id.group().upper()
        if (by_number := _INVOICE_NUMBER.search(turn.text)) is not None:
            number = by_number["n"] or by_number["m"]
            found = await turn.call("search_invoices", {"invoice_number": number, "page_size": 1})
            invoices = [] if found.is_error else found.content.get("invoices") or []
            return str(invoices[0]["id"]) if invoices else None
        for message in reversed(turn.conversation.messages):
            if message.role == "assistant" and message.payload.get("invoice_id"):
                return str(message.payload["invoice_id"])
        return None

    async def _show_numbered_invoice(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        number = match["n"] or match["m"]
        found = await turn.call("search_invoices", {"invoice_number": number, "page_size": 1})
        if found.is_error:
            return Reply(f"I could not search the invoices: {_message(found)}.", self.domain)
        invoices = found.content.get("invoices") or []
        if not invoices:
            return Reply(f"There is no invoice #{number}.", self.domain)
        return await self._show_invoice(turn, str(invoices[0]["id"]))

    async def _show_invoice_by_id(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        return await self._show_invoice(turn, match.group().upper())

    async def _show_invoice(self, turn: TurnContext, invoice_id: str) -> Reply:
        shown = await turn.call("get_invoice", {"invoice_id": invoice_id})
        if shown.is_error:
            return Reply(f"I could not read invoice {invoice_id}: {_message(shown)}.", self.domain)
        return Reply(_invoice_detail(shown.content), self.domain, data={"invoice_id": invoice_id})

    async def _list_invoices(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        if _UNPAID.search(turn.text):
            criteria: dict[str, Any] = {"status": _UNPAID_STATUSES, "page_size": 20}
            what = "unpaid invoices"
            if _OVERDUE.search(turn.text):
                criteria["due_date_to"] = (self.today() - timedelta(days=1)).isoformat()
                what = "overdue invoices"
            found = await turn.call("search_invoices", criteria)
        else:
            what = "invoices"
            found = await turn.call("list_invoices", {"page_size": 20})
        if found.is_error:
            return Reply(f"I could not list the invoices: {_message(found)}.", self.domain)
        invoices = found.content.get("invoices") or []
        if not invoices:
            return Reply(f"There are no {what}.", self.domain)
        total = found.content.get("total_items") or len(invoices)
        lines = [f"{_count(total, what)}{' (the latest 20)' if total > len(invoices) else ''}:"]
        lines.extend(_invoice_line(invoice) for invoice in invoices)
        return Reply("\n".join(lines), self.domain)

    # ------------------------------------------------------------------ disputes

    async def _accept_claim(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        found = _DISPUTE_ID.search(turn.text)
        if found is None:
            return Reply(
                "Which dispute? Give me its id, like PP-D-12345 ('open disputes' lists them).",
                self.domain,
            )
        arguments = {"dispute_id": found.group().upper(), "note": ACCEPT_NOTE}
        return Reply(
            await self._ask_to_confirm(turn, "accept_dispute_claim", arguments), self.domain
        )

    async def _show_dispute(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        dispute_id = match.group().upper()
        shown = await turn.call("get_dispute", {"dispute_id": dispute_id})
        if shown.is_error:
            return Reply(f"I could not read dispute {dispute_id}: {_message(shown)}.", self.domain)
        d = shown.content
        amount = _amount(d.get("amount"), d.get("currency"))
        lines = [f"Dispute {dispute_id}: {d.get('reason')}, {amount}, {d.get('status')}."]
        if d.get("seller_response_due_date"):
            lines.append(f"Respond by {d['seller_response_due_date']}.")
        if d.get("transaction_ids"):
            lines.append(f"Transactions: {', '.join(map(str, d['transaction_ids']))}.")
        said = [m for m in d.get("messages") or [] if m.get("text")]
        if said:
            lines.append(f"Last message ({said[-1].get('by')}): {str(said[-1]['text'])[:300]}")
        if d.get("outcome"):
            lines.append(f"Outcome: {d['outcome']}, refunded {d.get('amount_refunded')}.")
        if d.get("allowed_actions"):
            lines.append(f"You can: {', '.join(map(str, d['allowed_actions']))}.")
        return Reply("\n".join(lines), self.domain)

    async def _list_disputes(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        found = await turn.call("list_disputes", {"page_size": 50})
        if found.is_error:
            return Reply(f"I could not list the disputes: {_message(found)}.", self.domain)
        disputes = found.content.get("disputes") or []
        wanted = "disputes"
        if re.search(r"\b(?:open|active|unresolved|pending)\b", turn.text, re.I):
            disputes = [d for d in disputes if d.get("status") != "RESOLVED"]
            wanted = "open disputes"
        if not disputes:
            return Reply(f"There are no {wanted}.", self.domain)
        lines = [f"{_count(len(disputes), wanted)}:"]
        for d in disputes:
            due = d.get("seller_response_due_date")
            lines.append(
                f"- {d.get('dispute_id')}: {d.get('reason')}, "
                f"{_amount(d.get('amount'), d.get('currency'))}, {d.get('status')}"
                + (f", respond by {due}" if due else "")
            )
        return Reply("\n".join(lines), self.domain)

    # ------------------------------------------------------------------ plans

    async def _create_plan(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        text = turn.text
        named = _QUOTED.search(text) or _CALLED.search(text)
        described = _plan_for(text) if named is None else None
        named = named or described
        if named is None:
            return Reply(
                "What should the plan be called? Put the name in quotes, e.g. "
                "create a monthly plan 'Coffee club' at $15.",
                self.domain,
            )
        name = " ".join(named["name"].split())
        if described is not None:  # "for coffee beans" names the plan "Coffee beans"
            name = name[:1].upper() + name[1:]
        rest = text[: named.start()] + " " + text[named.end() :]
        interval = _interval(rest)
        if interval is None:
            return Reply(
                f"How often should '{name}' bill: monthly, weekly, yearly, every 3 months?",
                self.domain,
            )
        prices = money_mentions(rest)
        if len(prices) != 1:
            return Reply(
                f"What is the price of '{name}' per period? Give one amount, e.g. $15.",
                self.domain,
            )
        currency = prices[0].currency or "USD"
        try:
            price = Money.of(prices[0].amount, currency)
        except ValueError:
            return Reply(f"{currency} is not a currency I can bill in.", self.domain)
        if price.amount != prices[0].amount:
            return Reply(f"{prices[0].amount:f} has more decimals than {currency}.", self.domain)
        unit, count = interval
        terms = {
            "name": name,
            "interval_unit": unit,
            "interval_count": count,
            "price": str(price.amount),
            "currency": currency,
        }
        try:  # checked before the product is made, so a bad plan leaves nothing behind
            CreatePlanArgs.model_validate({"product_id": "PROD-TO-BE-MADE", **terms})
        except ValidationError as error:
            reason = str(error.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
            return Reply(f"I can't create that plan: {reason}.", self.domain)
        product = await turn.call(
            "create_product", {"name": name, "type": "SERVICE", "description": f"{name} plan"[:256]}
        )
        if product.is_error:
            return Reply(f"I could not create the product: {_message(product)}.", self.domain)
        plan = await turn.call(
            "create_subscription_plan", {"product_id": product.content["id"], **terms}
        )
        if plan.is_error:
            return Reply(
                f"I created the product {product.content['id']} but not the plan: "
                f"{_message(plan)}.",
                self.domain,
            )
        every = f"{count} {unit.lower()}s" if count > 1 else unit.lower()
        return Reply(
            f"Created the plan '{plan.content.get('name')}' ({plan.content['id']}, "
            f"{plan.content.get('status')}): {price} every {every}, "
            f"for product {product.content['id']}.",
            self.domain,
            data={"plan_id": plan.content["id"]},
        )

    async def _list_plans(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        found = await turn.call("list_subscription_plans", {"page_size": 20})
        if found.is_error:
            return Reply(f"I could not list the plans: {_message(found)}.", self.domain)
        plans = found.content.get("plans") or []
        if not plans:
            return Reply("There are no subscription plans yet.", self.domain)
        lines = [f"{_count(found.content.get('total_items') or len(plans), 'plans')}:"]
        lines.extend(f"- {p.get('name')} ({p.get('id')}): {p.get('status')}" for p in plans)
        return Reply("\n".join(lines), self.domain)

    # ------------------------------------------------------------------ subscriptions

    async def _subscribe(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        return await subscribe(turn)

    async def _subscriptions(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        return await show_subscription(turn)

    # ------------------------------------------------------------------ orders and refunds

    async def _refund(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        payment = await find_payment(turn)
        if isinstance(payment, str):
            return Reply(payment, self.domain)
        if payment.status == "REFUNDED":
            return Reply(f"{payment.label_start} is already refunded in full.", self.domain)
        request = read_refund(turn.text, payment)
        if isinstance(request, str):
            return Reply(request, self.domain)
        question = await self._ask_to_confirm(
            turn,
            "create_refund",
            request.arguments(),
            limit=request.limit,
            described=request.described,
        )
        return Reply(question, self.domain, data={"capture_id": payment.capture_id})

    async def _ship(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        if is_question(turn.text):  # "has the last order shipped?" asks; it does not say so
            meant = await find_payment(turn, verb="show")
            if isinstance(meant, str):
                return await self._recent(turn, match)
            return await show_order(turn, meant.order_id or meant.capture_id)
        return await ship(turn)

    async def _show_last(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        meant = await find_payment(turn, verb="show")
        if isinstance(meant, str):
            return Reply(meant, self.domain)
        return await show_order(turn, meant.order_id or meant.capture_id)

    async def _show_order(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        return await show_order(turn, match.group().split()[-1].lstrip("#").upper())

    async def _recent(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        rows = await recent_payments(turn)
        if isinstance(rows, str):
            return Reply(rows, self.domain)
        return Reply(describe_payments(rows), self.domain)

    # ------------------------------------------------------------------ transactions

    async def _count_orders(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        window = _window(turn.text, self.today())
        if isinstance(window, str):
            return Reply(window, self.domain)
        return await count_orders(turn, *window)

    async def _top_sellers(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        window = _window(turn.text, self.today())
        if isinstance(window, str):
            return Reply(window, self.domain)
        return await top_sellers(turn, *window, shown=int(match["n"] or SHOWN))

    async def _sales(self, turn: TurnContext, match: re.Match[str]) -> Reply:
        window = _window(turn.text, self.today())
        if isinstance(window, str):
            return Reply(window, self.domain)
        start, end = window
        found = await search_transactions(
            turn, {"start_date": start.isoformat(), "end_date": end.isoformat()}
        )
        if not isinstance(found, Transactions):
            return Reply(f"I could not read the transactions: {_message(found)}.", self.domain)
        rows = found.rows
        span = f"{start.isoformat()} to {end.isoformat()}"
        if not rows:
            return Reply(f"No transactions from {span}.", self.domain)
        lines = [f"{len(rows)} transaction{'s' if len(rows) != 1 else ''} from {span}:"]
        for currency, (received, paid) in sorted(_totals(rows).items()):
            places = Decimal(1).scaleb(-CURRENCY_DECIMALS.get(currency, 2))
            got, out, net = (v.quantize(places) for v in (received, paid, received - paid))
            lines.append(f"- {currency}: {got} received, {out} refunded or paid out, net {net}")
        if not found.complete:
            lines.append(f"(only the first {len(rows)} transactions are counted)")
        return Reply("\n".join(lines), self.domain)


def _done(tool: str, value: Any, content: dict[str, Any]) -> str:
    if tool == "accept_dispute_claim":
        refunded = content.get("amount_refunded") or content.get("amount")
        return (
            f"Accepted the claim on dispute {value}: {_amount(refunded, content.get('currency'))} "
            f"refunded to the buyer; the dispute is {content.get('status')}."
        )
    if tool == "create_refund":
        return (
            f"Refunded {_amount(content.get('amount'), content.get('currency'))} of payment "
            f"{value} to the buyer (refund {content.get('id')}, {content.get('status')})."
        )
    verb = {
        "delete_invoice": "Deleted invoice",
        "cancel_sent_invoice": "Cancelled invoice",
        "cancel_subscription": "Cancelled subscription",
    }[tool]
    status = content.get("status")
    return f"{verb} {value}" + (f" (now {status})." if status else ".")


def _refused_call(added: list[Message]) -> tuple[str, dict[str, Any]] | None:
    """The first call in ``added`` that the approval gate refused and a yes would allow."""
    answers = {m.tool_call_id: m.content for m in added if m.role == "tool"}
    for message in added:
        for call in message.tool_calls:
            if call.name not in _CONFIRM:
                continue
            try:
                content = orjson.loads(answers.get(call.id) or "{}")
            except orjson.JSONDecodeError:
                continue
            if content.get("error") == "approval" and content.get("kind") in (
                "ApprovalRequired",
                "ApprovalDenied",
            ):
                return call.name, dict(call.arguments)
    return None


def _breakdown(invoice: dict[str, Any]) -> str:
    shown = invoice.get("breakdown") or {}
    parts = [
        f"{label} {shown[key]}"
        for key, label in (
            ("item_total", "items"),
            ("discount", "discount"),
            ("tax_total", "tax"),
            ("shipping", "shipping"),
        )
        if shown.get(key) not in (None, "0", "0.00")
    ]
    return f" ({', '.join(parts)})" if len(parts) > 1 else ""


def _due_and_recipient(invoice: dict[str, Any]) -> list[str]:
    parts = []
    if invoice.get("due_date"):
        parts.append(f", due {invoice['due_date']}")
    if invoice.get("recipient"):
        parts.append(f", to {invoice['recipient']}")
    return parts


def _invoice_line(invoice: dict[str, Any]) -> str:
    line = (
        f"- #{invoice.get('number')} ({invoice.get('id')}): {invoice.get('status')}, "
        f"{_amount(invoice.get('total'), invoice.get('currency'))}"
    )
    if invoice.get("due_date"):
        line += f", due {invoice['due_date']}"
    if invoice.get("recipient"):
        line += f", to {invoice['recipient']}"
    return line


def _invoice_detail(invoice: dict[str, Any]) -> str:
    lines = [_invoice_line(invoice).removeprefix("- ").replace("#", "Invoice #", 1) + "."]
    for item in invoice.get("items") or []:
        tax = f", tax {item['tax_percent']}%" if item.get("tax_percent") else ""
        lines.append(
            f"- {item.get('name')}: {item.get('quantity')} x {item.get('unit_price')}{tax}"
        )
    if invoice.get("due_amount") is not None:
        lines.append(f"Still due: {invoice['due_amount']}.")
    if invoice.get("payer_view_url"):
        lines.append(f"Pay here: {invoice['payer_view_url']}")
    return "\n".join(lines)


def _interval(text: str) -> tuple[str, int] | None:
    every = _EVERY.search(text)
    if every is not None:
        return every["unit"].upper(), int(every["n"])
    return next(((unit, n) for pattern, unit, n in _INTERVALS if pattern.search(text)), None)


def _window(text: str, today: date) -> tuple[date, date] | str:
    """The days ``text`` asks about (default: the last 30), or why they cannot be searched."""
    said = text.casefold()
    if "yesterday" in said:
        day = today - timedelta(days=1)
        return day, day
    if "today" in said:
        return today, today
    if re.search(r"\blast\s+week\b", said):
        monday = today - timedelta(days=today.weekday() + 7)
        return monday, monday + timedelta(days=6)
    if re.search(r"\bthis\s+week\b", said):
        return today - timedelta(days=today.weekday()), today
    if re.search(r"\blast\s+month\b", said):
        last = today.replace(day=1) - timedelta(days=1)
        return last.replace(day=1), last
    if re.search(r"\bthis\s+month\b", said):
        return today.replace(day=1), today
    recent = _LAST_DAYS.search(said)
    if recent is not None:
        days = int(recent["n"]) * (7 if recent["unit"].startswith("week") else 1)
        if not 1 <= days <= WINDOW_DAYS:
            return f"I can sum up at most {WINDOW_DAYS} days at a time: ask for fewer days."
        return today - timedelta(days=days - 1), today
    if re.search(r"\b(?:this|last)\s+(?:year|quarter)\b", said):
        return f"I can sum up at most {WINDOW_DAYS} days at a time: ask for a month or less."
    return today - timedelta(days=29), today


def _totals(rows: list[dict[str, Any]]) -> dict[str, tuple[Decimal, Decimal]]:
    """Per currency: what came in and what went out (refunds, reversals), exactly."""
    sums: dict[str, tuple[Decimal, Decimal]] = {}
    for row in rows:
        try:
            amount = Decimal(str(row.get("amount")))
        except InvalidOperation:
            continue
        currency = str(row.get("currency") or "?")
        received, paid = sums.get(currency, (Decimal(0), Decimal(0)))
        if amount >= 0:
            received += amount
        else:
            paid -= amount
        sums[currency] = (received, paid)
    return sums


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# The embedded intents, tried in order: the first pattern found in the text answers.
_INTENTS: tuple[tuple[re.Pattern[str], Handler], ...] = (
    # First: an address in the request ("claims@...", "invoices@...") must not pick another intent.
    (SUBSCRIBE, BackOfficeSpecialist._subscribe),
    (
        _compile(r"\baccept(?:ing)?\b.*\b(?:claim|dispute)\b|\b(?:claim|dispute)\b.*\baccept\b"),
        BackOfficeSpecialist._accept_claim,
    ),
    (_DISPUTE_ID, BackOfficeSpecialist._show_dispute),
    (_compile(r"\b(?:disputes?|chargebacks?|claims)\b"), BackOfficeSpecialist._list_disputes),
    (REFUND, BackOfficeSpecialist._refund),
    (SHIPMENT, BackOfficeSpecialist._ship),
    (SHOW_ORDER, BackOfficeSpecialist._show_order),
    (SHOW_LAST, BackOfficeSpecialist._show_last),
    (ORDER_COUNT, BackOfficeSpecialist._count_orders),
    (RECENT, BackOfficeSpecialist._recent),
    (
        _compile(rf"\b(?:send|email|mail|forward)\b.*?\bto\s+(?P<email>{EMAIL.pattern})"),
        BackOfficeSpecialist._send_to,
    ),
    (
        _compile(rf"\bsend\b.*?(?P<id>{_INVOICE_ID.pattern})"),
        BackOfficeSpecialist._send_invoice,
    ),
    (SEND_IT, BackOfficeSpecialist._send_meant),
    (_INVOICE_ID, BackOfficeSpecialist._show_invoice_by_id),
    (_INVOICE_NUMBER, BackOfficeSpecialist._show_numbered_invoice),
    (
        _compile(r"\binvoices\b|\b(?:list|show)\s+(?:me\s+)?(?:my\s+|all\s+|the\s+)?invoice\b"),
        BackOfficeSpecialist._list_invoices,
    ),
    (
        # "plan" within a few words of the verb: "create an invoice for a business plan" bills.
        _compile(
            r"\b(?:create|make|add|set\s+up|start|new|launch)\b"
            r"(?:\s+(?!(?:invoice|bill)\b)[\w'-]+){0,4}?\s+(?:plan|membership)\b"
        ),
        BackOfficeSpecialist._create_plan,
    ),
    (
        _compile(r"\b(?:invoice|bill)\b|^\s*(?:please\s+)?charge\b|\bpayment\s+link\b"),
        BackOfficeSpecialist._create_invoice,
    ),
    (
        _compile(r"\bsubscriptions?\b(?!\s+plans?\b)|\bsubscribers?\b"),
        BackOfficeSpecialist._subscriptions,
    ),
    (_compile(r"\bplans?\b"), BackOfficeSpecialist._list_plans),
    (TOP_SELLERS, BackOfficeSpecialist._top_sellers),
    (
        _compile(
            r"\b(?:sales|sold|sell|transactions?|revenue|earnings|income|takings|turnover|"
            r"refund(?:s|ed)?)\b"
        ),
        BackOfficeSpecialist._sales,
    ),
)
