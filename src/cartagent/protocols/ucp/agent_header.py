"""The ``UCP-Agent`` request header: an RFC 8941 Dictionary whose ``profile`` member (an sf-string)
is the platform's profile URL (overview.md, "Platform Advertisement on Request").

The release is of two minds about that URL: the OpenAPI parameter says it "MUST point to
/.well-known/ucp", every example in overview.md points elsewhere
(``/profiles/shopping-agent.json``). Only what both agree on is enforced: an absolute ``https``
URL, without credentials or fragment, of bounded length.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MAX_HEADER", "MAX_URL", "Token", "profile_url", "structured_dictionary"]

MAX_HEADER = 4096
MAX_URL = 2048

_KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
_TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~:/0-9A-Za-z]*")
_NUMBER = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,3})?")
_BYTES = re.compile(r":[A-Za-z0-9+/=]*:")


class Token(str):
    """An sf-token (``profile=abc``), told apart from an sf-string (``profile="abc"``)."""

    __slots__ = ()


class _Text:
    """A cursor over a header value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def done(self) -> bool:
        return self.at >= len(self.text)

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def skip(self, chars: str) -> None:
        while self.peek() and self.peek() in chars:
            self.at += 1

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        found = pattern.match(self.text, self.at)
        if found is None:
            raise ValueError(f"expected {what} at character {self.at}")
        self.at = found.end()
        return found.group()


def _string(text: _Text) -> str:
    text.at += 1  # the opening quote
    out: list[str] = []
    while not text.done():
        char = text.peek()
        text.at += 1
        if char == "\\":
            escaped = text.peek()
            if escaped not in ('"', "\\"):
                raise ValueError("a string may only escape a quote or a backslash")
            out.append(escaped)
            text.at += 1
        elif char == '"':
            return "".join(out)
        elif not " " <= char <= "~":
            raise ValueError("a string holds printable ASCII only")
        else:
            out.append(char)
    raise ValueError("a string is not closed")


def _bare_item(text: _Text) -> Any:
    char = text.peek()
    if char == '"':
        return _string(text)
    if char == "?":
        return text.match(re.compile(r"\?[01]"), "a boolean") == "?1"
    if char == ":":
        return text.match(_BYTES, "a byte sequence")
    if char == "-" or char.isdigit():
        number = text.match(_NUMBER, "a number")
        return float(number) if "." in number else int(number)
    return Token(text.match(_TOKEN, "a token"))


def _parameters(text: _Text) -> None:
    while text.peek() == ";":
        text.at += 1
        text.skip(" ")
        text.match(_KEY, "a parameter name")
        if text.peek() == "=":
            text.at += 1
            _bare_item(text)


def _member_value(text: _Text) -> Any:
    if text.peek() != "(":
        value = _bare_item(text)
        _parameters(text)
        return value
    text.at += 1
    items: list[Any] = []
    while True:
        text.skip(" ")
        if text.peek() == ")":
            text.at += 1
            _parameters(text)
            return items
        items.append(_bare_item(text))
        _parameters(text)
        if text.peek() not in (" ", ")"):
            raise ValueError("an inner list is not closed")


def structured_dictionary(header: str) -> dict[str, Any]:
    """An RFC 8941 Dictionary as ``{key: value}`` (parameters are read and dropped).

    Raises ``ValueError`` where the text is not one.
    """
    text = _Text(header.strip(" \t"))
    out: dict[str, Any] = {}
    while not text.done():
        key = text.match(_KEY, "a key")
        if text.peek() == "=":
            text.at += 1
            out[key] = _member_value(text)
        else:
            out[key] = True
            _parameters(text)
        text.skip(" \t")
        if text.done():
            break
        if text.peek() != ",":
            raise ValueError(f"expected ',' at character {text.at}")
        text.at += 1
        text.skip(" \t")
        if text.done():
            raise ValueError("a dictionary may not end with ','")
    return out


def profile_url(header: str | None, *, allow_http: bool = False) -> str:
    """The platform profile URL in a ``UCP-Agent`` header; ``ValueError`` says what is wrong.
    ``allow_http`` (local development and testing) takes plain http URLs too."""
    if not header:
        raise ValueError('the UCP-Agent header (profile="https://...") is required')
    if len(header) > MAX_HEADER:
        raise ValueError(f"the UCP-Agent header is longer than {MAX_HEADER} characters")
    try:
        members = structured_dictionary(header)
    except ValueError as error:
        raise ValueError(f"the UCP-Agent header is not an RFC 8941 dictionary: {error}") from None
    url = members.get("profile")
    if not isinstance(url, str) or isinstance(url, Token):
        raise ValueError('the UCP-Agent header has no profile="..." string')
    if len(url) > MAX_URL:
        raise ValueError(f"the profile URL is longer than {MAX_URL} characters")
    parts = urlsplit(url)
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        raise ValueError("the profile URL must be an absolute https URL")
    if parts.username is not None or parts.fragment:
        raise ValueError("the profile URL may carry neither credentials nor a fragment")
    return url
