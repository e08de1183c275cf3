"""UCP v2026-01-11 at the edge: its profiles, request bodies and answers, read into and written
from the shapes of the release the business is built on (v2026-04-08,
:mod:`cartagent.commerce.ucp.wire`).

What differs, and how it is bridged:

* **Profiles.** Capabilities are a list of ``{name, version, spec, schema, extends, config}``;
  the ``dev.ucp.shopping`` service is one object with a ``rest`` binding; payment handlers are
  a top-level ``payment.handlers`` list of ``{id, name, version, spec, config_schema,
  instrument_schemas, config}``. A platform profile needs no ``services`` (the release's own
  conformance suite presents one without), so each capability entry is checked against
  ``capability.json#/$defs/discovery`` instead of the whole profile against the discovery
  schema. Payment handlers are not negotiated in this release: the business lists its own on
  every checkout (``payment.handlers``) and the platform picks one.
* **Requests.** Create carries ``currency`` (it must be the store's), an ``id`` and ``payment``
  the business does not take from a platform; complete is ``{payment_data: <instrument>,
  risk_signals}``, the one instrument a ``card`` instrument (the release's only instrument
  schema) whose credential is a token credential.
* **Answers.** ``ucp`` is ``{version, capabilities: [{name, version}]}`` (no ``status``); a
  checkout always has ``payment``; an error message's severity has no ``unrecoverable``
  (``requires_buyer_input`` is the nearest: the platform cannot fix it through the API).
* **Refusals.** The release's error shape (checkout-rest.md, "Error Responses") is
  ``{"status": "requires_escalation", "messages": [...]}`` with an HTTP error status; a call the
  business refuses (an unknown item, not enough stock, a decline, a closed session) is answered
  so, and ``detail`` repeats the first message's text, where the release's conformance suite
  (and its sample business, a FastAPI app) reads it. A session's own problems (no address yet)
  stay messages on a 200, as in v2026-04-08.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import CheckoutError
from ..payment_token import is_payment_token
from . import payment
from .profile import (
    BUYER_CONSENT,
    CHECKOUT,
    DISCOUNT,
    FULFILLMENT,
    MAX_ENTRIES,
    ORDER,
    SHOPPING,
    Capability,
    PlatformProfile,
    ProfileMalformed,
    checked_webhook_url,
)
from .schema import BASE, first_problem, validator
from .shapes import GROUP_ID, METHOD_ID

__all__ = [
    "CAPABILITIES",
    "VERSION",
    "business_profile",
    "check_currency",
    "checkout_json",
    "complete_credential",
    "completion_refusal",
    "error_body",
    "handler_declarations",
    "lenient_body",
    "order_event",
    "order_json",
    "platform_profile",
    "status_of",
]

VERSION = "2026-01-11"
_SITE = "https://ucp.dev"

CAPABILITIES = (
    Capability(CHECKOUT, "checkout", "shopping/checkout.json"),
    Capability(FULFILLMENT, "fulfillment", "shopping/fulfillment.json", extends=CHECKOUT),
    Capability(DISCOUNT, "discount", "shopping/discount.json", extends=CHECKOUT),
    Capability(BUYER_CONSENT, "buyer-consent", "shopping/buyer_consent.json", extends=CHECKOUT),
    Capability(ORDER, "order", "shopping/order.json"),
)
"""What this business offers a v2026-01-11 platform (the release has no catalog capabilities)."""

# The refusals of a call, by the neutral code of the merchant's CheckoutError.
_STATUS = {
    "not_found": 400,  # an item: the session itself not existing is a 404 (see status_of)
    "out_of_stock": 400,
    "payment_declined": 402,
    "payment_failed": 402,
    "invalid_state": 409,
    "conflict": 409,
    "in_progress": 409,
}
_NEEDS_SHIPPING = ("address", "shipping_option")


def handler_declarations(
    handlers: Mapping[str, Sequence[Mapping[str, Any]]],
) -> list[dict[str, Any]]:
    """The business's payment handlers (v2026-04-08's, keyed by name) as v2026-01-11 lists them:
    each with its ``name`` and a ``config_schema`` and ``instrument_schemas`` of the release."""
    out = []
    for name, entries in handlers.items():
        for entry in entries:
            out.append(
                {
                    "id": entry["id"],
                    "name": name,
                    "version": VERSION,
                    "spec": entry["spec"],
                    "config_schema": entry.get(
                        "config_schema", f"{_SITE}/schemas/shopping/types/payment_handler.json"
                    ),
                    "instrument_schemas": list(
                        entry.get(
                            "instrument_schemas",
                            [f"{_SITE}/schemas/shopping/types/card_payment_instrument.json"],
                        )
                    ),
                    "config": dict(entry.get("config", {})),
                }
            )
    return out


def business_profile(
    endpoint: str,
    handlers: Mapping[str, Sequence[Mapping[str, Any]]],
    signing_keys: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """The v2026-01-11 business profile; ``endpoint`` is the REST base URL."""
    profile: dict[str, Any] = {
        "ucp": {
            "version": VERSION,
            "services": {
                SHOPPING: {
                    "version": VERSION,
                    "spec": f"{_SITE}/specification/overview",
                    "rest": {
                        "schema": f"{_SITE}/services/shopping/openapi.json",
                        "endpoint": endpoint.rstrip("/"),
                    },
                }
            },
            "capabilities": [
                {"name": cap.name, **cap.declaration(VERSION, _SITE)} for cap in CAPABILITIES
            ],
        },
        "payment": {"handlers": handler_declarations(handlers)},
    }
    if signing_keys:
        profile["signing_keys"] = [dict(key) for key in signing_keys]
    return profile


def platform_profile(url: str, document: Any, *, allow_private: bool = False) -> PlatformProfile:
    """``document`` read as a v2026-01-11 platform profile; :class:`ProfileMalformed` says why
    it is not one."""
    ucp = document.get("ucp") if isinstance(document, dict) else None
    listed = ucp.get("capabilities") if isinstance(ucp, dict) else None
    if not isinstance(listed, list):
        raise ProfileMalformed("the platform profile's ucp.capabilities must be a list")
    check = validator(BASE + "capability.json#/$defs/discovery", version=VERSION)
    capabilities: dict[str, set[str]] = {}
    webhook_url = problem = None
    for index, entry in enumerate(listed[:MAX_ENTRIES]):
        found = first_problem(check, entry)
        if found is not None:
            raise ProfileMalformed(
                f"the platform profile's capability {index} is not valid: {found.message}"
            )
        capabilities.setdefault(entry["name"], set()).add(entry["version"])
        config = entry.get("config")
        if entry["name"] == ORDER and isinstance(config, Mapping) and "webhook_url" in config:
            try:
                url_given = config["webhook_url"]
                webhook_url = checked_webhook_url(url_given, allow_private=allow_private)
            except ProfileMalformed as error:
                problem = str(error)
    return PlatformProfile(
        url,
        VERSION,
        {name: frozenset(versions) for name, versions in capabilities.items()},
        {},
        webhook_url,
        problem,
    )


# ---------------------------------------------------------------- requests


def lenient_body(body: dict[str, Any]) -> dict[str, Any]:
    """A create or update body before it is checked against the release's schema: what is in
    ``payment`` is not read on create or update, so not checked either (the release requires
    the object; its conformance suite sends ``selected_instrument_id: null`` in it), and a
    fulfillment method without an ``id`` or ``line_item_ids`` is this store's one method, for
    every line, and a group without an ``id`` its one group (the release requires them on
    update; its suite sends none)."""
    out = {key: ({} if key == "payment" else value) for key, value in body.items()}
    fulfillment = out.get("fulfillment")
    if not isinstance(fulfillment, dict):
        return out
    methods = fulfillment.get("methods")
    if isinstance(methods, list) and len(methods) == 1 and isinstance(methods[0], dict):
        lines = out.get("line_items")
        line_ids = [
            line["id"]
            for line in (lines if isinstance(lines, list) else [])
            if isinstance(line, dict) and isinstance(line.get("id"), str)
        ]
        method = {"id": METHOD_ID, "line_item_ids": line_ids, **methods[0]}
        groups = method.get("groups")
        if isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], dict):
            method["groups"] = [{"id": GROUP_ID, **groups[0]}]
        out["fulfillment"] = {**fulfillment, "methods": [method]}
    return out


def check_currency(body: Mapping[str, Any], currency: str) -> None:
    """A create or update names the currency: it must be the store's."""
    asked = body.get("currency")
    if isinstance(asked, str) and asked.upper() != currency:
        raise CheckoutError(
            f"this store sells in {currency} only, not {asked[:8]}",
            code="invalid",
            param=("currency",),
        )


def complete_credential(
    body: dict[str, Any], handler_ids: frozenset[str]
) -> tuple[str, Mapping[str, Any]]:
    """The handler and credential of a (schema-valid) complete body's ``payment_data``: its
    ``handler_id`` must be one of the business's; the PayPal handler's credential must be a
    token credential holding a PayPal token."""
    instrument = body["payment_data"]
    path: tuple[str | int, ...] = ("payment_data",)
    handler = instrument["handler_id"]
    if handler not in handler_ids:
        raise CheckoutError(
            f"handler {handler[:64]!r} is not one this business offers "
            f"({', '.join(sorted(handler_ids))})",
            code="invalid",
            param=(*path, "handler_id"),
        )
    credential = instrument.get("credential")
    if not isinstance(credential, Mapping):
        raise CheckoutError(
            "the instrument has no credential", code="missing", param=(*path, "credential")
        )
    if handler != payment.HANDLER_ID:
        return handler, credential
    token = credential.get("token")
    if credential.get("type") not in payment.CREDENTIAL_TYPES:
        raise CheckoutError(
            f"the PayPal handler takes a credential of type "
            f"{' or '.join(payment.CREDENTIAL_TYPES)}",
            code="invalid",
            param=(*path, "credential", "type"),
        )
    if not isinstance(token, str) or len(token) > payment.MAX_TOKEN or not is_payment_token(token):
        raise CheckoutError(
            f"the credential's token must be 1 to {payment.MAX_TOKEN} letters, digits, '-' or '_'",
            code="invalid",
            param=(*path, "credential", "token"),
        )
    return handler, credential


# ---------------------------------------------------------------- answers


def _ucp(envelope: Mapping[str, Any]) -> dict[str, Any]:
    capabilities = envelope.get("capabilities", {})
    return {
        "version": VERSION,
        "capabilities": [
            {"name": name, "version": entries[0]["version"]}
            for name, entries in capabilities.items()
        ],
    }


def _totals(totals: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Totals with a discount's amount positive (v2026-04-08 makes it negative)."""
    return [
        {**total, "amount": abs(total["amount"])} if total["type"] == "discount" else dict(total)
        for total in totals
    ]


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if out.get("severity") == "unrecoverable":
        out["severity"] = "requires_buyer_input"
    return out


def checkout_json(
    body: Mapping[str, Any], handlers: Sequence[Mapping[str, Any]], instrument_id: str | None
) -> dict[str, Any]:
    """A v2026-04-08 checkout answer as v2026-01-11's: its ``ucp``, the business's
    ``handlers`` as ``payment``, messages in the release's severities."""
    out = {key: value for key, value in body.items() if key != "ucp"}
    out = {"ucp": _ucp(body["ucp"]), **out}
    paid: dict[str, Any] = {"handlers": [dict(h) for h in handlers], "instruments": []}
    if instrument_id is not None:
        paid["selected_instrument_id"] = instrument_id
    out["payment"] = paid
    out["messages"] = [_message(m) for m in body.get("messages", [])]
    out["totals"] = _totals(body["totals"])
    out["line_items"] = [{**line, "totals": _totals(line["totals"])} for line in body["line_items"]]
    if "order" in out:
        out["order"] = {key: v for key, v in out["order"].items() if key != "label"}
    return out


def order_json(body: Mapping[str, Any]) -> dict[str, Any]:
    """A v2026-04-08 order as v2026-01-11's."""
    return {"ucp": _ucp(body["ucp"]), **{k: v for k, v in body.items() if k != "ucp"}}


def order_event(order: Mapping[str, Any], event: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """An order webhook's body (``event``: the v2026-04-08 order with ``event_id`` and
    ``created_time``) as v2026-01-11's: the release's body (the order and those two), plus
    ``event_type`` and the order again under ``order``, the shape the release's sample
    business sends and its conformance suite reads."""
    return {
        **order_json(event),
        "event_type": kind,
        "order": order_json(order),
    }


def status_of(error: CheckoutError) -> int:
    """The HTTP status of a refused call."""
    if error.code == "not_found" and error.param[:1] == ("id",):
        return 404
    return _STATUS.get(error.code, 400)


def error_body(messages: Sequence[Mapping[str, Any]], continue_url: str | None) -> dict[str, Any]:
    """The release's error shape for refused calls, with ``detail`` (the first message's
    text)."""
    listed = [_message(m) for m in messages]
    body: dict[str, Any] = {"status": "requires_escalation", "messages": listed}
    if listed:
        body["detail"] = listed[0].get("content", "")
    if continue_url is not None:
        body["continue_url"] = continue_url
    return body


def completion_refusal(error: CheckoutError) -> CheckoutError:
    """A completion refused for want of a destination or a shipping option, worded as the
    release's sample business words it (its conformance suite looks for these words)."""
    if error.param[:1] and error.param[0] in _NEEDS_SHIPPING:
        return CheckoutError(
            f"Fulfillment address and option must be selected: {error.message}",
            code=error.code,
            param=error.param,
            status=error.status,
        )
    return error
