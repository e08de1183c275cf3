"""Personal data never reaches a log as it was typed."""

from __future__ import annotations

import logging

import pytest

from cartagent.redaction import RedactingFilter, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail jamie.rivera@example.com now", "mail [email] now"),
        ("card 4111 1111 1111 1111 please", "card [card] please"),
        ("card 4111-1111-1111-1111", "card [card]"),
        ("card 5555555555554444.", "card [card]."),
        ("call +1 (415) 555-0132 today", "call [phone] today"),
        ("ship to 42 Elm Street, Springfield", "ship to [address], Springfield"),
    ],
)
def test_personal_data_is_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "order 5O190127TN364715T is paid",
        "a t-shirt under 50 in size 42",
        "1234567890123",  # 13 digits that fail the Luhn check are not a card
        "refund 12.96 USD on 2026-11-21",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_log_record_is_redacted_with_its_arguments_and_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("cartagent.test_redaction")
    caplog.handler.addFilter(RedactingFilter())
    try:
        with caplog.at_level(logging.INFO, logger=log.name):
            log.info("turn from %s: %s", "shopper", "bill jamie@example.com")
            try:
                raise ValueError("bad card 4111111111111111")
            except ValueError:
                log.exception("failed")
    finally:
        caplog.handler.filters.clear()
    assert caplog.records[0].getMessage() == "turn from shopper: bill [email]"
    assert "4111111111111111" not in caplog.text and "[card]" in caplog.text
