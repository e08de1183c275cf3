"""Request bodies of the dispute actions PayPal's spec declares as multipart/form-data.

PayPal takes these either as JSON or as multipart/form-data with a JSON ``input`` part and file
parts; both are read here (with the standard library's MIME parser) and the JSON is checked
against the request schema PayPal documents for the action, in PayPal's error format.
"""

from __future__ import annotations

from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

import orjson
from jsonschema import Draft4Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from .. import spec
from ..errors import PayPalError, detail, invalid_request

SPEC = "customer_disputes_v1"
Doc = dict[str, Any]


def _ref(name: str) -> Doc:
    return {"$ref": f"urn:paypal:{SPEC}#/components/schemas/{name}"}


def _text(limit: int) -> Doc:
    return {"type": "string", "minLength": 1, "maxLength": limit}


INPUTS: dict[str, Doc] = {
    "accept_claim": {
        "type": "object",
        "properties": {
            "note": _text(2000),
            "accept_claim_reason": {
                "enum": [
                    "DID_NOT_SHIP_ITEM",
                    "TOO_TIME_CONSUMING",
                    "LOST_IN_MAIL",
                    "NOT_ABLE_TO_WIN",
                    "COMPANY_POLICY",
                    "REASON_NOT_SET",
                ]
            },
            "invoice_id": _text(127),
            "return_shipping_address": _ref("address_portable"),
            "accept_claim_type": _ref("accept_claim_type"),
            "refund_amount": _ref("money"),
        },
        "required": ["note"],
        "additionalProperties": False,
    },
    "send_message": {
        "type": "object",
        "properties": {"message": _text(2000)},
        "required": ["message"],
        "additionalProperties": False,
    },
    "provide_evidence": {
        "type": "object",
        "properties": {
            "evidences": {
                "type": "array",
                "minItems": 1,
                "maxItems": 100,
                "items": _ref("evidence"),
            },
            "return_shipping_address": _ref("address_portable"),
        },
        "required": ["evidences"],
        "additionalProperties": False,
    },
}
_REGISTRY: Registry[Any] = Registry().with_resource(
    f"urn:paypal:{SPEC}", Resource.from_contents(spec.load(SPEC), default_specification=DRAFT4)
)
_ISSUES = {
    "required": "MISSING_REQUIRED_PARAMETER",
    "additionalProperties": "UNKNOWN_FIELD",
    "maxLength": "INVALID_STRING_MAX_LENGTH",
    "minLength": "INVALID_STRING_MIN_LENGTH",
    "type": "INVALID_PARAMETER_SYNTAX",
    "pattern": "INVALID_PARAMETER_SYNTAX",
    "minItems": "INVALID_ARRAY_MIN_ITEMS",
    "maxItems": "INVALID_ARRAY_MAX_ITEMS",
}


def validate_input(action: str, payload: Any) -> None:
    validator = Draft4Validator(INPUTS[action], registry=_REGISTRY)
    details = []
    for error in sorted(validator.iter_errors(payload), key=lambda e: str(e.absolute_path))[:10]:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        value = error.instance if isinstance(error.instance, str) else None
        details.append(
            detail(
                _ISSUES.get(str(error.validator), "INVALID_PARAMETER_VALUE"),
                field=where,
                value=value,
            )
        )
    if details:
        raise PayPalError(400, details=details)


def read_body(raw: bytes, content_type: str) -> tuple[Any, list[str]]:
    """The JSON input and uploaded file names of a JSON or multipart/form-data body."""
    kind = content_type.split(";")[0].strip().lower()
    if not raw.strip():
        return {}, []
    if kind.startswith("multipart/"):
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw
        )
        if not message.is_multipart():
            raise invalid_request("MALFORMED_REQUEST", "The multipart body is malformed.")
        payload: Any = {}
        files: list[str] = []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            filename = part.get_filename()
            content = part.get_payload(decode=True)
            text = content if isinstance(content, bytes) else b""
            if name == "input":
                payload = _json(text)
            elif filename:
                files.append(str(filename))
        return payload, files
    if kind and "json" not in kind:
        raise PayPalError(415)
    return _json(raw), []


def _json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise invalid_request("MALFORMED_REQUEST_JSON", field="/") from None
