"""ACP 2026-04-17's JSON Schema (shipped in the wheel) and request validation against it.

Where the release contradicts itself, the server follows the JSON Schema bundle except in one
place, kept narrow: ``Item`` has no ``quantity`` although its description ("... and quantity"),
the RFC and every example carry one, so ``quantity`` (an integer from 1) is accepted on request
items. The OpenAPI file lags the bundle (its ``CheckoutSessionBase`` lacks ``order``, so its
``CheckoutSessionWithOrder`` rejects every object) and most of its request examples predate the
schema (``items`` for ``line_items``); the contract tests work around both.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..validation import first_problem, json_path

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["API_VERSION", "SUPPORTED_VERSIONS", "check", "definitions", "json_path", "spec_file"]

API_VERSION = "2026-04-17"
SUPPORTED_VERSIONS = (API_VERSION,)
_SPECS = "specs/acp"


def spec_file(name: str) -> dict[str, Any]:
    """A JSON file of the shipped ACP release (``schema.agentic_checkout.json``, ...)."""
    text = resources.files("cartagent.protocols").joinpath(_SPECS, name).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _local(node: Any) -> Any:
    """The cart bundle's references into the checkout bundle, made references into one."""
    if isinstance(node, dict):
        return {
            key: value.replace("schema.agentic_checkout.json#", "#")
            if key == "$ref" and isinstance(value, str)
            else _local(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_local(item) for item in node]
    return node


@cache
def _bundle() -> dict[str, Any]:
    """The checkout bundle with the cart bundle's definitions (``Cart``, ``CartCreateRequest``,
    ``CartUpdateRequest``) merged in."""
    bundle = copy.deepcopy(spec_file("schema.agentic_checkout.json"))
    item = bundle["$defs"]["Item"]["properties"]
    item["quantity"] = {"type": "integer", "minimum": 1, "description": "Units of the item."}
    carts = _local(spec_file("schema.cart.json")["$defs"])
    bundle["$defs"].update(carts)
    return bundle


def definitions() -> dict[str, Any]:
    """The schema's ``$defs`` as the server applies them (with ``Item.quantity``)."""
    defs: dict[str, Any] = _bundle()["$defs"]
    return defs


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = {**_bundle(), "$ref": f"#/$defs/{name}"}
    # Imported here: the agent's client needs this module's versions, not its validators.
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(schema, format_checker=FormatChecker())


def check(name: str, body: Any) -> None:
    """Raise :class:`CheckoutError` (400) naming the first place ``body`` breaks ``$defs[name]``."""
    problem = first_problem(_validator(name), body)
    if problem is not None:
        raise problem
