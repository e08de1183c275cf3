"""Agentic commerce: the store as a merchant that agents check out at (ACP), paid via PayPal.

::

    merchant = Merchant(MerchantCatalog(products), CheckoutRecords(engine), PayPalPayments(paypal))
    app = create_merchant_app(merchant, Agents([AgentKey("agent", token)]), base_url=url)

Protocol front ends live in subpackages (``commerce.acp``); the checkout rules in
:mod:`~cartagent.commerce.checkout` and :mod:`~cartagent.commerce.merchant` are shared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_face

if TYPE_CHECKING:
    from ..addresses import Address, Contact
    from ..protocols.acp.signing import sign
    from .agents import AgentKey, Agents
    from .checkout import Bill, Checkout
    from .merchant import Changes, Merchant, PaymentUnavailable
    from .offers import MerchantCatalog, Offer
    from .payment import PaymentDeclined, PayPalPayments
    from .records import CheckoutRecords
    from .server import create_merchant_app
    from .terms import DEMO_STORE, Quote, StoreTerms

__all__ = [
    "DEMO_STORE",
    "Address",
    "AgentKey",
    "Agents",
    "Bill",
    "Changes",
    "Checkout",
    "CheckoutRecords",
    "Contact",
    "Merchant",
    "MerchantCatalog",
    "Offer",
    "PayPalPayments",
    "PaymentDeclined",
    "PaymentUnavailable",
    "Quote",
    "StoreTerms",
    "create_merchant_app",
    "sign",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AgentKey": ".agents",
        "Agents": ".agents",
        "sign": "..protocols.acp.signing",
        "MerchantCatalog": ".offers",
        "Offer": ".offers",
        "Address": "..addresses",
        "Bill": ".checkout",
        "Checkout": ".checkout",
        "Contact": "..addresses",
        "Changes": ".merchant",
        "Merchant": ".merchant",
        "PaymentUnavailable": ".merchant",
        "PaymentDeclined": ".payment",
        "PayPalPayments": ".payment",
        "CheckoutRecords": ".records",
        "create_merchant_app": ".server",
        "DEMO_STORE": ".terms",
        "Quote": ".terms",
        "StoreTerms": ".terms",
    },
)
