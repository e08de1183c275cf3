"""The store's PayPal payment handler in UCP's handler model (payment-handler-guide.md).

Declared as ``com.paypal.checkout`` with the instance id ``paypal``: one instrument type,
``paypal``, whose credential is a token credential (``types/token_credential.json``) of type
``paypal_payment_token`` or ``vault_token`` holding a PayPal payment token, what a wallet or a
vault hands an agent. The merchant charges it with PayPal's Orders v2 API
(``payment_source.token``), see :mod:`cartagent.commerce.payment`. The handler publishes no
JSON Schema of its own: its shapes are the release's base instrument and token credential.
Credentials are never echoed back (the spec's ``ucp_response: "omit"`` on ``token``).
"""

from __future__ import annotations

from typing import Any

from ...errors import CheckoutError
from ..payment_token import is_payment_token
from .schema import UCP_VERSION

__all__ = [
    "CREDENTIAL_TYPES",
    "HANDLER_ID",
    "HANDLER_NAME",
    "INSTRUMENT_TYPE",
    "handlers",
    "payment_token",
    "token_path",
]

HANDLER_NAME = "com.paypal.checkout"
HANDLER_ID = "paypal"
INSTRUMENT_TYPE = "paypal"
CREDENTIAL_TYPES = ("paypal_payment_token", "vault_token")
MAX_INSTRUMENTS = 10
MAX_TOKEN = 255


def handlers(environment: str) -> dict[str, list[dict[str, Any]]]:
    """The business's ``payment_handlers`` (its profile's declaration)."""
    return {
        HANDLER_NAME: [
            {
                "id": HANDLER_ID,
                "version": UCP_VERSION,
                "spec": "https://developer.paypal.com/docs/api/orders/v2/",
                "available_instruments": [{"type": INSTRUMENT_TYPE}],
                "config": {
                    "environment": environment,
                    "intent": "CAPTURE",
                    "credential_types": list(CREDENTIAL_TYPES),
                },
            }
        ]
    }


def payment_token(body: dict[str, Any], handler_ids: frozenset[str]) -> str:
    """The PayPal token in a (schema-valid) complete request's selected instrument.

    The instrument is the one marked ``selected`` (or the only one); its handler must be one
    negotiated for this request (``handler_ids``). Raises :class:`CheckoutError` naming the
    offending field.
    """
    index, instrument = selected_instrument(body)
    path = ("payment", "instruments", index)
    if instrument["handler_id"] not in handler_ids:
        offered = ", ".join(sorted(handler_ids)) or "none was negotiated"
        raise CheckoutError(
            f"handler {instrument['handler_id'][:64]!r} is not one this checkout offers "
            f"({offered})",
            code="invalid",
            param=(*path, "handler_id"),
        )
    if instrument["type"] != INSTRUMENT_TYPE:
        raise CheckoutError(
            f"the PayPal handler takes instruments of type {INSTRUMENT_TYPE!r}",
            code="invalid",
            param=(*path, "type"),
        )
    credential = instrument.get("credential")
    if credential is None:
        raise CheckoutError(
            "the instrument has no credential", code="missing", param=(*path, "credential")
        )
    if credential["type"] not in CREDENTIAL_TYPES:
        raise CheckoutError(
            f"the PayPal handler takes a credential of type {' or '.join(CREDENTIAL_TYPES)}",
            code="invalid",
            param=(*path, "credential", "type"),
        )
    token = credential.get("token")
    if not isinstance(token, str) or len(token) > MAX_TOKEN or not is_payment_token(token):
        raise CheckoutError(
            f"the credential's token must be 1 to {MAX_TOKEN} letters, digits, '-' or '_'",
            code="invalid",
            param=(*path, "credential", "token"),
        )
    return token


def selected_instrument(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The index and the instrument a (schema-valid) complete request pays with: the one
    marked ``selected``, or the only one."""
    instruments = body["payment"].get("instruments") or []
    if not instruments:
        raise CheckoutError(
            "choose a payment instrument", code="missing", param=("payment", "instruments")
        )
    if len(instruments) > MAX_INSTRUMENTS:
        raise CheckoutError(
            f"send at most {MAX_INSTRUMENTS} instruments",
            code="invalid",
            param=("payment", "instruments"),
        )
    chosen = [i for i, instrument in enumerate(instruments) if instrument.get("selected")]
    if len(chosen) > 1 or (not chosen and len(instruments) > 1):
        raise CheckoutError(
            "mark exactly one instrument as selected",
            code="invalid",
            param=("payment", "instruments"),
        )
    index = _selected(instruments)
    return index, instruments[index]


def token_path(body: dict[str, Any]) -> tuple[str | int, ...]:
    """Where the token of the instrument :func:`payment_token` took is in ``body``: the field a
    decline of that token is about."""
    index = _selected(body["payment"]["instruments"])
    return ("payment", "instruments", index, "credential", "token")


def _selected(instruments: list[dict[str, Any]]) -> int:
    return next((i for i, instrument in enumerate(instruments) if instrument.get("selected")), 0)
