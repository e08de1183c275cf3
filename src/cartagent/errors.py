"""cartagent's one exception tree, organised by who must act.

::

    CartagentError
    ├── ConfigurationError        the operator: a bad setting, a missing credential
    ├── PayPalError               PayPal (or the sandbox) refused or failed a request
    │   ├── PayPalAuthError       401/403: credentials or permissions
    │   ├── PayPalClientError     other 4xx: the request was wrong (name, details[] say why)
    │   └── PayPalServerError     5xx or transport failure after retries: try again later
    ├── ModelError                the model endpoint failed (HTTP error, transport, garbled reply)
    ├── ToolError                 the model: bad arguments or a refused action it can fix
    ├── CheckoutError             a shopping agent: a checkout request the merchant refuses
    ├── DestinationRefused        whoever gave the URL: it points at a non-public address
    ├── StepLimitExceeded         the model kept calling tools past the turn's step limit
    └── ApprovalError             the human: a money-moving or destructive tool needs a yes
        ├── ApprovalRequired      no decision yet (or the host has no approval callback)
        ├── ApprovalDenied        the host said no
        └── SpendLimitExceeded    over a configured spend limit
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError
    from sqlalchemy.engine import URL, Engine, ExceptionContext

__all__ = [
    "ApprovalDenied",
    "ApprovalError",
    "ApprovalRequired",
    "CartagentError",
    "CheckoutError",
    "ConfigurationError",
    "DestinationRefused",
    "ModelError",
    "PayPalAuthError",
    "PayPalClientError",
    "PayPalError",
    "PayPalErrorDetail",
    "PayPalServerError",
    "SpendLimitExceeded",
    "StepLimitExceeded",
    "ToolError",
    "explain_connect_failures",
    "field_problems",
]


class CartagentError(Exception):
    """Base of every error cartagent raises on purpose."""


class ConfigurationError(CartagentError):
    """A setting is missing or invalid; nothing was sent anywhere."""


class ModelError(CartagentError):
    """The model endpoint failed: an HTTP error answer, a transport failure or a garbled reply.

    ``http_status`` is ``None`` when no answer arrived (timeout, refused connection).
    """

    def __init__(self, message: str, *, http_status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.body = body


@dataclass(frozen=True)
class PayPalErrorDetail:
    """One item of PayPal's ``details[]``."""

    issue: str
    description: str = ""
    field: str | None = None
    value: str | None = None
    location: str | None = None

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> PayPalErrorDetail:
        return cls(
            issue=str(item.get("issue", "")),
            description=str(item.get("description", "")),
            field=item.get("field"),
            value=None if item.get("value") is None else str(item.get("value")),
            location=item.get("location"),
        )


class PayPalError(CartagentError):
    """An error answer from the PayPal REST API, in PayPal's envelope."""

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        name: str = "",
        debug_id: str | None = None,
        details: tuple[PayPalErrorDetail, ...] = (),
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.name = name
        self.debug_id = debug_id
        self.details = details
        self.request_id = request_id
        self.body = body

    @property
    def issues(self) -> list[str]:
        return [d.issue for d in self.details]

    def __str__(self) -> str:
        parts = [f"{self.http_status or ''} {self.name}: {self.message}".strip()]
        for d in self.details:
            where = f" at {d.field}" if d.field else ""
            parts.append(f"{d.issue}{where}: {d.description}".rstrip(": "))
        if self.debug_id:
            parts.append(f"debug_id={self.debug_id}")
        return " | ".join(parts)


class PayPalAuthError(PayPalError):
    """401/403, or the OAuth2 token endpoint refused the client credentials."""


class PayPalClientError(PayPalError):
    """A 4xx other than auth: the request itself must change."""


class PayPalServerError(PayPalError):
    """A 5xx or a transport failure that persisted through the retries."""


class ToolError(CartagentError):
    """A failure the calling model should see and can act on (fix an argument, pick another id).

    ``field`` names the offending argument when there is one.
    """

    def __init__(
        self, message: str, *, field: str | None = None, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or []

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class CheckoutError(CartagentError):
    """A merchant refuses a checkout request; the agent that sent it must change it.

    ``code`` is machine-readable (``not_found``, ``invalid``, ``out_of_stock``...), ``param`` the
    offending field as a path of keys and indexes (each protocol renders it its own way) and
    ``status`` the HTTP status the refusal is answered with.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        param: tuple[str | int, ...] = (),
        status: int = 400,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param
        self.status = status


class DestinationRefused(CartagentError):
    """A URL given by someone else (a request, a profile, a shopper, a merchant's document)
    points at a loopback, private, link-local, multicast or reserved address, by its spelling
    or by what its name resolves to; nothing was sent. Not worth retrying.

    ``url`` is the refused destination (without its query).
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


class StepLimitExceeded(CartagentError):
    """The model was still calling tools after the allowed number of replies."""

    def __init__(self, message: str, *, messages: list[Any]) -> None:
        super().__init__(message)
        self.messages = messages


class ApprovalError(CartagentError):
    """A tool call that needs a human's decision did not get a yes."""

    def __init__(self, message: str, *, tool: str, arguments: dict[str, Any]) -> None:
        super().__init__(message)
        self.tool = tool
        self.arguments = arguments


class ApprovalRequired(ApprovalError):
    """No approval was given (the default policy denies until a host approves)."""


class ApprovalDenied(ApprovalError):
    """The host's approval callback said no."""


class SpendLimitExceeded(ApprovalError):
    """The call would move more money than a configured limit allows."""


def field_problems(error: ValidationError, *, whole: str) -> list[tuple[str, str]]:
    """What pydantic refused, as ``(dotted field path, message)`` pairs in its order; ``whole``
    stands for the path of a problem with the value as a whole."""
    return [
        (".".join(str(part) for part in item["loc"]) or whole, item["msg"])
        for item in error.errors(include_url=False)
    ]


def explain_connect_failures(engine: Engine) -> Engine:
    """``engine``, whose PostgreSQL connections, until one has opened, fail with a
    :class:`ConfigurationError` saying what to do (create the database, start the server)
    instead of the driver's error. Later failures stay SQLAlchemy's: a server gone mid-run is an
    outage callers handle (and retry), not a setting to fix.

    Here, not beside the engines: cartagent's and the sandbox's (which shares no code with
    cartagent but this module) both use it."""
    from sqlalchemy import event

    if engine.dialect.name != "postgresql":
        return engine
    connected = threading.Event()

    def on_connect(_dbapi_connection: Any, _record: Any) -> None:
        connected.set()

    def on_error(context: ExceptionContext) -> None:
        # No connection in the context: opening one failed.
        if context.connection is None and not connected.is_set():
            raise ConfigurationError(_connect_failure(engine.url, context.original_exception))

    event.listen(engine, "connect", on_connect)
    event.listen(engine, "handle_error", on_error)
    return engine


def _connect_failure(url: URL, error: BaseException) -> str:
    """Why a connection to the PostgreSQL server at ``url`` failed, and what to do about it."""
    text = str(error)
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    missing = f'database "{url.database}" does not exist'
    if missing in text:
        return f"{missing} on {where}; create it with: {_createdb(url)}"
    # libpq: 'connection to server at "h", port p failed: REASON', a line per address tried.
    tried = [line for line in text.splitlines() if " failed: " in line]
    reason = (tried[-1] if tried else text).rpartition(" failed: ")[2]
    reason = reason.removeprefix("FATAL:").strip() or type(error).__name__
    if "FATAL:" in text:  # the server answered, and refused
        return f"PostgreSQL at {where} refused the connection: {reason}"
    return f"no PostgreSQL server answers at {where} ({reason[:1].lower()}{reason[1:]})"


def _createdb(url: URL) -> str:
    """The ``createdb`` command line that creates the database ``url`` names."""
    words = ["createdb"]
    if url.host:
        words += ["-h", url.host]
    if url.port and url.port != 5432:
        words += ["-p", str(url.port)]
    if url.username:
        words += ["-U", url.username]
    return shlex.join([*words, url.database or ""])
