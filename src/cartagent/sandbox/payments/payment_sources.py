"""What an Orders v2 order may be paid with in the sandbox, and the test values that decline:
a merchant's decline path can be tested through the credential an agent hands it, as
``PayPal-Mock-Response`` (:mod:`.mocks`) tests it through a header.

``payment_source.token.id``, checked when the order is created (``orders.py`` calls
:func:`check_source`):

- ``vt_…``: a delegated token; :mod:`.delegate_payment` checks its allowance.
- A billing agreement token, ``B-`` or ``BA-`` and the schema's characters
  (``BA-8A802366G0648845Y``, cartagent's demo buyer's ``BA-CARTAGENT-DEMO``): it charges.
- A card number (12 to 19 digits, Luhn-valid): a test card. It charges, unless it is one of
  :data:`DECLINING_TEST_CARDS`.
- Anything else names nothing the sandbox issued: 422 ``BILLING_AGREEMENT_NOT_FOUND`` (the issue
  ``orders.create`` documents for an unknown token), and no order is made. It is never charged.

``payment_source.card.number`` may be a declining test card too. A declining test value lets the
order be created (and approved, as any directly charged source is) and declines its charge:
capture and authorize answer 422 ``INSTRUMENT_DECLINED`` (``TRANSACTION_REFUSED`` where the
operation documents no ``INSTRUMENT_DECLINED``) and nothing is captured, so the merchant may try
again with another instrument (:func:`check_charge`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import spec
from ..errors import PayPalError, detail
from ..store import Row

__all__ = ["DECLINING_TEST_CARDS", "check_charge", "check_source", "luhn"]

ORDERS = "checkout_orders_v2"
DECLINING_TEST_CARDS = frozenset({"4000000000000002"})
"""Test card numbers whose every charge is declined (``INSTRUMENT_DECLINED``)."""
_BILLING_AGREEMENT = re.compile(r"BA?-[0-9A-Za-z_-]+", re.ASCII)
_CARD_NUMBER = re.compile(r"[0-9]{12,19}", re.ASCII)
_DELEGATED = "vt_"  # delegate_payment's tokens, checked there
_FALLBACK_ISSUE = "TRANSACTION_REFUSED"


def luhn(number: str) -> bool:
    """Whether the digits ``number`` pass the Luhn check (card numbers do)."""
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _token_id(source: Mapping[str, Any]) -> str | None:
    token = source.get("token")
    if isinstance(token, dict) and isinstance(token.get("id"), str):
        return str(token["id"])
    return None


def _test_card(source: Mapping[str, Any]) -> str | None:
    """The card number the source pays with: a token that is one, or the card's number."""
    token_id = _token_id(source)
    if token_id is not None:
        return token_id if _CARD_NUMBER.fullmatch(token_id) and luhn(token_id) else None
    card = source.get("card")
    number = card.get("number") if isinstance(card, dict) else None
    return number if isinstance(number, str) else None


def _refusal(action: str, issue: str, *, token_id: str | None = None) -> PayPalError:
    """PayPal's 422 for ``issue`` on ``orders.<action>``, worded as the operation documents it;
    ``TRANSACTION_REFUSED`` where it documents no such issue."""
    documented = spec.documented_issues(f"{ORDERS}:orders.{action}")
    if issue not in documented:
        issue = _FALLBACK_ISSUE
    texts = documented.get(issue, (0, []))[1]
    field = "/payment_source/token/id" if token_id is not None else None
    found = detail(issue, texts[0] if texts else None, field=field, value=token_id)
    return PayPalError(422, details=[found])


def check_source(source: Mapping[str, Any] | None) -> None:
    """Before an order is created: a token it pays with must be one the sandbox knows (see the
    module); PayPal's 422 ``BILLING_AGREEMENT_NOT_FOUND`` otherwise."""
    token_id = _token_id(source or {})
    if token_id is None or token_id.startswith(_DELEGATED):
        return
    if _BILLING_AGREEMENT.fullmatch(token_id):
        return
    if _CARD_NUMBER.fullmatch(token_id) and luhn(token_id):
        return
    raise _refusal("create", "BILLING_AGREEMENT_NOT_FOUND", token_id=token_id)


def check_charge(order: Row, action: str) -> None:
    """Before an order is captured or authorized (``action``): a declining test value in its
    payment source declines the charge (PayPal's 422); nothing is charged."""
    number = _test_card(order.data.get("payment_source") or {})
    if number is not None and number in DECLINING_TEST_CARDS:
        raise _refusal(action, "INSTRUMENT_DECLINED")
