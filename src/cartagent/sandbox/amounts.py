"""Money arithmetic for the sandbox, kept apart from the client's own on purpose.

The sandbox is the oracle the client is tested against, so it re-derives PayPal's rules itself:
``Decimal`` values, the currency's minor units, half-up rounding.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from .errors import invalid_request, unprocessable

# ISO 4217 codes PayPal accepts; the value is the number of decimal places PayPal allows.
CURRENCIES: dict[str, int] = {
    "AUD": 2, "BRL": 2, "CAD": 2, "CNY": 2, "CZK": 2, "DKK": 2, "EUR": 2, "HKD": 2, "HUF": 0,
    "ILS": 2, "JPY": 0, "MYR": 2, "MXN": 2, "TWD": 0, "NZD": 2, "NOK": 2, "PHP": 2, "PLN": 2,
    "GBP": 2, "RUB": 2, "SGD": 2, "SEK": 2, "CHF": 2, "THB": 2, "USD": 2,
}  # fmt: skip

MAX_VALUE = Decimal("9999999.99")


def quantum(currency: str) -> Decimal:
    return Decimal(1).scaleb(-CURRENCIES[currency])


def round_money(value: Decimal, currency: str) -> Decimal:
    return value.quantize(quantum(currency), rounding=ROUND_HALF_UP)


def fmt(value: Decimal, currency: str) -> str:
    return str(round_money(value, currency))


def money(value: Decimal, currency: str) -> dict[str, str]:
    return {"currency_code": currency, "value": fmt(value, currency)}


def check_currency(currency: object, field: str, issue: str = "CURRENCY_NOT_SUPPORTED") -> str:
    if not isinstance(currency, str) or currency not in CURRENCIES:
        raise unprocessable(
            issue,
            "Currency code is invalid or is not currently supported.",
            field=field,
            value=str(currency),
        )
    return currency


def parse_amount(
    obj: object,
    field: str,
    *,
    currency: str | None = None,
    unsupported_issue: str = "CURRENCY_NOT_SUPPORTED",
    mismatch_issue: str = "CURRENCY_MISMATCH",
) -> tuple[Decimal, str]:
    """Read a ``{currency_code, value}`` object, checking PayPal's precision and range rules."""
    if not isinstance(obj, dict):
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field=field)
    code = check_currency(obj.get("currency_code"), f"{field}/currency_code", unsupported_issue)
    if currency is not None and code != currency:
        raise unprocessable(
            mismatch_issue,
            "Should have same currency code across all the amount objects.",
            field=f"{field}/currency_code",
            value=code,
        )
    raw = obj.get("value")
    if not isinstance(raw, str):
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field=f"{field}/value")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=f"{field}/value", value=raw
        ) from None
    if not value.is_finite() or value < 0:
        raise unprocessable(
            "CANNOT_BE_NEGATIVE",
            "Must be greater than or equal to 0.",
            field=f"{field}/value",
            value=raw,
        )
    if value > MAX_VALUE:
        raise unprocessable(
            "MAX_VALUE_EXCEEDED",
            "Should be less than or equal to 9999999.99.",
            field=f"{field}/value",
            value=raw,
        )
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > CURRENCIES[code]:
        raise unprocessable(
            "DECIMAL_PRECISION",
            "If the currency supports decimals, only two decimal place precision is supported.",
            field=f"{field}/value",
            value=raw,
        )
    return value, code
