"""Reading a merchant's invoice request without a model.

"Invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days" becomes
``create_invoice`` arguments: one item (name, quantity, unit price, tax and discount percent),
a due date ("in 10 days", "in 2 weeks", "net 30", "due 2026-12-15", "on receipt"), the
recipient's email when one is given, shipping, and the currency ($ € £ ¥, a code, "dollars";
USD when none is given).

Every piece found is cut out of the text before the next is looked for, so "due in 10 days"
is never read as ten units; what is left around the invoice word is the item's name. The
arguments are then checked by the tool's own model (:class:`CreateInvoiceArgs`), so the bounds
are the tool's. Anything missing or ambiguous (no price, two prices, a total that does not
split into the unit price) comes back as an :class:`Unclear` question: never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import ValidationError

from ....money import CURRENCY_DECIMALS
from ....tools.invoice_args import CreateInvoiceArgs

__all__ = [
    "DRAFT_ONLY",
    "EMAIL",
    "MAX_REQUEST_CHARS",
    "SEND_IT",
    "InvoiceDraft",
    "MoneyMention",
    "Unclear",
    "money_mentions",
    "read_invoice_request",
]

MAX_REQUEST_CHARS = 1000
"""Longer requests are not read: an invoice request is a sentence or two."""

# "draft an invoice ...", "... but don't send it yet": the invoice is made and left unsent.
DRAFT_ONLY = re.compile(
    r"\b(?:draft|preview)\b|\b(?:don'?t|do\s+not|without)\s+send(?:ing)?\b"
    r"|\bnot\s+send\b|\bbefore\s+(?:i|we|you)\s+send\b",
    re.IGNORECASE,
)
# "send it", "ok, send the draft", "looks good, please send that" (after a draft was shown).
SEND_IT = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|yes|yep|great|good|perfect|fine|looks\s+(?:good|right|fine))\W+)*"
    r"(?:(?:please|now|go\s+ahead\s+and|you\s+can)\s+)*send\s+"
    r"(?:it|that|this|the\s+(?:draft|invoice|draft\s+invoice)|my\s+(?:draft|invoice))\b"
    r"(?!\s+to\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class InvoiceDraft:
    """A readable request: validated ``create_invoice`` arguments."""

    args: CreateInvoiceArgs

    def arguments(self) -> dict[str, Any]:
        """The arguments as JSON for ``create_invoice``."""
        return self.args.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class Unclear:
    """What is missing or ambiguous (``field``), and the question to ask the merchant."""

    field: str
    question: str


@dataclass(frozen=True)
class MoneyMention:
    """An amount written in a text, with its currency when one was written next to it."""

    amount: Decimal
    currency: str | None
    start: int
    end: int
    per_unit: bool = False


_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CODES = "|".join(sorted(CURRENCY_DECIMALS))
_SYMBOLS = {
    "us$": "USD", "$": "USD", "ca$": "CAD", "c$": "CAD", "au$": "AUD", "a$": "AUD",
    "nz$": "NZD", "hk$": "HKD", "s$": "SGD", "€": "EUR", "£": "GBP", "¥": "JPY",
}  # fmt: skip
_WORDS = {
    "dollar": "USD", "dollars": "USD", "bucks": "USD", "euro": "EUR", "euros": "EUR",
    "pound": "GBP", "pounds": "GBP", "yen": "JPY",
}  # fmt: skip
_SYMBOL = "|".join(re.escape(s) for s in sorted(_SYMBOLS, key=len, reverse=True))
_UNIT = (
    r"hours?|hrs?|days?|units?|items?|pieces?|sessions?|copies|copy|pages?|words?|nights?"
    r"|weeks?|months?|people|persons?|heads?|licen[cs]es?|seats?|visits?|lessons?|boxes|box"
)
# Codes that are also words ("rub", "cad", "nok") count in capitals only.
_WORDLIKE = {"CAD", "ILS", "NOK", "PHP", "RUB"}
_CODE = rf"(?-i:{_CODES})|{'|'.join(sorted(set(CURRENCY_DECIMALS) - _WORDLIKE)).lower()}"
_MONEY = re.compile(
    rf"(?:(?P<sym>{_SYMBOL})\s?(?P<n1>{_NUMBER})"
    rf"|\b(?P<code1>{_CODE})\s?(?P<n2>{_NUMBER})"
    rf"|(?<![\w.,])(?P<n3>{_NUMBER})\s?(?:(?P<sym2>{_SYMBOL})|(?P<code2>{_CODE}|"
    rf"{'|'.join(_WORDS)})\b)"
    rf"|(?P<cue>(?:\b(?:at|costs?|costing|cost\s+of|price[ds]?(?:\s+at|\s+of)?"
    rf"|total(?:\s+of)?|amount(?:\s+of)?)|@)\s*)"
    rf"(?P<n4>{_NUMBER})(?![\d.,]*\s*(?:%|percent|x\b|\u00d7|(?:{_UNIT})\b)))"
    rf"(?P<per>\s*(?:/\s?|per\s+|an?\s+)(?:{_UNIT}|hr|h|head|unit)\b|\s+each\b|\s+apiece\b)?",
    re.IGNORECASE,
)
_DUE = re.compile(
    r"\b(?:(?:(?:due|payable|expir(?:es|ing|e)|valid|payment|pay)\s+)?"
    r"(?:(?:with)?in|in\s+the\s+next)\s+(?P<n>\d+)\s*(?P<unit>days?|weeks?|d|w)\b"
    r"|(?:due|payable|expir(?:es|ing|e))\s+(?:on\s+|by\s+)?(?P<date>\d{4}-\d{2}-\d{2})\b"
    r"|net\s*(?P<net>\d+)(?:\s*days?)?\b"
    r"|due\s+(?:(?:on|upon)\s+receipt|immediately|today|now)\b)",
    re.IGNORECASE,
)
_TAX = re.compile(
    r"(?P<n1>\d+(?:\.\d+)?)\s*(?:%|percent)\s*(?P<name1>sales\s+tax|tax|vat|gst|hst)\b"
    r"|\b(?P<name2>sales\s+tax|tax|vat|gst|hst)\s+(?:(?:rate\s+)?(?:of|at)\s+|rate\s+)?"
    r"(?P<n2>\d+(?:\.\d+)?)\s*(?:%|percent)",
    re.IGNORECASE,
)
_DISCOUNT = re.compile(
    r"(?P<n1>\d+(?:\.\d+)?)\s*(?:%|percent)\s*(?:discount|off)\b"
    r"|\bdiscount\s+(?:of\s+)?(?P<n2>\d+(?:\.\d+)?)\s*(?:%|percent)",
    re.IGNORECASE,
)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+", re.IGNORECASE)
_QUANTITY = re.compile(
    rf"(?<![\w.,$€£¥])(?P<n>\d+(?:\.\d+)?)\s*(?:(?:x|\u00d7)(?=\s*[a-z])|(?P<unit>{_UNIT})\b(?:\s+of)?)",
    re.IGNORECASE,
)
_IN_CURRENCY = re.compile(rf"\bin\s+(?P<code>{_CODES})\b", re.IGNORECASE)
_KEYWORD = re.compile(
    r"\b(?:invoice|bill|charge)\b(?:\s+(?:link|request))?|\bpayment\s+link\b", re.IGNORECASE
)
_SPLIT = re.compile(
    r"\|+|[,;:!?()\[\]{}\n]|\.(?!\w)"
    r"|\s(?:with|at|costing|priced|cost|plus|including|incl|due|add|apply|make\s+sure|please"
    r"|and\s+(?:add|apply))\b",
    re.IGNORECASE,
)
_FOR = re.compile(r"\bfor\b", re.IGNORECASE)
_LEADING = {"for", "of", "a", "an", "the", "to", "some", "me", "us", "it", "and", "then"}
_TRAILING = {
    "for", "of", "at", "to", "and", "with", "a", "an", "the", "by", "on", "in", "from", "it",
    "that", "total", "each", "is", "was", "which", "worth", "please", "now",
}  # fmt: skip
_FILLER = {"add", "apply", "it", "this", "that", "total", "please", "thanks", "make", "sure"}

Context = Literal["price", "discount", "shipping"]


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def money_mentions(text: str) -> list[MoneyMention]:
    """The amounts in ``text`` in order: "$450", "1,200.00 USD", "900 dollars", "at 15.50
    each", "$120/hour" (a price per unit)."""
    found = []
    for match in _MONEY.finditer(text):
        groups = match.groupdict()
        number = groups["n1"] or groups["n2"] or groups["n3"] or groups["n4"]
        symbol = groups["sym"] or groups["sym2"]
        code = groups["code1"] or groups["code2"]
        currency = None
        if symbol:
            currency = _SYMBOLS[symbol.casefold()]
        elif code:
            currency = _WORDS.get(code.casefold(), code.upper())
        start = match.start("n4") if groups["n4"] else match.start()
        before = text[max(0, start - 8) : start]
        per_unit = bool(groups["per"]) or bool(re.search(r"\b(?:at|@)\s*$", before, re.I))
        if groups["cue"] and groups["cue"].strip().casefold() in ("at", "@"):
            per_unit = True
        try:
            amount = _decimal(number)
        except InvalidOperation:  # pragma: no cover - the pattern only admits numbers
            continue
        found.append(MoneyMention(amount, currency, start, match.end(), per_unit))
    return found


def _context(text: str, mention: MoneyMention) -> Context:
    before = text[max(0, mention.start - 24) : mention.start].casefold()
    after = text[mention.end : mention.end + 24].casefold()
    if re.search(r"\bdiscount\s+(?:of\s+)?$", before) or re.match(r"\s*(?:discount|off)\b", after):
        return "discount"
    if re.search(r"\bshipping\s+(?:of\s+|is\s+|costs?\s+)?$", before) or re.match(
        r"\s*(?:for\s+)?(?:shipping|delivery|postage)\b", after
    ):
        return "shipping"
    return "price"


class _Ask(Exception):
    """Stops reading: ``unclear`` is what to ask the merchant."""

    def __init__(self, field: str, question: str) -> None:
        super().__init__(question)
        self.unclear = Unclear(field, question)


class _Text:
    """The request with each piece read blanked out, keeping every other character's place."""

    def __init__(self, text: str) -> None:
        self.original = text
        self.rest = text

    def take(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """Every match of ``pattern`` in what is left, blanked out."""
        found = list(pattern.finditer(self.rest))
        for match in found:
            self.blank(*match.span())
        return found

    def blank(self, start: int, end: int) -> None:
        self.rest = self.rest[:start] + "|" * (end - start) + self.rest[end:]


def _one(found: list[str], field: str, what: str) -> str | None:
    distinct = list(dict.fromkeys(found))
    if len(distinct) > 1:
        raise _Ask(field, f"I read more than one {what} ({', '.join(distinct)}): which one?")
    return distinct[0] if distinct else None


def _due(text: _Text) -> dict[str, Any]:
    found: list[dict[str, Any]] = []
    for match in text.take(_DUE):
        if match["date"]:
            try:
                found.append({"due_date": date.fromisoformat(match["date"])})
            except ValueError:
                raise _Ask("due_date", f"{match['date']} is not a date: when is it due?") from None
        elif match["n"] or match["net"]:
            days = int(match["n"] or match["net"])
            weeks = (match["unit"] or "").casefold().startswith("w")
            found.append({"due_in_days": days * 7 if weeks else days})
        else:
            found.append({"due_in_days": 0})
    if len({str(f) for f in found}) > 1:
        raise _Ask("due", "I read more than one due date: when is it due?")
    return found[0] if found else {}


def _percent(
    text: _Text, pattern: re.Pattern[str], field: str, what: str
) -> tuple[str | None, str | None]:
    """The percentage ``pattern`` finds (one, or none) and the name written with it."""
    values, names = [], []
    for match in text.take(pattern):
        values.append(match["n1"] or match["n2"])
        named = match.groupdict()
        if named.get("name1") or named.get("name2"):
            names.append(named.get("name1") or named.get("name2"))
    value = _one([f"{v}%" for v in values], field, what)
    return (value.removesuffix("%") if value else None), (names[0] if names else None)


def _tax_name(name: str | None) -> str:
    if name is None:
        return "Sales Tax"
    word = " ".join(name.split()).casefold()
    return {"vat": "VAT", "gst": "GST", "hst": "HST", "tax": "Sales Tax"}.get(word, "Sales Tax")


def _segments(text: str) -> list[tuple[int, str]]:
    """``text`` cut at punctuation, blanked pieces and joining words, with where each starts."""
    parts, position = [], 0
    for cut in _SPLIT.finditer(text):
        parts.append((position, text[position : cut.start()]))
        position = cut.end()
    parts.append((position, text[position:]))
    return parts


def _name(text: _Text) -> str | None:
    """What is left after the invoice word ("... invoice for <name>"): the item's name."""
    keyword = _KEYWORD.search(text.original)
    anchor = keyword.start() if keyword else 0
    candidates: list[tuple[int, str]] = []
    for start, part in _segments(text.rest):
        named = _KEYWORD.search(part)
        if named:
            part = part[named.end() :]
            after_for = _FOR.search(part)
            part = part[after_for.end() :] if after_for else part
        words = part.split()
        while words and words[0].casefold() in _LEADING:
            words.pop(0)
        while words and words[-1].casefold() in _TRAILING:
            words.pop()
        if not any(w.casefold() not in _FILLER and any(c.isalpha() for c in w) for w in words):
            continue
        candidates.append((start, " ".join(words)))
    if not candidates:
        return None
    chosen = next((name for start, name in candidates if start >= anchor), candidates[0][1])
    return chosen[:1].upper() + chosen[1:]


def _problem(error: ValidationError) -> Unclear:
    first = error.errors(include_url=False)[0]
    where = [str(p) for p in first["loc"]]
    field = where[-1] if where else "request"
    labels = {
        "unit_price": "price",
        "quantity": "quantity",
        "tax_percent": "tax rate",
        "discount_percent": "discount",
        "discount_amount": "discount",
        "due_in_days": "due date",
        "due_date": "due date",
        "recipient_email": "email address",
        "name": "item name",
        "shipping": "shipping",
        "currency": "currency",
    }
    label = labels.get(field, field.replace("_", " "))
    reason = str(first["msg"]).removeprefix("Value error, ").replace("Input should", "it should")
    return Unclear(field, f"I can't use that {label} ({reason}). Could you correct it?")


def read_invoice_request(text: str) -> InvoiceDraft | Unclear:
    """The ``create_invoice`` arguments ``text`` asks for, or what to ask the merchant."""
    cleaned = " ".join(text.split())
    if len(cleaned) > MAX_REQUEST_CHARS:
        return Unclear(
            "request",
            f"That request is too long for me to read (at most {MAX_REQUEST_CHARS} "
            "characters): what should the invoice bill, and how much?",
        )
    try:
        arguments = _read(_Text(cleaned))
    except _Ask as ask:
        return ask.unclear
    try:
        return InvoiceDraft(CreateInvoiceArgs.model_validate(arguments))
    except ValidationError as error:
        return _problem(error)


def _read(work: _Text) -> dict[str, Any]:
    due = _due(work)
    tax, tax_name = _percent(work, _TAX, "tax_percent", "tax rate")
    discount, _ = _percent(work, _DISCOUNT, "discount_percent", "discount")
    email = _one([m.group() for m in work.take(EMAIL)], "recipient_email", "email address")
    prices, extra = _amounts(work)
    quantities = work.take(_QUANTITY)
    currency = _currency(work, [*prices, *extra.values()])
    name = _name(work)
    if not prices:
        about = f" for {name[:1].lower()}{name[1:]}" if name else ""
        raise _Ask("unit_price", f"How much should the invoice{about} be? For example: $450.")
    if len(prices) > 1:
        listed = ", ".join(f"{p.amount:f}" for p in prices)
        raise _Ask(
            "unit_price",
            f"I read more than one price ({listed}) and can bill one item per request: "
            "which is the price?",
        )
    if name is None:
        raise _Ask("name", "What is the invoice for? For example: painting a house, $450.")
    quantity = _decimal(_one([m["n"] for m in quantities], "quantity", "quantity") or "1")
    price = prices[0]
    for mention in (price, *extra.values()):
        if mention.amount != _at_precision(mention.amount, currency):
            raise _Ask(
                "unit_price",
                f"{mention.amount:f} has more decimals than {currency} allows: "
                "what is the exact amount?",
            )
    unit_price = price.amount
    if quantity != 1 and not price.per_unit and quantity > 0:
        # A price not said to be per unit is the line's total.
        unit_price = price.amount / quantity
        if unit_price != _at_precision(unit_price, currency):
            raise _Ask(
                "unit_price",
                f"{price.amount:f} {currency} does not split evenly over {quantity:f}: "
                "what is the price of one?",
            )
    item: dict[str, Any] = {"name": name, "quantity": quantity, "unit_price": unit_price}
    if tax is not None:
        item["tax_percent"] = Decimal(tax)
        item["tax_name"] = _tax_name(tax_name)
    if discount is not None:
        item["discount_percent"] = Decimal(discount)
    elif "discount" in extra:
        item["discount_amount"] = extra["discount"].amount
    arguments: dict[str, Any] = {"currency": currency, "items": [item], **due}
    if email is not None:
        arguments["recipient_email"] = email
    if "shipping" in extra:
        arguments["shipping"] = extra["shipping"].amount
    return arguments


def _amounts(work: _Text) -> tuple[list[MoneyMention], dict[str, MoneyMention]]:
    """The prices, and the discount and shipping amounts, blanked out of ``work``."""
    prices: list[MoneyMention] = []
    extra: dict[str, MoneyMention] = {}
    for mention in money_mentions(work.rest):
        kind = _context(work.original, mention)
        work.blank(mention.start, mention.end)
        if kind == "price":
            prices.append(mention)
        elif kind in extra:
            raise _Ask(kind, f"I read more than one {kind} amount: which one?")
        else:
            extra[kind] = mention
    return prices, extra


def _at_precision(amount: Decimal, currency: str) -> Decimal:
    return amount.quantize(Decimal(1).scaleb(-CURRENCY_DECIMALS[currency]))


def _currency(work: _Text, mentions: list[MoneyMention]) -> str:
    named = [m.currency for m in mentions if m.currency]
    named.extend(m["code"].upper() for m in work.take(_IN_CURRENCY))
    return _one(named, "currency", "currency") or "USD"
