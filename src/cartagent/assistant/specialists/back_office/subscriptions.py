"""The back office's subscription intents on embedded defaults: subscribe a customer, show one.

"subscribe jamie@example.com to plan P-5ML4271244454362WXNWU5NQ", "sign up Jamie Doe
<jamie@example.com> for the Coffee club plan": :func:`read_subscribe_request` finds the
subscriber (one e-mail address, and a capitalised name written just before it) and the plan
(an id; else a name in quotes or after "to"/"for"/"in"). The subscriber is checked by
``create_subscription``'s own arguments model, so the bounds are the tool's. :func:`subscribe`
looks a named plan up among the merchant's plans, creates the subscription and answers with
its id, its status and the approve link the subscriber must open. Nothing is created on a
guess: a missing address, or a plan name that is unknown, shared by several plans or not
active, comes back as a question. :func:`show_subscription` answers "show subscription I-...".

The back office's wording of a failed tool call, :func:`failure`, lives here so that both
modules share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ....tools.subscriptions import CreateSubscriptionArgs
from ...domains import Domain
from ...reply import Reply
from .invoice_request import Unclear

if TYPE_CHECKING:
    from ....tools import ToolResult
    from ...specialist import TurnContext

__all__ = [
    "MAX_PLAN_PAGES",
    "SUBSCRIBE",
    "SubscribeRequest",
    "failure",
    "read_subscribe_request",
    "show_subscription",
    "subscribe",
]

MAX_PLAN_PAGES = 5
"""A plan named in words is looked for among the first 100 plans (5 pages of 20)."""
_PLANS_PER_PAGE = 20  # the list tool's largest page

SUBSCRIBE = re.compile(
    r"\b(?:subscribe|sign\s+up|enrol{1,2})\b(?=.*?(?:@|\bP-\w|\bplan\b|\bmembership\b))"
    r"|\bsign\s+\S+@\S+\s+up\b",
    re.IGNORECASE | re.DOTALL,
)
"""A request to subscribe someone: the verb, then an address or a plan somewhere after it."""

_VERB = re.compile(r"\b(?:subscribe|sign\s+up|enrol{1,2})\s+", re.IGNORECASE)
_EMAIL = re.compile(r"[^\s<>()\[\]{},;:\"]+@[^\s<>()\[\]{},;:\"]+")
_WHO = re.compile(r"(?P<who>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,2})\s*[(<\[,]?\s*$")
_PLAN_ID = re.compile(r"\bP-[A-Z0-9]{4,48}\b", re.IGNORECASE)
_SUBSCRIPTION_ID = re.compile(r"\bI-[A-Z0-9]{6,40}\b", re.IGNORECASE)
_QUOTED = re.compile(
    r"(?<!\w)[\"'\u2018\u201c](?P<name>[^\"\u2018\u2019\u201c\u201d]{1,127}?)"
    r"[\"'\u2019\u201d](?!\w)"
)
_NAMED = re.compile(
    r"\b(?:to|for|in|into|on|onto)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?:plan\s+(?:called\s+|named\s+)?)?(?P<name>[^,.;:!?()<>\"]{1,127}?)"
    r"(?:\s+(?:plan|membership|subscription))?(?:,?\s+please)?\s*(?:[,.;:!?]|$)",
    re.IGNORECASE,
)
_NOT_A_NAME = {"plan", "a plan", "membership", "subscription", "it", "this", "that", "one"}


def failure(result: ToolResult) -> str:
    """A tool error in a sentence: PayPal's or the tool's message and the issues it names."""
    content = result.content
    text = str(content.get("message") or content.get("error") or "unknown error")
    issues = [str(i.get("description") or i.get("issue")) for i in content.get("issues") or []]
    return "; ".join([text, *issues])[:500]


@dataclass(frozen=True)
class SubscribeRequest:
    """A readable request: the subscriber's validated arguments, and a plan id or a name."""

    subscriber: dict[str, str]
    """``subscriber_email``, and ``subscriber_given_name``/``subscriber_surname`` when given."""
    plan_id: str | None = None
    plan_name: str | None = None

    @property
    def email(self) -> str:
        return self.subscriber["subscriber_email"]

    def arguments(self, plan_id: str) -> dict[str, Any]:
        """The ``create_subscription`` arguments for this subscriber on ``plan_id``."""
        return {"plan_id": plan_id, **self.subscriber}


def read_subscribe_request(text: str) -> SubscribeRequest | Unclear:
    """Who ``text`` subscribes and to which plan, or what to ask the merchant."""
    emails = list(_EMAIL.finditer(text))
    if not emails:
        return Unclear("subscriber_email", "Which e-mail address should I subscribe to the plan?")
    if len({m.group().strip(".!?'").casefold() for m in emails}) > 1:
        return Unclear("subscriber_email", "I subscribe one address at a time: which one?")
    found = emails[0]
    email = found.group().strip(".!?'")
    subscriber = {"subscriber_email": email}
    before, start = text[: found.start()], found.start()
    verbs = list(_VERB.finditer(before))
    # Capitalised words between the verb and the address are the subscriber's name.
    who = _WHO.match(before, verbs[-1].end()) if verbs else None
    if who is not None and all(word[0].isupper() for word in who["who"].split()):
        given, *surname = who["who"].split()
        subscriber["subscriber_given_name"] = given
        if surname:
            subscriber["subscriber_surname"] = " ".join(surname)
        start = who.start()
    rest = " ".join(f"{text[:start]} {text[found.end() :]}".split())
    said_id = _PLAN_ID.search(rest)
    plan_id = said_id.group().upper() if said_id else None
    try:  # the tool's own bounds, before anything is looked up or created
        CreateSubscriptionArgs.model_validate({"plan_id": plan_id or "P-TO-BE-FOUND", **subscriber})
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        field = str(problem["loc"][0]) if problem["loc"] else "request"
        if field == "subscriber_email":
            said = f"{email[:100]} is not an e-mail address I can subscribe"
            return Unclear(field, f"{said}: which one should I use?")
        return Unclear(field, f"I can't subscribe that: {field}: {problem['msg']}.")
    if plan_id is not None:
        return SubscribeRequest(subscriber, plan_id=plan_id)
    named = _QUOTED.search(rest) or _NAMED.search(rest)
    name = " ".join(named["name"].split()) if named else ""
    if not name or name.casefold() in _NOT_A_NAME:
        return Unclear(
            "plan",
            f"Which plan should {email} join? Give its name or id ('my plans' lists them).",
        )
    return SubscribeRequest(subscriber, plan_name=name)


def _reply(text: str, **data: Any) -> Reply:
    return Reply(text, Domain.BACK_OFFICE, data=data)


def _fold(name: Any) -> str:
    return " ".join(str(name or "").split()).casefold()


async def _plan_named(turn: TurnContext, name: str) -> dict[str, Any] | str:
    """The one active plan called ``name`` (case and spacing aside), or what to ask instead."""
    plans: list[dict[str, Any]] = []
    page, pages = 1, 1
    while page <= min(pages, MAX_PLAN_PAGES):
        found = await turn.call(
            "list_subscription_plans", {"page": page, "page_size": _PLANS_PER_PAGE}
        )
        if found.is_error:
            return f"I could not look the plan up: {failure(found)}."
        plans.extend(found.content.get("plans") or [])
        pages = int(found.content.get("total_pages") or 1)
        page += 1
    wanted = _fold(name)
    same = [p for p in plans if _fold(p.get("name")) == wanted]
    if len(same) > 1:
        ids = ", ".join(f"{p.get('id')} ({p.get('status')})" for p in same)
        return f"{len(same)} plans are called '{name}': {ids}. Which one? Give me its id."
    if same:
        plan = same[0]
        if plan.get("status") != "ACTIVE":
            return (
                f"The plan '{plan.get('name')}' ({plan.get('id')}) is {plan.get('status')}: "
                "it takes subscribers once it is active. Which plan should I use instead?"
            )
        return plan
    near = [p for p in plans if wanted in _fold(p.get("name"))]
    looked = f" (I looked at the first {len(plans)} plans.)" if pages > MAX_PLAN_PAGES else ""
    if not plans:
        return f"There is no plan called '{name}', nor any other plan yet."
    listed = ", ".join(f"'{p.get('name')}' ({p.get('id')})" for p in (near or plans)[:5])
    return (
        f"There is no plan called '{name}'.{looked} "
        f"{'Did you mean' if near else 'Your plans are'}: {listed}? "
        "Which one should I use? Give its name or id."
    )


async def subscribe(turn: TurnContext) -> Reply:
    """Create the subscription ``turn`` asks for; answer with its id, status and approve link."""
    read = read_subscribe_request(turn.text)
    if isinstance(read, Unclear):
        return _reply(read.question)
    if read.plan_id is not None:
        plan_id, label = read.plan_id, read.plan_id
    else:
        plan = await _plan_named(turn, read.plan_name or "")
        if isinstance(plan, str):
            return _reply(plan)
        plan_id, label = str(plan.get("id")), f"'{plan.get('name')}' ({plan.get('id')})"
    made = await turn.call("create_subscription", read.arguments(plan_id))
    if made.is_error:
        return _reply(f"I could not subscribe {read.email} to plan {label}: {failure(made)}.")
    sub = made.content
    text = f"Subscription {sub.get('id')} for {read.email} to plan {label} is {sub.get('status')}."
    link = sub.get("approve_url")
    if link:
        text += f" It starts when {read.email} approves it on this page: {link}"
    return _reply(text, subscription_id=sub.get("id"), plan_id=plan_id, approve_url=link)


async def show_subscription(turn: TurnContext) -> Reply:
    """A subscription's status, plan, subscriber and billing; the approve link while pending."""
    found = _SUBSCRIPTION_ID.search(turn.text)
    if found is None:
        return _reply(
            "I can't list a plan's subscriptions (PayPal has no call for that), but I can "
            "show one: give me its id, like I-BW452GLLEP1G."
        )
    sub_id = found.group().upper()
    shown = await turn.call("show_subscription_details", {"subscription_id": sub_id})
    if shown.is_error:
        return _reply(f"I could not read subscription {sub_id}: {failure(shown)}.")
    s = shown.content
    parts = [f"Subscription {sub_id}: {s.get('status')}, plan {s.get('plan_id')}"]
    for key, label in (
        ("subscriber_email", "subscriber"),
        ("next_billing_time", "next billing"),
        ("last_payment", "last payment"),
        ("outstanding_balance", "outstanding"),
    ):
        if s.get(key):
            parts.append(f"{label} {s[key]}")
    text = ", ".join(parts) + "."
    if s.get("status") == "APPROVAL_PENDING" and s.get("approve_url"):
        text += f" It is waiting for the subscriber to approve it: {s['approve_url']}"
    return _reply(text, subscription_id=sub_id, status=s.get("status"))
