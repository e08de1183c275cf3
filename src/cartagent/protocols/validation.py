"""A protocol's JSON Schemas as both sides use them: the most relevant way a document breaks its
schema, as a :class:`~cartagent.errors.CheckoutError` whose ``param`` is the path to it, and
paths written as RFC 9535 JSONPath."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CheckoutError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = ["first_problem", "json_path"]


def json_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    """``("line_items", 0, "id")`` as the RFC 9535 JSONPath ``$.line_items[0].id``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def first_problem(checker: Draft202012Validator, body: Any) -> CheckoutError | None:
    """The most relevant way ``body`` breaks ``checker``'s schema, as a :class:`CheckoutError`
    whose ``param`` is the path to it (a missing property's own name included)."""
    from jsonschema.exceptions import best_match  # the validators' own module: loaded

    error = best_match(checker.iter_errors(body))
    if error is None:
        return None
    path = tuple(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = next((key for key in error.validator_value if key not in error.instance), None)
        if missing is not None:
            path = (*path, missing)
    code = "missing" if error.validator == "required" else "invalid"
    return CheckoutError(f"{json_path(path)}: {_said(error)[:300]}", code=code, param=path)


_SECRET_PARTS = frozenset({"credential", "token", "number", "cvc", "password"})


def _said(error: ValidationError) -> str:
    """The schema's complaint, without echoing an object, a list or anything under a
    credential (a refusal must never repeat a card number or a token back)."""
    message = str(error.message)
    secret = not _SECRET_PARTS.isdisjoint(str(part) for part in error.absolute_path)
    if not secret and not isinstance(error.instance, dict | list):
        return message
    shown = repr(error.instance)
    if shown in message:
        return message.replace(shown, "the value")
    if isinstance(error.instance, str) and error.instance in message:
        return f"the value breaks the schema's {error.validator!r} rule"
    return message
