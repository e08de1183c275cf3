"""UCP v2026-08-25 at the edge, read into and written from v2026-04-08's shapes
(:mod:`cartagent.commerce.ucp.wire`).

The release keeps v2026-04-08's checkout and profile shapes and changes a few; those this
business meets are bridged here, and checked end to end against the release's official models
(``ucp-sdk`` 0.5.0, ``tests/e2e/test_ucp_sdk_2026_08_25.py``):

* the profile's public keys are ``keys`` (``signing_keys`` before), and every version and
  document URL names the release;
* a shipping destination carries ``type: "shipping_address"`` (read and dropped on the way in,
  written on the way out);
* a shipping option's ``description`` is an object (``{"plain": ...}``), not a string.

The release's schemas are not shipped (only a draft from before its cut was at hand): requests
are checked against v2026-04-08's after the bridge, which the release's requests meet.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .schema import UCP_VERSION

__all__ = ["DESTINATION_TYPE", "VERSION", "business_profile", "checkout_json", "request_body"]

VERSION = "2026-08-25"
DESTINATION_TYPE = "shipping_address"
_OLD_SITE = f"https://ucp.dev/{UCP_VERSION}/"
_SITE = f"https://ucp.dev/{VERSION}/"


def _versioned(entry: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    if out.get("version") == UCP_VERSION:
        out["version"] = VERSION
    for key in ("spec", "schema"):
        value = out.get(key)
        if isinstance(value, str) and value.startswith(_OLD_SITE):
            out[key] = _SITE + value.removeprefix(_OLD_SITE)
    return out


def business_profile(current: Mapping[str, Any], older: Mapping[str, str]) -> dict[str, Any]:
    """The v2026-04-08 profile ``current`` as v2026-08-25's, listing ``older`` releases'
    profiles in ``supported_versions``."""
    ucp = copy.deepcopy(dict(current["ucp"]))
    ucp["version"] = VERSION
    ucp["services"] = {
        name: [_versioned(entry) for entry in entries] for name, entries in ucp["services"].items()
    }
    ucp["capabilities"] = {
        name: [_versioned(entry) for entry in entries]
        for name, entries in ucp["capabilities"].items()
    }
    ucp["payment_handlers"] = {
        name: [_versioned(entry) for entry in entries]
        for name, entries in ucp["payment_handlers"].items()
    }
    ucp.pop("supported_versions", None)
    if older:
        ucp["supported_versions"] = dict(older)
    profile: dict[str, Any] = {"ucp": ucp}
    if "signing_keys" in current:
        profile["keys"] = copy.deepcopy(current["signing_keys"])
    return profile


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    """A create or update body as v2026-04-08's: destinations without their ``type``."""
    fulfillment = body.get("fulfillment")
    if not isinstance(fulfillment, dict) or not isinstance(fulfillment.get("methods"), list):
        return body
    methods = []
    for method in fulfillment["methods"]:
        if isinstance(method, dict) and isinstance(method.get("destinations"), list):
            method = {
                **method,
                "destinations": [
                    {k: v for k, v in d.items() if k != "type"} if isinstance(d, dict) else d
                    for d in method["destinations"]
                ],
            }
        methods.append(method)
    return {**body, "fulfillment": {**fulfillment, "methods": methods}}


def checkout_json(body: Mapping[str, Any]) -> dict[str, Any]:
    """A v2026-04-08 checkout answer as v2026-08-25's."""
    out = dict(body)
    ucp = out.get("ucp")
    if isinstance(ucp, dict) and "payment_handlers" in ucp:
        handlers = {
            name: [_versioned(entry) for entry in entries]
            for name, entries in ucp["payment_handlers"].items()
        }
        out["ucp"] = {**ucp, "payment_handlers": handlers}
    fulfillment = out.get("fulfillment")
    if isinstance(fulfillment, dict):
        out["fulfillment"] = {
            **fulfillment,
            "methods": [_method(method) for method in fulfillment.get("methods", [])],
        }
    return out


def _method(method: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(method)
    if "destinations" in out:
        out["destinations"] = [{**d, "type": DESTINATION_TYPE} for d in out["destinations"]]
    if "groups" in out:
        out["groups"] = [
            {
                **group,
                "options": [
                    {**option, "description": {"plain": option["description"]}}
                    if isinstance(option.get("description"), str)
                    else option
                    for option in group.get("options", [])
                ],
            }
            for group in out["groups"]
        ]
    return out
