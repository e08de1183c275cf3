"""The domains a turn can belong to: each is served by one specialist."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["DOMAIN_DESCRIPTIONS", "Domain"]


class Domain(StrEnum):
    """What a shopper's or a merchant's turn is about."""

    DISCOVERY = "discovery"
    CART_CHECKOUT = "cart_checkout"
    ORDERS = "orders"
    RETURNS_REFUNDS = "returns_refunds"
    BACK_OFFICE = "back_office"
    STORE_QUESTIONS = "store_questions"
    OUT_OF_SCOPE = "out_of_scope"


DOMAIN_DESCRIPTIONS: dict[Domain, str] = {
    Domain.DISCOVERY: (
        "finding products: search, compare, refine the results (cheaper, in red, not "
        "polyester), pick one of the listed results (the second one)"
    ),
    Domain.CART_CHECKOUT: "the shopping cart and paying: add, remove, show the cart, check out",
    Domain.ORDERS: "an order already placed: its status, its shipment and tracking",
    Domain.RETURNS_REFUNDS: "returning an item, exchanging it, getting money back",
    Domain.BACK_OFFICE: (
        "the merchant's work: invoices, catalog products, subscription plans and "
        "subscriptions, disputes, transactions and sales reports"
    ),
    Domain.STORE_QUESTIONS: (
        "questions about the store's policies: shipping, returns, warranty, payment methods"
    ),
    Domain.OUT_OF_SCOPE: "anything a store's assistant does not do (weather, jokes, homework)",
}
"""One line per domain, for people and for the model router's prompt."""
