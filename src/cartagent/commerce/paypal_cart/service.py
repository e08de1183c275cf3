"""PayPal Cart API v1's operations (``sdk.gen.ts`` of ``@paypal/agentic-commerce-spec`` 1.1.0)
over the :class:`~cartagent.commerce.merchant.Merchant`, whatever serves them.

Every call: a PayPal-issued JWT (401 ``AUTHENTICATION_FAILURE`` otherwise, see
:mod:`.jwt`); carts belong to PayPal, the only caller. Bodies are JSON objects of at most 256 KiB
checked against :mod:`.schema` (400 ``INVALID_REQUEST`` with ``details``). Then:

- ``create`` (``POST /merchant-cart``): the cart, and when nothing stops it from being paid a
  PayPal order for it whose id is ``payment_method.token`` (201); with ``validation_issues``
  there is no token yet (200). A cart that cannot exist at all (an unknown variant, a quantity
  over the limit) is a 422 ``BusinessError``.
- ``get`` (``GET /merchant-cart/{id}``): the cart (404 if unknown, 400 for a malformed id).
- ``update`` (``PUT /merchant-cart/{id}``): a full replacement, then a token as for ``create``
  (a changed amount gets a new order, an unchanged cart keeps its order).
- ``checkout`` (``POST /merchant-cart/{id}/checkout``, ``payment_method.token`` required): the
  merchant captures the order the buyer approved, exactly once (asking again answers the
  completed cart). An open issue, other items than the cart's, a token that is not the cart's or
  an order the buyer has not approved (or approved for another total) is a 422
  ``BusinessError`` and nothing is captured. A declined capture (422 ``PAYMENT_DECLINED``)
  leaves the cart with a new order to approve with another funding source.

PayPal unreachable: ``create``/``update`` answer the cart with a ``PAYMENT_PROCESSOR_UNAVAILABLE``
issue and no token (the caller updates it again); ``checkout`` answers 503 with ``Retry-After``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...errors import CheckoutError
from ..checkout import Checkout
from ..merchant import Merchant, PaymentUnavailable
from . import schema, wire
from .jwt import InvalidToken, JwtVerifier, KeysUnavailable

__all__ = ["OPERATIONS", "OWNER", "CartAnswer", "PayPalCartService"]

log = logging.getLogger(__name__)

OWNER = "paypal"
OPERATIONS = ("create", "get", "update", "checkout")
CART_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RETRY_AFTER = "5"


@dataclass(frozen=True)
class CartAnswer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        return orjson.dumps(self.body)


class _Refusal(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(body.get("message", ""))
        self.answer = CartAnswer(status, body, headers or {})


def _debug_id() -> str:
    return secrets.token_hex(8)


Handler = Callable[[str | None, dict[str, Any] | None], CartAnswer]


class PayPalCartService:
    """Answers Cart API calls for ``merchant``, trusting tokens ``verifier`` accepts."""

    def __init__(self, merchant: Merchant, verifier: JwtVerifier) -> None:
        self.merchant = merchant
        self.verifier = verifier
        self._handlers: dict[str, Handler] = {
            "create": self._create,
            "get": self._get,
            "update": self._update,
            "checkout": self._checkout,
        }

    def answer(
        self,
        operation: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        cart_id: str | None = None,
    ) -> CartAnswer:
        """Answer one call (``headers`` with lower-case names). Blocking: run it in a thread."""
        try:
            self._authorize(headers.get("authorization"))
            if cart_id is not None and not CART_ID.match(cart_id):
                raise _Refusal(
                    400, wire.error("INVALID_REQUEST", "the cart id is malformed", _debug_id())
                )
            parsed = None if operation == "get" else _parse(body or b"")
            return self._handlers[operation](cart_id, parsed)
        except _Refusal as refusal:
            return refusal.answer
        except CheckoutError as failure:
            status, payload = wire.refusal(failure, _debug_id())
            retry = {"Retry-After": "1"} if status == 409 else {}
            return CartAnswer(status, payload, retry)
        except PaymentUnavailable as failure:
            message = f"PayPal could not be reached; retry: {failure}"
            payload = wire.error("SERVICE_UNAVAILABLE", message, _debug_id())
            return CartAnswer(503, payload, {"Retry-After": RETRY_AFTER})
        except Exception:
            debug_id = _debug_id()
            log.exception("PayPal Cart API %s failed (debug_id %s)", operation, debug_id)
            message = "the merchant failed to process the request"
            return CartAnswer(500, wire.error("INTERNAL_SERVER_ERROR", message, debug_id))

    def authorizes(self, authorization: str | None) -> bool:
        """Whether ``authorization`` holds a valid PayPal token (blocking, as :meth:`answer`):
        the routes check it before they read a body, and pass none for a caller that fails
        it (the call then gets its 401, or 503 when the keys cannot be had)."""
        try:
            self._authorize(authorization)
        except _Refusal:
            return False
        return True

    def _authorize(self, authorization: str | None) -> None:
        try:
            self.verifier.authorize(authorization)
        except InvalidToken as invalid:
            challenge = 'Bearer realm="merchant-cart", error="invalid_token"'
            payload = wire.error("AUTHENTICATION_FAILURE", invalid.reason, _debug_id())
            raise _Refusal(401, payload, {"WWW-Authenticate": challenge}) from None
        except KeysUnavailable as error:
            log.warning("cannot verify PayPal's token: %s", error)
            message = "PayPal's signing keys are unavailable; retry"
            payload = wire.error("SERVICE_UNAVAILABLE", message, _debug_id())
            raise _Refusal(503, payload, {"Retry-After": RETRY_AFTER}) from None

    # The operations ----------------------------------------------------------------------------

    def _render(
        self,
        checkout: Checkout,
        *,
        created: bool = False,
        extra: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return wire.cart(checkout, self.merchant.bill(checkout), created=created, extra=extra or ())

    def _with_token(self, checkout: Checkout) -> tuple[Checkout, list[dict[str, Any]]]:
        """The checkout with a PayPal order when it can be paid, and any issue of this answer."""
        if wire.issues(checkout, self.merchant.bill(checkout)):
            return checkout, []
        try:
            return self.merchant.open_payment(OWNER, checkout.id), []
        except PaymentUnavailable as failure:
            return checkout, [wire.unavailable_issue(str(failure))]

    def _create(self, _id: str | None, body: dict[str, Any] | None) -> CartAnswer:
        assert body is not None
        changes = wire.changes_from(body)
        checkout = self.merchant.create(OWNER, wire.PROTOCOL, self.merchant.terms.currency, changes)
        checkout, extra = self._with_token(checkout)
        rendered = self._render(checkout, created=True, extra=extra)
        return CartAnswer(201 if "payment_method" in rendered else 200, rendered)

    def _get(self, cart_id: str | None, _body: dict[str, Any] | None) -> CartAnswer:
        assert cart_id is not None
        return CartAnswer(200, self._render(self.merchant.get(OWNER, cart_id)))

    def _update(self, cart_id: str | None, body: dict[str, Any] | None) -> CartAnswer:
        assert cart_id is not None and body is not None
        checkout = self.merchant.overwrite(OWNER, cart_id, wire.changes_from(body))
        checkout, extra = self._with_token(checkout)
        return CartAnswer(200, self._render(checkout, extra=extra))

    def _checkout(self, cart_id: str | None, body: dict[str, Any] | None) -> CartAnswer:
        assert cart_id is not None and body is not None
        method = body.get("payment_method") or {}
        token, payer_id = method.get("token"), method.get("payer_id")
        if not token:
            details = [
                {
                    "field": "payment_method.token",
                    "issue": "MISSING_REQUIRED_PARAMETER",
                    "description": "the checkout needs the PayPal token the buyer approved",
                }
            ]
            message = "payment_method.token is required"
            raise _Refusal(400, wire.error("INVALID_REQUEST", message, _debug_id(), details))
        checkout = self.merchant.get(OWNER, cart_id)
        if checkout.status == "open":
            found = wire.issues(checkout, self.merchant.bill(checkout))
            if found:
                raise _Refusal(422, wire.business_error(found[0], _debug_id()))
            if not wire.same_items(body, checkout):
                raise CheckoutError(
                    "the checkout's items are not the cart's; update the cart first",
                    code="items_changed",
                    param=("items",),
                )
        try:
            checkout = self.merchant.capture(OWNER, cart_id, token)
        except CheckoutError as failure:
            if failure.code == "payment_declined":  # a fresh order to approve another way
                with contextlib.suppress(CheckoutError):
                    self._with_token(self.merchant.get(OWNER, cart_id))
            raise
        bill = self.merchant.bill(checkout)
        return CartAnswer(200, wire.cart(checkout, bill, payer_id=payer_id))


def _parse(raw: bytes) -> dict[str, Any]:
    if len(raw) > schema.MAX_BODY:
        message = f"the body is over {schema.MAX_BODY} bytes"
        raise _Refusal(400, wire.error("INVALID_REQUEST", message, _debug_id()))
    try:
        body = orjson.loads(raw) if raw.strip() else None
    except orjson.JSONDecodeError:
        details = [{"field": "", "issue": "MALFORMED_REQUEST_JSON", "description": "not JSON"}]
        message = "the body is not well-formed JSON"
        raise _Refusal(400, wire.error("INVALID_REQUEST", message, _debug_id(), details)) from None
    problems = schema.problems(body)
    if problems:
        message = "the request is not a valid PayPalCart"
        raise _Refusal(400, wire.error("INVALID_REQUEST", message, _debug_id(), problems))
    assert isinstance(body, dict)
    return body
