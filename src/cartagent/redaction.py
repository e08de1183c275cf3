"""Personal data out of logs: e-mail addresses, card-like numbers and phone numbers.

:func:`redact` masks them in a string; :class:`RedactingFilter`, installed on a logging
handler, masks them in every record it passes (message and arguments), so what a shopper
typed, or what a tool returned, never lands in a log file as it was.
"""

from __future__ import annotations

import logging
import re

__all__ = ["RedactingFilter", "install", "redact"]

_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+")
# 13 to 19 digits, optionally grouped by spaces or dashes: every card number length.
_CARD = re.compile(r"(?<![\w-])(?:\d[ -]?){12,18}\d(?![\w-])")
_PHONE = re.compile(r"(?<![\w-])\+?\(?\d{1,4}\)?(?:[ .-]?\(?\d{2,4}\)?){2,4}(?![\w-])")
_STREET = re.compile(
    r"\b\d{1,6}\s+(?:[A-Z][a-z]+\s){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|"
    r"Drive|Dr|Court|Ct|Way|Place|Pl)\b\.?"
)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return "[card]" if _luhn(digits) else match.group(0)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _phone(match: re.Match[str]) -> str:
    if _DATE.fullmatch(match.group(0)):
        return match.group(0)
    digits = re.sub(r"\D", "", match.group(0))
    return (
        "[phone]"
        if 7 <= len(digits) <= 15 and re.search(r"[ .()+-]", match.group(0))
        else match.group(0)
    )


def redact(text: str) -> str:
    """``text`` with e-mail addresses, Luhn-valid card numbers, phone numbers and street
    addresses replaced by ``[email]``, ``[card]``, ``[phone]`` and ``[address]``."""
    text = _EMAIL.sub("[email]", text)
    text = _CARD.sub(_card, text)
    text = _STREET.sub("[address]", text)
    return _PHONE.sub(_phone, text)


class RedactingFilter(logging.Filter):
    """Redacts each record's formatted message (its arguments included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            # Exception texts can quote input too: format them now, redacted.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def install(handler: logging.Handler) -> None:
    """Redact everything ``handler`` emits."""
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())
