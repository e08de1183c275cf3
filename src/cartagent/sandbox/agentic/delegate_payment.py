"""ACP's Delegate Payment API: the sandbox as the PSP that vaults a buyer's card for an agent.

Source: the Agentic Commerce Protocol release 2026-04-17 (Apache-2.0, OpenAI and Stripe):
``spec/2026-04-17/openapi/openapi.delegate_payment.yaml``, ``json-schema/schema.delegate_payment
.json`` (shipped unchanged in ``specs/acp/`` with ACP's LICENSE and NOTICE) and
``rfcs/rfc.delegate_payment.md``.

``POST /agentic_commerce/delegate_payment``
    The caller is the agent platform. In the sandbox any sandbox merchant's OAuth2 bearer token
    (``POST /v1/oauth2/token``) acts as a platform; the token it gets is stored under that
    merchant, but only the allowance's merchant may charge it. Headers: ``Authorization``
    (401 ``unauthorized`` without a valid one), ``API-Version: 2026-04-17`` (400
    ``missing_api_version`` / ``unsupported_api_version`` with ``supported_versions``),
    ``Idempotency-Key`` (1 to 255 characters; 400 ``idempotency_key_required``),
    ``Content-Type: application/json``; ``Request-Id`` is echoed (one is made when absent);
    ``Signature`` and ``Timestamp`` are accepted and not verified (the sandbox has no
    out-of-band key exchange). The body is checked against ``DelegatePaymentRequest`` of the
    shipped schema (400), then semantically (422): a Luhn-valid number of 12 to 19 digits
    (network tokens too), ``exp_month`` 01-12 with a four-digit ``exp_year``, given together and
    not past (the caller's sandbox clock), ``cvc`` 3-4 digits, ``display_last4`` and ``iin``
    consistent with the number, ``max_amount`` from 1 to 10^15 minor units, a currency PayPal
    takes, non-empty session and merchant ids, and an ``expires_at`` still ahead. 201 answers
    ``{id: "vt_…", created, metadata}``; ``metadata`` is the request's plus ``merchant_id``,
    ``checkout_session_id`` and ``idempotency_key``.

Negative testing: a request with ``PayPal-Mock-Response: {"mock_application_codes": "<ISSUE>"}``
vaults the card as usual, and every charge of the token is then refused with that issue (the
status ``orders.create``/``capture``/``authorize`` documents for it, ``TRANSACTION_REFUSED`` where
the operation does not list it; ``INTERNAL_SERVER_ERROR`` and the other generic codes as
:mod:`.mocks` answers them): a platform tests a merchant's decline (or outage) path through the
token it hands the agent. The issue must be one ``orders.create`` or ``orders.capture`` documents,
or a generic one (400 ``invalid_card`` otherwise; ``Error.code`` has nothing closer). The header
is not part of the idempotency fingerprint: a replay answers the first token, as it was vaulted.

Card data: the vault keeps the brand (from the number's IIN range, else ``display_brand``),
the last four digits and the expiry, nothing else of the card (no number, CVC, name, billing
address or card metadata); the idempotency record keeps the response and a keyed hash
(HMAC-SHA256 with the sandbox's secret) of the request body, never the body itself. Error
messages name fields, never their values, and nothing here logs a request. Test cards: any
Luhn-valid number vaults (4242424242424242, 4111111111111111, 5555555555554444,
378282246310005 ...); 4000000000000002 vaults and then declines every charge
(``INSTRUMENT_DECLINED``), for testing a merchant's decline path.

Idempotency (RFC §5): keys are scoped to the caller and this endpoint and kept 24 hours of the
caller's sandbox clock. The same key with a semantically equal body (key order and ``1.0``
versus ``1`` do not matter; array order and ``null`` versus absent do) replays the first 201
with ``Idempotent-Replayed: true`` and creates nothing; a different body is 422
``idempotency_conflict``. Only successes are recorded: a refused request wrote nothing and an
equal body is refused the same way again. Requests with one key are serialised by the
database, so the second waits and replays: 409 ``idempotency_in_flight`` is never needed.

Charging (``orders.py`` calls :func:`claim` and :func:`check_charge`): an Orders v2 order whose
``payment_source.token.id`` starts with ``vt_`` (any ``type``) must keep to the allowance, else
422 with one of the issues below, all of which ``checkout_orders_v2`` documents for the
operation and a merchant treats as a decline. When an operation does not document the issue,
``TRANSACTION_REFUSED`` is answered instead (``orders.authorize`` lists no
``INSTRUMENT_DECLINED`` or ``CARD_EXPIRED``).

- ``allowance.merchant_id`` is the charging merchant's sandbox account id (the
  ``payee.merchant_id`` of its orders) or its REST client id; otherwise ``PAYER_CANNOT_PAY``.
- The order pays for the allowance's checkout session: every purchase unit names
  ``allowance.checkout_session_id`` as its ``reference_id`` or ``custom_id`` (a merchant's
  ``commerce.payment`` sets both to its checkout's id); otherwise ``PAYMENT_SOURCE_CANNOT_BE_USED``
  (a token vaulted for session X never pays session Y).
- One order per token (``reason: one_time``, one checkout session): a second order is
  ``MAX_NUMBER_OF_PAYMENT_ATTEMPTS_EXCEEDED``; a ``PayPal-Request-Id`` replay of the first
  create answers the first order as usual. A refused order does not use the token up.
- At or after ``expires_at`` (the charging merchant's sandbox clock): ``INSTRUMENT_DECLINED``;
  past the card's expiry month: ``CARD_EXPIRED``; an unknown ``vt_`` token or the declining
  test card: ``INSTRUMENT_DECLINED``.
- Every purchase unit in the allowance's currency and their sum at most ``max_amount`` (minor
  units per ISO 4217: JPY has none, the others two): ``TRANSACTION_REFUSED``.
- Capture and authorize check expiry, session, currency and amount again, so patching the
  order's amount or references after creating it cannot escape the allowance.

Where the 2026-04-17 release contradicts itself:

- ``Error.code`` enumerates one validation code, ``invalid_card``, and the spec's own 400
  example uses it for a missing field, so every body problem is ``invalid_card`` with
  ``param`` as an RFC 9535 JSONPath (``$.allowance.currency``). Schema violations are 400,
  semantic ones 422 (the OpenAPI's 422 "semantic validation error"; the RFC's §8.2 shows a bad
  expiry as 400).
- The RFC marks ``payment_method.virtual`` required and wants at least one risk signal; the
  schema requires neither, and the schema is followed.
- The RFC speaks of ``API-Version 2025-09-29`` and allows ``missing_api_version`` /
  ``unsupported_api_version`` with a ``supported_versions`` array, which ``Error`` (a closed
  enum, ``additionalProperties: false``) does not; the RFC is followed there, and only
  2026-04-17, the version of the shipped schema, is accepted.
- 401 and 500 follow the OpenAPI's examples where ``Error``'s enums have nothing for them:
  401 is type and code ``unauthorized``; 500 is type ``processing_error`` with code
  ``internal_server_error``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import traceback
from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache
from importlib import resources as package_files
from typing import Any

import orjson
import sqlalchemy as sa
from fastapi import APIRouter, Request
from fastapi.responses import Response
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match

from .. import mocks, spec
from ..amounts import CURRENCIES
from ..api import Call, run_store_work
from ..clock import iso, parse_iso
from ..errors import PayPalError, detail
from ..identity.oauth import merchant_for_token
from ..payments.payment_sources import DECLINING_TEST_CARDS, luhn
from ..responses import json_response
from ..state import Sandbox
from ..store import Row, Tx, dumps, loads, resources

__all__ = [
    "API_VERSION",
    "KIND",
    "PATH",
    "DelegateError",
    "check_charge",
    "claim",
    "delegated_token",
    "router",
    "schema_bundle",
]

log = logging.getLogger("cartagent.sandbox.agentic.delegate_payment")

router = APIRouter()

PATH = "/agentic_commerce/delegate_payment"
API_VERSION = "2026-04-17"
SUPPORTED_VERSIONS = (API_VERSION,)
SCHEMA_FILE = "specs/acp/schema.delegate_payment.json"
KIND = "delegated_payment"
PREFIX = "vt_"
OPERATION = "acp:delegate_payment"  # the idempotency records' operation
KEY_TTL = timedelta(hours=24)
MAX_KEY = 255
MAX_BODY = 64 * 1024
MAX_MINOR_UNITS = 10**15
ORDERS = "checkout_orders_v2"
MOCKABLE = ("orders.create", "orders.capture")  # a vault mock must be an issue of one of these

# Why a delegated token may not pay, and the issue PayPal documents for it (see the docstring).
_ISSUES = {
    "unknown": "INSTRUMENT_DECLINED",
    "declined": "INSTRUMENT_DECLINED",
    "other_merchant": "PAYER_CANNOT_PAY",
    "other_session": "PAYMENT_SOURCE_CANNOT_BE_USED",
    "used": "MAX_NUMBER_OF_PAYMENT_ATTEMPTS_EXCEEDED",
    "expired": "INSTRUMENT_DECLINED",
    "card_expired": "CARD_EXPIRED",
    "currency": "TRANSACTION_REFUSED",
    "over_limit": "TRANSACTION_REFUSED",
}
_FALLBACK_ISSUE = "TRANSACTION_REFUSED"


class DelegateError(Exception):
    """An ACP error: a flat ``{type, code, message, param?}`` object (RFC §2.6, §4.2)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        param: str | None = None,
        kind: str = "invalid_request",
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.kind = kind
        self.extra = extra or {}
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.kind, "code": self.code, "message": self.message}
        if self.param is not None:
            body["param"] = self.param
        return {**body, **self.extra}


def _json_path(path: list[str | int] | tuple[str | int, ...]) -> str:
    """``("risk_signals", 0, "type")`` as ``$.risk_signals[0].type``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _invalid(status: int, message: str, path: list[str | int] | None = None) -> DelegateError:
    param = _json_path(path) if path is not None else None
    return DelegateError(status, "invalid_card", message, param=param)


# the request --------------------------------------------------------------------------------
def _caller(sandbox: Sandbox, headers: Mapping[str, str]) -> str:
    value = headers.get("authorization", "")
    merchant = None
    if value.lower().startswith("bearer "):
        merchant = merchant_for_token(sandbox, value[7:].strip())
    if merchant is None:
        raise DelegateError(
            401,
            "unauthorized",
            "Unauthorized",
            kind="unauthorized",
            headers={"WWW-Authenticate": 'Bearer realm="cartagent sandbox"'},
        )
    return merchant


def _check_version(headers: Mapping[str, str]) -> None:
    version = headers.get("api-version", "").strip()
    supported = {"supported_versions": list(SUPPORTED_VERSIONS)}
    if not version:
        raise DelegateError(
            400, "missing_api_version", "API-Version header is required", extra=supported
        )
    if version not in SUPPORTED_VERSIONS:
        raise DelegateError(
            400,
            "unsupported_api_version",
            f"API-Version {version[:40]!r} is not supported",
            extra=supported,
        )


def _idempotency_key(headers: Mapping[str, str]) -> str:
    key = headers.get("idempotency-key")
    if key is None or not key.strip():
        raise DelegateError(400, "idempotency_key_required", "Idempotency-Key header is required")
    if len(key) > MAX_KEY:
        raise DelegateError(
            400,
            "idempotency_key_required",
            f"Idempotency-Key must be at most {MAX_KEY} characters",
        )
    return key


def _mock_issue(header: str | None) -> str | None:
    """The issue a ``PayPal-Mock-Response`` header asks every charge of the token to fail with
    (see the module), or ``None`` without the header."""
    if header is None or not header.strip():
        return None
    try:
        code = orjson.loads(header)["mock_application_codes"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        code = None
    known = any(code in mocks.codes_for(f"{ORDERS}:{op}") for op in MOCKABLE)
    if not isinstance(code, str) or not (known or code in mocks.GENERIC):
        raise _invalid(
            400,
            'PayPal-Mock-Response must be {"mock_application_codes": "<ISSUE>"} with an issue '
            "orders.create or orders.capture documents",
        )
    return code


def _parse(raw: bytes, content_type: str) -> dict[str, Any]:
    if "json" not in content_type.lower():
        raise _invalid(400, "Content-Type must be application/json")
    if len(raw) > MAX_BODY:
        raise _invalid(400, f"The request body is over {MAX_BODY} bytes")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _invalid(400, "The request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _invalid(400, "The request body must be a JSON object", [])
    return body


# the schema ---------------------------------------------------------------------------------
@cache
def schema_bundle() -> dict[str, Any]:
    """The shipped ``schema.delegate_payment.json`` (ACP 2026-04-17)."""
    text = package_files.files("cartagent.sandbox").joinpath(SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)


def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return _RFC3339.match(value) is not None and bool(parse_iso(value))


_FORMATS = FormatChecker([])
_FORMATS.checks("date-time", raises=ValueError)(_is_datetime)


@cache
def _validator() -> Draft202012Validator:
    schema = {**schema_bundle(), "$ref": "#/$defs/DelegatePaymentRequest"}
    return Draft202012Validator(schema, format_checker=_FORMATS)


def _schema_problem(body: dict[str, Any]) -> DelegateError | None:
    """The most relevant way ``body`` breaks the schema, worded without the offending value
    (it may be card data)."""
    error: ValidationError | None = best_match(_validator().iter_errors(body))
    if error is None:
        return None
    path: list[str | int] = list(error.absolute_path)
    kind, expected = error.validator, error.validator_value
    if kind == "required" and isinstance(error.instance, dict):
        path.append(next((k for k in expected if k not in error.instance), ""))
        return _invalid(400, f"{_json_path(path)} is required", path)
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        path.append(next((str(k)[:64] for k in error.instance if k not in known), ""))
        return _invalid(400, f"{_json_path(path)} is not a field of this request", path)
    where = _json_path(path)
    if kind == "type":
        message = f"{where} must be of type {expected}"
    elif kind == "enum":
        message = f"{where} must be one of: {', '.join(map(str, expected))}"
    elif kind == "const":
        message = f"{where} must be {expected!r}"
    elif kind in ("maxLength", "minLength"):
        bound = "most" if kind == "maxLength" else "least"
        message = f"{where} must be at {bound} {expected} characters"
    elif kind == "pattern":
        message = f"{where} must match {expected}"
    elif kind == "format":
        message = f"{where} must be an RFC 3339 date-time"
    else:
        message = f"{where} is invalid"
    return _invalid(400, message, path)


# the card and the allowance -----------------------------------------------------------------
def _brand(number: str) -> str | None:
    """The card network the number's IIN belongs to (the common ranges)."""
    two, three, four = int(number[:2]), int(number[:3]), int(number[:4])
    if number.startswith("4"):
        return "visa"
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return "mastercard"
    if two in (34, 37):
        return "amex"
    if four == 6011 or two == 65 or 644 <= three <= 649:
        return "discover"
    if 3528 <= four <= 3589:
        return "jcb"
    if two in (36, 38, 39) or 300 <= three <= 305:
        return "diners"
    if two == 62:
        return "unionpay"
    return None


def _card(method: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Check the card; what the vault keeps of it: brand, last four digits and expiry."""
    number = method["number"]
    if not re.fullmatch(r"[0-9]{12,19}", number, re.ASCII) or not luhn(number):
        raise _invalid(422, "Invalid card number", ["payment_method", "number"])
    month, year = method.get("exp_month"), method.get("exp_year")
    if (month is None) != (year is None):
        missing = "exp_year" if year is None else "exp_month"
        raise _invalid(
            422, "exp_month and exp_year must be given together", ["payment_method", missing]
        )
    if month is not None and year is not None:
        if not re.fullmatch(r"0?[1-9]|1[0-2]", month, re.ASCII):
            raise _invalid(422, "Invalid card expiration month", ["payment_method", "exp_month"])
        if not re.fullmatch(r"[0-9]{4}", year, re.ASCII):
            raise _invalid(422, "Invalid card expiration year", ["payment_method", "exp_year"])
        if (int(year), int(month)) < (now.year, now.month):
            raise _invalid(422, "The card has expired", ["payment_method", "exp_year"])
    cvc = method.get("cvc")
    if cvc is not None and not re.fullmatch(r"[0-9]{3,4}", cvc, re.ASCII):
        raise _invalid(422, "Invalid card verification code", ["payment_method", "cvc"])
    last4 = method.get("display_last4")
    if last4 is not None and last4 != number[-4:]:
        raise _invalid(
            422, "display_last4 does not match the card number", ["payment_method", "display_last4"]
        )
    iin = method.get("iin")
    if iin is not None and not (iin.isascii() and iin.isdigit() and number.startswith(iin)):
        raise _invalid(422, "iin does not match the card number", ["payment_method", "iin"])
    display = method.get("display_brand")
    card: dict[str, Any] = {
        "brand": _brand(number) or (display.strip().lower()[:32] if display else "unknown"),
        "last4": number[-4:],
    }
    if month is not None and year is not None:
        card["exp_month"] = f"{int(month):02d}"
        card["exp_year"] = year
    return card


def _allowance(allowance: dict[str, Any], now: datetime) -> dict[str, Any]:
    max_amount = int(allowance["max_amount"])  # the schema allows 2000.0 for 2000
    if not 1 <= max_amount <= MAX_MINOR_UNITS:
        raise _invalid(
            422,
            f"max_amount must be from 1 to {MAX_MINOR_UNITS} minor units",
            ["allowance", "max_amount"],
        )
    if allowance["currency"].upper() not in CURRENCIES:
        raise _invalid(422, "The currency is not supported", ["allowance", "currency"])
    for name in ("checkout_session_id", "merchant_id"):
        if not allowance[name].strip():
            raise _invalid(422, f"{name} must not be empty", ["allowance", name])
    if parse_iso(allowance["expires_at"]) <= now:
        raise _invalid(422, "The allowance has already expired", ["allowance", "expires_at"])
    return {**allowance, "max_amount": max_amount}


# idempotency --------------------------------------------------------------------------------
def _canonical(value: Any) -> Any:
    """``value`` with integral floats as integers: ``1.0`` and ``1`` are the same request."""
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _fingerprint(secret: bytes, body: dict[str, Any]) -> str:
    """A keyed hash of the body's canonical JSON: comparable, and no card data at rest."""
    canonical = orjson.dumps(_canonical(body), option=orjson.OPT_SORT_KEYS)
    return hmac.new(secret, canonical, hashlib.sha256).hexdigest()


def _vault(
    sandbox: Sandbox, caller: str, key: str, body: dict[str, Any], mock: str | None = None
) -> tuple[dict[str, Any], bool]:
    """Replay the key's first answer or vault the card; (response body, replayed)."""
    now = sandbox.now(caller)
    request_key = hashlib.sha256(key.encode()).hexdigest()  # keys may exceed the column
    fingerprint = _fingerprint(sandbox.token_key, body)
    with sandbox.store.transaction(caller) as tx:
        tx.lock_key(OPERATION, request_key)
        found = tx.replay(OPERATION, request_key, now)
        if found is not None:
            recorded = loads(found[1])
            if not hmac.compare_digest(recorded["fingerprint"], fingerprint):
                raise DelegateError(
                    422,
                    "idempotency_conflict",
                    "Idempotency-Key has already been used with a different request body",
                )
            replayed: dict[str, Any] = recorded["response"]
            return replayed, True
        problem = _schema_problem(body)
        if problem is not None:
            raise problem
        response = _tokenize(sandbox, tx, body, key, now, mock)
        record = dumps({"fingerprint": fingerprint, "response": response})
        tx.remember(OPERATION, request_key, 201, record, now + KEY_TTL)
    return response, False


def _tokenize(
    sandbox: Sandbox, tx: Tx, body: dict[str, Any], key: str, now: datetime, mock: str | None
) -> dict[str, Any]:
    method = body["payment_method"]
    card = _card(method, now)
    allowance = _allowance(body["allowance"], now)
    token_id = PREFIX + sandbox.ids.paypal17()
    metadata = {
        **body["metadata"],
        "merchant_id": allowance["merchant_id"],
        "checkout_session_id": allowance["checkout_session_id"],
        "idempotency_key": key,
    }
    record: dict[str, Any] = {
        "id": token_id,
        "created": iso(now),
        "allowance": allowance,
        "card": card,
        "risk_signals": body["risk_signals"],
        "metadata": metadata,
        "used_by": None,
    }
    if method["number"] in DECLINING_TEST_CARDS:
        record["declines"] = True
    if mock is not None:
        record["mock"] = mock
    tx.insert(KIND, token_id, record, now=now, status="ACTIVE")
    return {"id": token_id, "created": record["created"], "metadata": metadata}


@router.post(PATH)
async def delegate_payment(request: Request) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    headers = {k.lower(): v for k, v in request.headers.items()}
    answer = {"Request-Id": headers.get("request-id") or f"req_{sandbox.ids.debug_id()}"}
    try:
        caller = _caller(sandbox, headers)
        _check_version(headers)
        key = _idempotency_key(headers)
        mock = _mock_issue(headers.get("paypal-mock-response"))
        body = _parse(await request.body(), headers.get("content-type", ""))
        response, replayed = await run_store_work(sandbox, _vault, sandbox, caller, key, body, mock)
    except DelegateError as error:
        return json_response(error.body(), error.status, {**answer, **error.headers})
    except Exception as error:
        # The type and where, not the message: it could carry what the request held.
        frames = traceback.extract_tb(error.__traceback__)
        at = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
        log.error("delegate_payment failed: %s at %s", type(error).__name__, at)
        failure = DelegateError(
            500, "internal_server_error", "Internal server error", kind="processing_error"
        )
        return json_response(failure.body(), 500, answer)
    if replayed:
        answer["Idempotent-Replayed"] = "true"
    return json_response(response, 201, answer)


# charging a delegated token with Orders v2 --------------------------------------------------
def delegated_token(source: Mapping[str, Any] | None) -> str | None:
    """The ``vt_`` token an order's ``payment_source`` names, if it names one."""
    token = (source or {}).get("token")
    if isinstance(token, dict):
        token_id = token.get("id")
        if isinstance(token_id, str) and token_id.startswith(PREFIX):
            return token_id
    return None


_OWNER = sa.select(resources.c.merchant_id).where(
    resources.c.kind == KIND, resources.c.id == sa.bindparam("rid")
)


def _find(tx: Tx, token_id: str, *, lock: bool) -> Row | None:
    """The vaulted token, whichever platform vaulted it (locked on PostgreSQL when asked)."""
    owner = tx.conn.execute(_OWNER, {"rid": token_id}).scalar()
    if owner is None:
        return None
    return tx.for_merchant(str(owner)).get(KIND, token_id, lock=lock)


def _refusal(action: str, reason: str, token_id: str | None) -> PayPalError:
    issue = _ISSUES[reason]
    status, _ = spec.documented_issues(f"{ORDERS}:orders.{action}").get(issue, (0, []))
    if status != 422:
        issue = _FALLBACK_ISSUE
    field = "/payment_source/token/id" if token_id is not None else None
    return PayPalError(422, details=[detail(issue, field=field, value=token_id)])


def _mocked(action: str, issue: str, token_id: str | None) -> PayPalError:
    """The refusal a token vaulted with ``PayPal-Mock-Response`` answers each charge with: the
    mocked issue as :mod:`.mocks` answers it where ``orders.<action>`` can return it, else
    ``TRANSACTION_REFUSED``."""
    op = f"{ORDERS}:orders.{action}"
    if issue in mocks.codes_for(op) or issue in mocks.GENERIC:
        return mocks.mocked_error(op, orjson.dumps({"mock_application_codes": issue}).decode())
    texts = spec.documented_issues(op).get(_FALLBACK_ISSUE, (0, []))[1]
    field = "/payment_source/token/id" if token_id is not None else None
    found = detail(_FALLBACK_ISSUE, texts[0] if texts else None, field=field, value=token_id)
    return PayPalError(422, details=[found])


def _minor_units(value: Decimal, currency: str) -> Decimal:
    # ISO 4217 minor units (what ACP's max_amount counts), not PayPal's decimals: HUF and TWD
    # have two in ISO 4217 although PayPal takes whole amounts only.
    return value.scaleb(0 if currency == "JPY" else 2)


def _check_allowance(
    action: str,
    token: dict[str, Any],
    units: list[dict[str, Any]],
    now: datetime,
    token_id: str | None,
) -> None:
    allowance = token["allowance"]
    if token.get("mock"):
        raise _mocked(action, token["mock"], token_id)
    if token.get("declines"):
        raise _refusal(action, "declined", token_id)
    if now >= parse_iso(allowance["expires_at"]):
        raise _refusal(action, "expired", token_id)
    card = token["card"]
    if "exp_year" in card and (now.year, now.month) > (
        int(card["exp_year"]),
        int(card["exp_month"]),
    ):
        raise _refusal(action, "card_expired", token_id)
    session = allowance["checkout_session_id"]
    if not units or any(session not in (u.get("reference_id"), u.get("custom_id")) for u in units):
        raise _refusal(action, "other_session", token_id)
    currency = allowance["currency"].upper()
    total = Decimal(0)
    for unit in units:
        amount = unit["amount"]
        if amount["currency_code"] != currency:
            raise _refusal(action, "currency", token_id)
        total += Decimal(amount["value"])
    if _minor_units(total, currency) > allowance["max_amount"]:
        raise _refusal(action, "over_limit", token_id)


def _may_charge(call: Call, merchant_ref: str) -> bool:
    if merchant_ref == call.merchant_id:
        return True
    merchant = call.sandbox.merchant(call.merchant_id)
    return merchant is not None and merchant_ref == merchant.client_id


def claim(
    call: Call,
    tx: Tx,
    source: Mapping[str, Any] | None,
    units: list[dict[str, Any]],
    order_id: str,
) -> None:
    """Before order ``order_id`` is created: if ``source`` is a delegated token, check it may pay
    ``units`` for this merchant now and mark it used by the order; PayPal's 422 otherwise."""
    token_id = delegated_token(source)
    if token_id is None:
        return
    row = _find(tx, token_id, lock=True)
    if row is None:
        raise _refusal("create", "unknown", token_id)
    token = row.data
    if not _may_charge(call, token["allowance"]["merchant_id"]):
        raise _refusal("create", "other_merchant", token_id)
    if token.get("used_by"):
        raise _refusal("create", "used", token_id)
    _check_allowance("create", token, units, call.now, token_id)
    token["used_by"] = {
        "order_id": order_id,
        "merchant_id": call.merchant_id,
        "time": iso(call.now),
    }
    tx.update(KIND, token_id, token, now=call.now, status="USED")


def check_charge(call: Call, tx: Tx, order: Row, action: str) -> None:
    """Before an order is captured or authorized (``action``): if a delegated token pays for it,
    the allowance must still hold for the order as it is now (its amount may have been
    patched); PayPal's 422 otherwise."""
    token_id = delegated_token(order.data.get("payment_source"))
    if token_id is None:
        return
    row = _find(tx, token_id, lock=False)
    if row is None or (row.data.get("used_by") or {}).get("order_id") != order.id:
        raise _refusal(action, "unknown", None)
    _check_allowance(action, row.data, order.data["purchase_units"], call.now, None)
