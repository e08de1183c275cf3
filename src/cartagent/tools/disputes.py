"""Disputes: list, show, provide evidence, and accept a claim (which refunds the buyer)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import Field, ValidationInfo, field_validator

from ..money import Money
from ..paypal import api_path
from ._models import Args, PayPalId, id_field
from ._tool import ToolContext, tool

BASE = "/v1/customer/disputes"
State = Literal[
    "REQUIRED_ACTION",
    "REQUIRED_OTHER_PARTY_ACTION",
    "UNDER_PAYPAL_REVIEW",
    "RESOLVED",
    "OPEN_INQUIRIES",
    "APPEALABLE",
]


def _amount(dispute: dict[str, Any]) -> dict[str, Any]:
    amount = dispute.get("dispute_amount") or {}
    return {"amount": amount.get("value"), "currency": amount.get("currency_code")}


def _brief(dispute: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "dispute_id",
        "reason",
        "status",
        "dispute_state",
        "dispute_life_cycle_stage",
        "seller_response_due_date",
        "create_time",
    )
    return {**{k: dispute[k] for k in keys if k in dispute}, **_amount(dispute)}


def _details(dispute: dict[str, Any]) -> dict[str, Any]:
    summary = _brief(dispute)
    transactions = dispute.get("disputed_transactions") or []
    summary["transaction_ids"] = [
        t["seller_transaction_id"] for t in transactions if "seller_transaction_id" in t
    ]
    summary["allowed_actions"] = [
        link["rel"] for link in dispute.get("links", []) if link.get("method") == "POST"
    ]
    messages = dispute.get("messages") or []
    if messages:
        summary["messages"] = [
            {"by": m.get("posted_by"), "text": m.get("content")} for m in messages[-5:]
        ]
    evidences = dispute.get("evidences") or []
    if evidences:
        summary["evidence_types"] = [e.get("evidence_type") for e in evidences]
    outcome = dispute.get("dispute_outcome")
    if outcome:
        summary["outcome"] = outcome.get("outcome_code")
        summary["amount_refunded"] = (outcome.get("amount_refunded") or {}).get("value")
    return summary


class ListDisputesArgs(Args):
    dispute_state: State | None = Field(default=None, description="Only disputes in this state.")
    disputed_transaction_id: PayPalId | None = id_field(
        "Only disputes of this capture id.", max_length=255, default=None
    )
    start_time: datetime | None = Field(
        default=None, description="Only disputes opened since (ISO 8601, within 180 days)."
    )
    page_size: int = Field(default=10, ge=1, le=50, description="Disputes per page.")
    next_page_token: str | None = Field(
        default=None, description="From a previous call's next_page_token.", max_length=500
    )

    @field_validator("start_time")
    @classmethod
    def _one_filter(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if value is not None and info.data.get("disputed_transaction_id"):
            raise ValueError("give start_time or disputed_transaction_id, not both")
        return value


@tool(family="disputes", action="list", read_only=True, idempotent=True)
async def list_disputes(ctx: ToolContext, args: ListDisputesArgs) -> dict[str, Any]:
    """List disputes, newest first, optionally by state, transaction or start time."""
    params: dict[str, Any] = {"page_size": args.page_size}
    if args.dispute_state:
        params["dispute_state"] = args.dispute_state
    if args.disputed_transaction_id:
        params["disputed_transaction_id"] = args.disputed_transaction_id
    if args.start_time:
        params["start_time"] = args.start_time.isoformat().replace("+00:00", "Z")
    if args.next_page_token:
        params["next_page_token"] = args.next_page_token
    found = await ctx.client.get(BASE, params=params)
    result: dict[str, Any] = {"disputes": [_brief(d) for d in found.get("items", [])]}
    for link in found.get("links", []):
        if link.get("rel") == "next":
            token = parse_qs(urlsplit(link["href"]).query).get("next_page_token")
            if token:
                result["next_page_token"] = token[0]
    return result


class DisputeIdArgs(Args):
    dispute_id: PayPalId = id_field("The dispute id, e.g. PP-D-27803.", max_length=255)


def _dispute(args: DisputeIdArgs) -> str:
    """The dispute's path: what the spend check prices is what the call settles."""
    return api_path(BASE + "/{}", args.dispute_id)


@tool(family="disputes", action="get", read_only=True, idempotent=True)
async def get_dispute(ctx: ToolContext, args: DisputeIdArgs) -> dict[str, Any]:
    """Show a dispute: reason, status, amount, deadlines, messages and the allowed actions."""
    return _details(await ctx.client.get(_dispute(args)))


class AcceptClaimArgs(DisputeIdArgs):
    note: str = Field(
        description="A note to the buyer and PayPal about accepting.", min_length=1, max_length=2000
    )
    accept_claim_reason: (
        Literal["DID_NOT_SHIP_ITEM", "TOO_TIME_CONSUMING", "LOST_IN_MAIL", "NOT_ABLE_TO_WIN"] | None
    ) = Field(default=None, description="Why the claim is accepted.")


async def _disputed_amount(ctx: ToolContext, args: AcceptClaimArgs) -> Money | None:
    dispute = await ctx.client.get(_dispute(args))
    amount = dispute.get("dispute_amount")
    return Money.from_paypal(amount) if amount else None


@tool(
    family="disputes",
    action="accept_claim",
    destructive=True,
    moves_money=True,
    spend=_disputed_amount,
)
async def accept_dispute_claim(ctx: ToolContext, args: AcceptClaimArgs) -> dict[str, Any]:
    """Accept a dispute's claim: concedes it and refunds the disputed amount to the buyer."""
    body: dict[str, Any] = {"note": args.note}
    if args.accept_claim_reason:
        body["accept_claim_reason"] = args.accept_claim_reason
    await ctx.client.post(f"{_dispute(args)}/accept-claim", body)
    return _details(await ctx.client.get(_dispute(args)))


class EvidenceArgs(DisputeIdArgs):
    evidence_type: str = Field(
        default="OTHER",
        description="PayPal evidence type, e.g. PROOF_OF_FULFILLMENT, PROOF_OF_REFUND, OTHER.",
        min_length=1,
        max_length=255,
        pattern=r"^[0-9A-Z_]+$",
    )
    notes: str | None = Field(
        default=None, description="The evidence, as text.", min_length=1, max_length=2000
    )


@tool(family="disputes", action="provide_evidence")
async def provide_dispute_evidence(ctx: ToolContext, args: EvidenceArgs) -> dict[str, Any]:
    """Give PayPal text evidence for a dispute waiting on the seller; it goes under review."""
    evidence: dict[str, Any] = {"evidence_type": args.evidence_type}
    if args.notes:
        evidence["notes"] = args.notes
    await ctx.client.post(f"{_dispute(args)}/provide-evidence", {"evidences": [evidence]})
    return _details(await ctx.client.get(_dispute(args)))


TOOLS = (list_disputes, get_dispute, provide_dispute_evidence, accept_dispute_claim)
