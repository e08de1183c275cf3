"""PayPal's error envelope, raised anywhere in the sandbox and rendered by the app.

Every error body is ``{name, message, debug_id, details[], links[]}``; ``details`` items carry
``field`` (a JSON pointer), ``value``, ``location``, ``issue`` and ``description``.
"""

from __future__ import annotations

from typing import Any

NAMES: dict[int, tuple[str, str]] = {
    400: (
        "INVALID_REQUEST",
        "Request is not well-formed, syntactically incorrect, or violates schema.",
    ),
    401: (
        "AUTHENTICATION_FAILURE",
        "Authentication failed due to invalid authentication credentials or a missing "
        "Authorization header.",
    ),
    403: ("NOT_AUTHORIZED", "Authorization failed due to insufficient permissions."),
    404: ("RESOURCE_NOT_FOUND", "The specified resource does not exist."),
    405: ("METHOD_NOT_SUPPORTED", "The server does not implement the requested HTTP method."),
    406: (
        "MEDIA_TYPE_NOT_ACCEPTABLE",
        "The server does not implement the media type that would be acceptable to the client.",
    ),
    409: ("RESOURCE_CONFLICT", "The server has detected a conflict while processing this request."),
    415: (
        "UNSUPPORTED_MEDIA_TYPE",
        "The server does not support the request payload's media type.",
    ),
    422: (
        "UNPROCESSABLE_ENTITY",
        "The requested action could not be performed, semantically incorrect, or failed business "
        "validation.",
    ),
    429: ("RATE_LIMIT_REACHED", "Too many requests. Blocked due to rate limiting."),
    500: ("INTERNAL_SERVER_ERROR", "An internal server error has occurred."),
    503: ("SERVICE_UNAVAILABLE", "Service Unavailable."),
}

ISSUE_DESCRIPTIONS: dict[str, str] = {
    "MISSING_REQUIRED_PARAMETER": "A required field / parameter is missing.",
    "INVALID_PARAMETER_SYNTAX": "The value of a field does not conform to the expected format.",
    "INVALID_PARAMETER_VALUE": "The value of a field is invalid.",
    "INVALID_STRING_LENGTH": "The value of a field is either too short or too long.",
    "INVALID_STRING_MAX_LENGTH": "The value of a field is too long.",
    "INVALID_STRING_MIN_LENGTH": "The value of a field is too short.",
    "INVALID_ARRAY_MAX_ITEMS": "The number of items in an array parameter is too large.",
    "INVALID_ARRAY_MIN_ITEMS": "The number of items in an array parameter is too small.",
    "MALFORMED_REQUEST_JSON": "The request JSON is not well formed.",
    "UNKNOWN_FIELD": "The request contains a field that this operation does not define.",
    "INVALID_RESOURCE_ID": "Specified resource ID does not exist. Please check the resource ID "
    "and try again.",
    "PERMISSION_DENIED": "You do not have permission to access or perform operations on this "
    "resource.",
}


class PayPalError(Exception):
    """An error the sandbox answers with, in PayPal's format."""

    def __init__(
        self,
        status: int,
        *,
        name: str | None = None,
        message: str | None = None,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        default_name, default_message = NAMES.get(status, NAMES[500])
        self.status = status
        self.name = name or default_name
        self.message = message or default_message
        self.details = details or []
        self.headers = headers or {}
        super().__init__(f"{status} {self.name}: {self.message}")

    def body(self, debug_id: str) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "message": self.message, "debug_id": debug_id}
        if self.details:
            body["details"] = self.details
        body["links"] = [
            {
                "href": "https://developer.paypal.com/docs/api/overview/#error",
                "rel": "information_link",
                "method": "GET",
            }
        ]
        return body


def detail(
    issue: str,
    description: str | None = None,
    *,
    field: str | None = None,
    value: str | None = None,
    location: str = "body",
) -> dict[str, Any]:
    item: dict[str, Any] = {}
    if field is not None:
        item["field"] = field if field.startswith("/") else "/" + field
    if value is not None:
        item["value"] = value[:256]
    item["location"] = location
    item["issue"] = issue
    item["description"] = description or ISSUE_DESCRIPTIONS.get(
        issue, issue.replace("_", " ").capitalize()
    )
    return item


def _one_issue(
    status: int,
    issue: str,
    description: str | None,
    field: str | None,
    value: str | None,
    location: str,
) -> PayPalError:
    item = detail(issue, description, field=field, value=value, location=location)
    return PayPalError(status, details=[item])


def invalid_request(
    issue: str,
    description: str | None = None,
    *,
    field: str | None = None,
    value: str | None = None,
    location: str = "body",
) -> PayPalError:
    """400 INVALID_REQUEST with one detail."""
    return _one_issue(400, issue, description, field, value, location)


def unprocessable(
    issue: str,
    description: str | None = None,
    *,
    field: str | None = None,
    value: str | None = None,
    location: str = "body",
) -> PayPalError:
    """422 UNPROCESSABLE_ENTITY with one detail."""
    return _one_issue(422, issue, description, field, value, location)


def not_found(resource_id: str, *, location: str = "path") -> PayPalError:
    return PayPalError(
        404,
        details=[detail("INVALID_RESOURCE_ID", field="id", value=resource_id, location=location)],
    )


def authentication_failure() -> PayPalError:
    return PayPalError(401, headers={"WWW-Authenticate": 'Bearer realm="PayPal Sandbox"'})
