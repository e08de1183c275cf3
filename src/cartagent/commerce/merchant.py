"""The merchant: checkouts over the store's catalog and terms, paid through PayPal.

Protocol front ends (``commerce.acp``, ...) parse their wire format into the calls below and
render what comes back; the rules (what is sellable, what it costs, when it can be paid, that
it is paid once) live here, once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import CheckoutError, PayPalServerError
from .checkout import Bill, Changes, Checkout, Payment, bill, merge_items
from .offers import MerchantCatalog
from .payment import PaymentDeclined, PaymentNotApproved, PayPalPayments, Receipt
from .records import CheckoutRecords, Event
from .terms import DEMO_STORE, StoreTerms

__all__ = ["Announcer", "Changes", "Merchant", "PaymentUnavailable"]

CHECKOUT_LIFETIME = timedelta(hours=6)
PAYING_TIMEOUT = timedelta(seconds=60)


Announcer = Callable[[Checkout], Sequence[Event]]
"""The webhook events a protocol sends when a checkout becomes an order."""


class PaymentUnavailable(Exception):
    """PayPal could not be reached or failed; nothing is known to be charged, retry later."""


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


class Merchant:
    """Checkouts for agents (each sees only its own), priced by ``terms``, paid by ``payments``."""

    def __init__(
        self,
        catalog: MerchantCatalog,
        records: CheckoutRecords,
        payments: PayPalPayments,
        *,
        terms: StoreTerms = DEMO_STORE,
        clock: Callable[[], datetime] = _now,
        new_id: Callable[[str], str] = _new_id,
    ) -> None:
        self.catalog = catalog
        self.records = records
        self.payments = payments
        self.terms = terms
        self.clock = clock
        self.new_id = new_id
        self._announcers: dict[str, Announcer] = {}

    def announce_with(self, protocol: str, announcer: Announcer) -> None:
        """Queue ``announcer``'s events with every order placed over ``protocol``."""
        self._announcers[protocol] = announcer

    def bill(self, checkout: Checkout) -> Bill:
        return bill(checkout, self.catalog, self.terms, self.clock())

    def create(
        self, owner: str, protocol: str, currency: str, changes: Changes, *, prefix: str = "cs"
    ) -> Checkout:
        """A new checkout for ``owner`` over ``protocol``, its id ``prefix_...``."""
        currency = currency.upper()
        if currency != self.terms.currency:
            raise CheckoutError(
                f"this store sells in {self.terms.currency} only, not {currency}",
                code="invalid",
                param=("currency",),
            )
        now = self.clock()
        lines = merge_items(changes.items or (), self.catalog, currency)
        checkout = Checkout(
            id=self.new_id(prefix),
            owner=owner,
            protocol=protocol,
            currency=currency,
            lines=lines,
            created_at=now,
            updated_at=now,
            expires_at=now + CHECKOUT_LIFETIME,
        )
        checkout = self._apply(checkout, replace(changes, items=None))
        self.records.insert(checkout)
        return checkout

    def get(self, owner: str, checkout_id: str, *, protocol: str | None = None) -> Checkout:
        """``owner``'s checkout (of ``protocol``, if given: a cart is not a checkout session);
        404 :class:`CheckoutError` otherwise."""
        checkout = self.records.get(checkout_id, owner)
        if checkout is None or (protocol is not None and checkout.protocol != protocol):
            raise CheckoutError(
                f"no checkout {checkout_id}", code="not_found", param=("id",), status=404
            )
        return checkout

    def update(
        self, owner: str, checkout_id: str, changes: Changes, *, protocol: str | None = None
    ) -> Checkout:
        checkout = self.get(owner, checkout_id, protocol=protocol)
        checkout.editable()
        return self.records.save(self._apply(checkout, changes))

    def _apply(self, checkout: Checkout, changes: Changes) -> Checkout:
        if changes.items is not None:
            checkout = checkout.with_lines(changes.items, self.catalog)
        if (
            changes.shipping_option is not None
            and checkout.address is None
            and (changes.address is None)
        ):
            raise CheckoutError(
                "choose a shipping option after giving a shipping address",
                code="missing",
                param=("address",),
            )
        updates: dict[str, Any] = {
            name: value
            for name, value in (
                ("buyer", changes.buyer),
                ("contact", changes.contact),
                ("address", changes.address),
                ("shipping_option", changes.shipping_option),
                ("metadata", changes.metadata),
                ("consent", changes.consent),
                ("discount_codes", changes.discount_codes),
            )
            if value is not None
        }
        checkout = replace(checkout, **updates, updated_at=self.clock())
        if changes.shipping_option is not None:
            offered = {option.id for option in self.bill(checkout).options}
            if changes.shipping_option not in offered:
                raise CheckoutError(
                    f"no shipping option {changes.shipping_option!r}; offered: "
                    f"{', '.join(sorted(offered))}",
                    code="invalid",
                    param=("shipping_option",),
                )
        return checkout

    def cancel(self, owner: str, checkout_id: str, *, protocol: str | None = None) -> Checkout:
        checkout = self.get(owner, checkout_id, protocol=protocol)
        checkout.editable()
        return self.records.save(replace(checkout, status="canceled", updated_at=self.clock()))

    def complete(
        self,
        owner: str,
        checkout_id: str,
        token: str,
        buyer: dict[str, str] | None = None,
        *,
        protocol: str | None = None,
        charge: Callable[[Checkout, Bill], Receipt] | None = None,
    ) -> Checkout:
        """Pay for the checkout with a PayPal payment token and turn it into an order, exactly
        once. ``charge``: how to charge instead of PayPal (a test payment handler's).

        Raises :class:`CheckoutError` if it cannot be paid (its state, a problem, a decline
        leaves it open with the reason), :class:`PaymentUnavailable` if PayPal failed: the same
        attempt is then retried with the same request ids, so PayPal never charges twice.
        """
        checkout = self.get(owner, checkout_id, protocol=protocol)
        if buyer:
            checkout = replace(checkout, buyer=buyer)
        if charge is None:
            return self._pay(
                checkout, lambda paying, bill: self.payments.charge(paying, bill, token)
            )
        return self._pay(checkout, charge)

    def _payable(self, checkout: Checkout) -> Bill:
        """The checkout's bill; raises :class:`CheckoutError` for the first problem that stops
        payment."""
        priced = self.bill(checkout)
        blocking = next((p for p in priced.problems if p.severity == "error"), None)
        if blocking is not None:
            raise CheckoutError(blocking.message, code=blocking.code, param=blocking.param)
        return priced

    def _pay(
        self,
        checkout: Checkout,
        charge: Callable[[Checkout, Bill], Receipt],
        check: Callable[[Checkout], None] = lambda _: None,
    ) -> Checkout:
        """The one way a checkout becomes an order: refuse a checkout another request is
        paying or that is closed, ``check`` it, mark it ``in_progress`` (the recovery point),
        ``charge`` it, and store the outcome; a completion queues its protocol's events in the
        same transaction."""
        now = self.clock()
        if checkout.status == "in_progress" and now - checkout.updated_at < PAYING_TIMEOUT:
            raise CheckoutError(
                f"checkout {checkout.id} is being paid by another request",
                code="in_progress",
                status=409,
            )
        if checkout.status not in ("open", "in_progress"):
            checkout.editable()
        check(checkout)
        priced = self._payable(checkout)
        paying = self.records.save(replace(checkout, status="in_progress", updated_at=now))
        try:
            receipt = charge(paying, priced)
        except PaymentNotApproved as refused:
            self.records.save(replace(paying, status="open", updated_at=self.clock()))
            raise CheckoutError(
                f"PayPal order {paying.payment.paypal_order_id} cannot be captured "
                f"({refused.reason}): the buyer must approve the order for the cart as it stands",
                code="payment_not_approved",
                param=("payment",),
                status=422,
            ) from refused
        except PaymentDeclined as declined:
            payment = Payment(attempt=paying.payment.attempt + 1, declined=declined.reason)
            self.records.save(
                replace(paying, status="open", payment=payment, updated_at=self.clock())
            )
            raise CheckoutError(
                f"PayPal declined the payment ({declined.reason}); try another instrument",
                code="payment_declined",
                param=("payment",),
                status=402,
            ) from declined
        except PayPalServerError as error:
            self.records.save(replace(paying, status="open", updated_at=self.clock()))
            raise PaymentUnavailable(str(error)) from error
        except Exception:
            # Anything else (a refusal that is no decline, a bug): the checkout must not stay
            # "being paid"; the same attempt (same request ids) is what a retry sends.
            self.records.save(replace(paying, status="open", updated_at=self.clock()))
            raise
        payment = replace(
            paying.payment,
            paypal_order_id=receipt.paypal_order_id,
            capture_id=receipt.capture_id,
            declined=None,
        )
        completed = replace(
            paying,
            status="completed",
            payment=payment,
            order_id=self.new_id("ord"),
            updated_at=self.clock(),
        )
        announcer = self._announcers.get(completed.protocol)
        events = announcer(completed) if announcer is not None else ()
        return self.records.save(completed, events)

    # The approval flow (PayPal Cart API): the cart is replaced whole, the buyer approves a
    # PayPal order for it, and the merchant captures that order.

    def overwrite(
        self, owner: str, checkout_id: str, changes: Changes, *, protocol: str | None = None
    ) -> Checkout:
        """Replace everything a create sets: what ``changes`` leaves ``None`` is cleared (a
        full replacement, as PayPal Cart API's ``PUT`` is); ``items`` are required."""
        checkout = self.get(owner, checkout_id, protocol=protocol)
        checkout.editable()
        blank = replace(
            checkout,
            buyer={},
            contact=None,
            address=None,
            shipping_option=None,
            metadata={},
        )
        return self.records.save(self._apply(blank, replace(changes, items=changes.items or ())))

    def open_payment(self, owner: str, checkout_id: str, return_url: str | None = None) -> Checkout:
        """Give the checkout a PayPal order for what it costs now (``payment.paypal_order_id``,
        the token the buyer approves on PayPal); an unchanged checkout keeps its order.

        Raises :class:`CheckoutError` if it cannot be paid yet, :class:`PaymentUnavailable` if
        PayPal failed (nothing changes; asking again is safe).
        """
        checkout = self.get(owner, checkout_id)
        checkout.editable()
        priced = self._payable(checkout)
        try:
            order_id = self.payments.open_order(checkout, priced, return_url)
        except PayPalServerError as error:
            raise PaymentUnavailable(str(error)) from error
        if order_id == checkout.payment.paypal_order_id:
            return checkout
        payment = replace(checkout.payment, paypal_order_id=order_id, declined=None)
        return self.records.save(replace(checkout, payment=payment, updated_at=self.clock()))

    def capture(self, owner: str, checkout_id: str, paypal_order_id: str) -> Checkout:
        """Capture the order the buyer approved and turn the checkout into an order, exactly
        once (the rules of :meth:`complete`); asking again for a checkout completed with this
        order answers it as it is.

        ``paypal_order_id`` must be the checkout's current order (:meth:`open_payment`). An order
        the buyer has not approved (or not for today's total) leaves the checkout open:
        :class:`CheckoutError` ``payment_not_approved``.
        """
        checkout = self.get(owner, checkout_id)
        if checkout.status == "completed" and checkout.payment.paypal_order_id == paypal_order_id:
            return checkout

        def same_order(current: Checkout) -> None:
            if paypal_order_id != current.payment.paypal_order_id:
                raise CheckoutError(
                    f"{paypal_order_id!r} is not the PayPal order of checkout {current.id}",
                    code="invalid",
                    param=("payment",),
                )

        return self._pay(
            checkout,
            lambda paying, bill: self.payments.capture_approved(paying, bill, paypal_order_id),
            same_order,
        )
