"""PayPal Cart API v1 (``/merchant-cart``, the merchant side of PayPal Store Sync): PayPal calls
the merchant with a JWT it signs; carts are checkouts of the
:class:`~cartagent.commerce.merchant.Merchant`, paid by a PayPal order the buyer approves.

::

    keys = JwksKeys(http_jwks(f"{paypal}/v1/agentic-commerce/jwks"))
    verifier = JwtVerifier(keys, issuer=paypal, audience=merchant_paypal_id)
    app.include_router(paypal_cart_router(PayPalCartService(merchant, verifier)),
                       prefix="/api/paypal/v1")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_face

if TYPE_CHECKING:
    from .jwt import Claims, InvalidToken, JwksKeys, JwtVerifier, KeysUnavailable, http_jwks
    from .routes import paypal_cart_router
    from .service import PayPalCartService

__all__ = [
    "Claims",
    "InvalidToken",
    "JwksKeys",
    "JwtVerifier",
    "KeysUnavailable",
    "PayPalCartService",
    "http_jwks",
    "paypal_cart_router",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Claims": ".jwt",
        "InvalidToken": ".jwt",
        "JwksKeys": ".jwt",
        "JwtVerifier": ".jwt",
        "KeysUnavailable": ".jwt",
        "http_jwks": ".jwt",
        "paypal_cart_router": ".routes",
        "PayPalCartService": ".service",
    },
)
