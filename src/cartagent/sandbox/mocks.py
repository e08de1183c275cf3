"""Negative testing with the ``PayPal-Mock-Response`` header, as PayPal's sandbox offers it.

``PayPal-Mock-Response: {"mock_application_codes": "INSTRUMENT_DECLINED"}`` makes an operation
fail with that issue instead of running. The HTTP status of each code is read from the
operation's own error responses in PayPal's spec, so any code PayPal documents for it works.
"""

from __future__ import annotations

import orjson

from . import spec
from .errors import PayPalError, detail, invalid_request

GENERIC: dict[str, int] = {
    "INTERNAL_SERVER_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
    "RATE_LIMIT_REACHED": 429,
    "AUTHENTICATION_FAILURE": 401,
    "PERMISSION_DENIED": 403,
    "NOT_AUTHORIZED": 403,
    "INVALID_RESOURCE_ID": 404,
    "RESOURCE_NOT_FOUND": 404,
}


def codes_for(op_key: str) -> dict[str, int]:
    """Map each issue code the operation documents to the HTTP status it is returned with."""
    return {code: status for code, (status, _) in spec.documented_issues(op_key).items()}


def mocked_error(op_key: str, header: str) -> PayPalError:
    """The error a ``PayPal-Mock-Response`` header asks for."""
    try:
        parsed = orjson.loads(header)
        code = parsed["mock_application_codes"]
        if not isinstance(code, str):
            raise TypeError(code)
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX",
            'PayPal-Mock-Response must be {"mock_application_codes": "<ISSUE>"}.',
            field="PayPal-Mock-Response",
            value=header,
            location="header",
        ) from None
    status = codes_for(op_key).get(code) or GENERIC.get(code)
    if status is None:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            f"{code} is not an error this operation can return.",
            field="PayPal-Mock-Response",
            value=code,
            location="header",
        )
    if code in GENERIC and status == GENERIC[code] and status in (401, 429, 500, 503):
        return PayPalError(status)
    descriptions = spec.documented_issues(op_key).get(code, (0, []))[1]
    return PayPalError(status, details=[detail(code, descriptions[0] if descriptions else None)])
