"""What PayPal does for an invoice on its own: automatic reminders and conditional rules.

Reminders are set up once per merchant (one BEFORE_DUE and one AFTER_DUE configuration, for
every invoice with a due date) and switched off per invoice. Conditional rules belong to one
invoice: an early payment discount lowers what is due if paid by a date; an automatic
cancellation cancels it if still unpaid on a date.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from ..errors import ToolError
from ..paypal import api_path
from ._models import Amount, Args, PayPalId, Percent, id_field
from ._tool import ToolContext, tool
from .invoice_args import InvoiceIdArgs

ReminderId = Annotated[
    PayPalId,
    id_field(
        "The reminder configuration id from setup_invoice_auto_reminders, e.g. "
        "RC-239531651S471944P.",
        min_length=20,
        max_length=20,
    ),
]
Days = Annotated[int, Field(ge=1, le=7, description="Days before or after the due date, 1-7.")]
ISSUE_DAYS = {3: "THREE", 7: "SEVEN", 15: "FIFTEEN", 30: "THIRTY"}
DUE_DAYS = {1: "ONE_DAY", 7: "SEVEN_DAYS", 15: "FIFTEEN_DAYS", 30: "THIRTY_DAYS"}


class SetupRemindersArgs(Args):
    before_due_days: Days | None = Field(
        default=None, description="Remind once this many days before the due date."
    )
    after_due_days: Days | None = Field(
        default=None, description="Remind every this many days after the due date."
    )
    after_due_repetitions: int = Field(
        default=1, ge=1, le=5, description="How many reminders after the due date."
    )
    copy_to_me: bool = Field(default=False, description="Send the merchant a copy of each.")


class UpdateReminderArgs(Args):
    reminder_configuration_id: ReminderId
    type: Literal["BEFORE_DUE", "AFTER_DUE"] = Field(description="Which configuration this is.")
    days: Days
    repetitions: int = Field(
        default=1, ge=1, le=5, description="Reminders to send (always 1 before the due date)."
    )
    active: bool | None = Field(default=None, description="Switch it on or off; as is if left out.")
    copy_to_me: bool = Field(default=False, description="Send the merchant a copy of each.")


class ConditionalRulesArgs(InvoiceIdArgs):
    discount_percent: Percent | None = Field(
        default=None, gt=0, description="Early payment discount, % of the total."
    )
    discount_amount: Amount | None = Field(
        default=None, gt=0, description="Early payment discount as an amount (instead of %)."
    )
    discount_days: Literal[3, 7, 15, 30] | None = Field(
        default=None, description="The discount holds this many days after the invoice date."
    )
    discount_until: date | None = Field(
        default=None, description="...or until this date, YYYY-MM-DD."
    )
    cancel_days_after_due: Literal[1, 7, 15, 30] | None = Field(
        default=None, description="Cancel the invoice if unpaid this many days after it is due."
    )
    cancel_on: date | None = Field(
        default=None, description="...or cancel it if unpaid on this date, YYYY-MM-DD."
    )

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        pairs = (
            ("discount_percent", "discount_amount"),
            ("discount_days", "discount_until"),
            ("cancel_days_after_due", "cancel_on"),
        )
        for first, second in pairs:
            if getattr(self, first) is not None and getattr(self, second) is not None:
                raise ValueError(f"give either {first} or {second}, not both")
        discount = self.discount_percent is not None or self.discount_amount is not None
        until = self.discount_days is not None or self.discount_until is not None
        if discount != until:
            raise ValueError("a discount needs its size and how long it holds")
        if not discount and self.cancel_days_after_due is None and self.cancel_on is None:
            raise ValueError("give a discount, a cancellation, or both")
        return self


def _configuration(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": config.get("id"),
        "type": config.get("type"),
        "active": config.get("status") == "ACTIVE",
        "days": (config.get("interval") or {}).get("value"),
        "repetitions": config.get("repetition"),
    }


@tool(family="invoices", action="setup_reminders")
async def setup_invoice_auto_reminders(
    ctx: ToolContext, args: SetupRemindersArgs
) -> dict[str, Any]:
    """Set up automatic reminders for every unpaid invoice with a due date (once per account).

    A type left out is created switched off with PayPal's defaults; change either later with
    update_invoice_auto_reminder. Returns both configurations with their ids.
    """
    notification = {"send_to_invoicer": args.copy_to_me}
    configurations = []
    if args.before_due_days is not None:
        configurations.append(
            {
                "type": "BEFORE_DUE",
                "interval": {"unit": "DAY", "value": args.before_due_days},
                "repetition": 1,
                "notification": notification,
            }
        )
    if args.after_due_days is not None:
        configurations.append(
            {
                "type": "AFTER_DUE",
                "interval": {"unit": "DAY", "value": args.after_due_days},
                "repetition": args.after_due_repetitions,
                "notification": notification,
            }
        )
    body = {"configurations": configurations} if configurations else {}
    answer = await ctx.client.post("/v2/invoicing/setup-reminders", body)
    return {"configurations": [_configuration(c) for c in answer.get("configurations") or []]}


@tool(family="invoices", action="update_reminder", idempotent=True)
async def update_invoice_auto_reminder(
    ctx: ToolContext, args: UpdateReminderArgs
) -> dict[str, Any]:
    """Change an automatic reminder configuration: its days, repetitions, or on/off."""
    if args.type == "BEFORE_DUE" and args.repetitions != 1:
        raise ToolError("a BEFORE_DUE reminder is sent once", field="repetitions")
    body: dict[str, Any] = {
        "type": args.type,
        "interval": {"unit": "DAY", "value": args.days},
        "repetition": args.repetitions,
        "notification": {"send_to_invoicer": args.copy_to_me},
    }
    if args.active is not None:
        body["status"] = "ACTIVE" if args.active else "INACTIVE"
    path = api_path("/v2/invoicing/reminders/{}", args.reminder_configuration_id)
    headers = {"Prefer": "return=representation"}
    answer = await ctx.client.request("PUT", path, json=body, headers=headers)
    if not isinstance(answer, dict) or not answer:  # answered minimally: show what was sent
        answer = {**body, "id": args.reminder_configuration_id}
    return _configuration(answer)


@tool(family="invoices", action="cancel_reminders", idempotent=True)
async def cancel_invoice_auto_reminder(ctx: ToolContext, args: InvoiceIdArgs) -> dict[str, Any]:
    """Stop the automatic reminders of one invoice (others keep theirs)."""
    path = api_path("/v2/invoicing/invoices/{}/cancel-reminders", args.invoice_id)
    await ctx.client.post(path)
    return {"invoice_id": args.invoice_id, "reminders": "cancelled"}


@tool(family="invoices", action="create_conditional_rules", idempotent=True)
async def create_conditional_rules_for_invoice(
    ctx: ToolContext, args: ConditionalRulesArgs
) -> dict[str, Any]:
    """Give an unpaid invoice an early payment discount, an automatic cancellation, or both.

    Each replaces the invoice's earlier rule of its kind. Returns the rules with their dates and
    the amount due now.
    """
    rules: list[dict[str, Any]] = []
    if args.discount_percent is not None or args.discount_amount is not None:
        percent = args.discount_percent is not None
        value = args.discount_percent if percent else args.discount_amount
        rule: dict[str, Any] = {
            "conditional_rule_type": "EARLY_PAYMENT_DISCOUNT",
            "conditional_rule_value_type": "PERCENT" if percent else "AMOUNT",
            "conditional_rule_value": str(value),
        }
        if args.discount_until is not None:
            terms = {
                "rule_expiry_condition": "SPECIFIC_DATE",
                "condition_rule_end_date": args.discount_until.isoformat(),
            }
        else:
            days = ISSUE_DAYS[args.discount_days or 7]
            terms = {"rule_expiry_condition": f"{days}_DAYS_AFTER_ISSUE_DATE"}
        rules.append({**rule, "rule_expiry_terms": terms})
    if args.cancel_on is not None:
        terms = {
            "rule_expiry_condition": "SPECIFIC_DATE",
            "condition_rule_end_date": args.cancel_on.isoformat(),
        }
        rules.append({"conditional_rule_type": "AUTO_CANCEL", "rule_expiry_terms": terms})
    elif args.cancel_days_after_due is not None:
        condition = f"{DUE_DAYS[args.cancel_days_after_due]}_AFTER_DUE_DATE"
        terms = {"rule_expiry_condition": condition}
        rules.append({"conditional_rule_type": "AUTO_CANCEL", "rule_expiry_terms": terms})
    path = api_path("/v2/invoicing/invoices/{}/conditional-rules", args.invoice_id)
    answer = await ctx.client.post(path, {"rules": rules})
    invoice = await ctx.client.get(api_path("/v2/invoicing/invoices/{}", args.invoice_id))
    return {
        "invoice_id": args.invoice_id,
        "rules": [
            {
                "type": rule.get("conditional_rule_type"),
                "value": rule.get("conditional_rule_value"),
                "value_type": rule.get("conditional_rule_value_type"),
                "date": (rule.get("rule_expiry_terms") or {}).get("condition_rule_end_date"),
            }
            for rule in answer.get("rules") or []
        ],
        "total": (invoice.get("amount") or {}).get("value"),
        "due_amount": (invoice.get("due_amount") or {}).get("value"),
    }


TOOLS = (
    setup_invoice_auto_reminders,
    update_invoice_auto_reminder,
    cancel_invoice_auto_reminder,
    create_conditional_rules_for_invoice,
)
