"""The HTTP API's request and response bodies (they make the OpenAPI schema at ``/docs``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from .. import __version__
from ..assistant import Domain, ProductCard, Reply, StoredMessage
from ..catalog import is_web_address

__all__ = [
    "ApiIndex",
    "Card",
    "FieldProblem",
    "Health",
    "History",
    "Message",
    "MessageIn",
    "Problem",
    "ReplyOut",
    "SessionCreated",
    "SessionList",
    "SessionSummary",
    "ValidationProblem",
]


_SURROGATE = re.compile(r"[\ud800-\udfff]")


class MessageIn(BaseModel):
    """What the user says."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The user's message (the assistant reads up to 2,000 chars).")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise PydanticCustomError("empty_text", "must not be empty")
        return text

    @field_validator("text")
    @classmethod
    def _unicode(cls, text: str) -> str:
        if _SURROGATE.search(text):
            # JSON's "\ud800" escape decodes to a lone surrogate: no UTF-8 text, so nothing
            # could store or answer it.
            raise PydanticCustomError(
                "lone_surrogate",
                "must be valid Unicode text: it holds a lone surrogate (a \\ud800-\\udfff "
                "escape without its pair)",
            )
        return text


class Card(BaseModel):
    """A product as shown: the variant that fits the request and its price."""

    id: str
    title: str
    variant_id: str | None
    options: dict[str, str]
    price: str | None = Field(description="Exact decimal, e.g. '50.88'.")
    currency: str | None
    available: bool
    rank: int = Field(description="Position in the list it was shown in, from 1.")
    breaks: list[str] = Field(
        default_factory=list,
        description="Empty for a match; for a near miss, what it does not satisfy "
        "(e.g. '0.88 USD over your limit of 50 USD').",
    )
    category: str | None = Field(default=None, description="The product's category, e.g. 'Mugs'.")
    illustration: str = Field(
        default="tag",
        description="The picture to show where the catalog has none: /static/icon-<this>.svg.",
    )
    image: str | None = Field(
        default=None,
        description="The catalog's picture of it: an https address, or this API's "
        "/api/products/{id}/image for a file of the catalog; null where there is none.",
    )

    @classmethod
    def of(cls, card: ProductCard | Mapping[str, Any]) -> Card:
        data = dict(card.to_json() if isinstance(card, ProductCard) else card)
        data["illustration"] = illustration(str(data.get("category") or ""), str(data["title"]))
        data["image"] = picture_address(str(data["id"]), data.get("image"))
        return cls.model_validate(data)


def picture_address(product_id: str, image: Any) -> str | None:
    """Where a page loads a product's picture from: an https address as it is, a catalog file
    through this API; ``None`` for none, or for a plain-http address (a page served over https
    would refuse it, and it would tell the network what the shopper looks at)."""
    if not isinstance(image, str) or not image:
        return None
    if is_web_address(image):
        return image if image.lower().startswith("https://") else None
    return f"/api/products/{quote(product_id, safe='')}/image"


ILLUSTRATIONS = (
    ("footwear", ("shoe", "boot", "sneaker", "sandal", "slipper", "heel")),
    ("garment", ("shirt", "tee", "hoodie", "jacket", "coat", "sweater", "dress", "pant", "jean")),
    ("mug", ("mug", "cup", "kettle", "bottle", "coffee", "tea")),
    ("laptop", ("laptop", "computer", "tablet", "monitor", "phone", "headphone", "speaker")),
    ("bag", ("bag", "backpack", "luggage", "suitcase", "wallet", "purse")),
)
"""Pictures by the words of a category (or, without one, a title); ``tag`` for the rest."""


def illustration(category: str, title: str) -> str:
    """Which of the shop's pictures stands for a product: its category's, else its title's."""
    for words in (category.casefold(), title.casefold()):
        for picture, stems in ILLUSTRATIONS:
            if words and any(stem in words for stem in stems):
                return picture
    return "tag"


Timings = dict[str, float]
_TIMINGS = "Milliseconds per stage: route, understand, retrieve, tools, respond, and total."


class ReplyOut(BaseModel):
    """The assistant's answer to one message."""

    text: str
    domain: Domain | None = Field(description="null when the input was refused unrouted.")
    cards: list[Card]
    data: dict[str, Any] = Field(description="What the specialist keeps beside the cards.")
    timings: Timings = Field(description=_TIMINGS)

    @classmethod
    def of(cls, reply: Reply) -> ReplyOut:
        return cls(
            text=reply.text,
            domain=reply.domain,
            cards=[Card.of(c) for c in reply.cards],
            data=dict(reply.data),
            timings=dict(reply.timings),
        )


class Message(BaseModel):
    """A stored message of a conversation."""

    role: Literal["user", "assistant"]
    text: str
    domain: Domain | None
    cards: list[Card]
    timings: Timings = Field(description=_TIMINGS + " Empty for the user's messages.")
    created_at: datetime | None
    added: bool = Field(
        default=False, description="Whether it confirms an addition to the cart (its card)."
    )
    approve_url: str | None = Field(
        default=None, description="The PayPal approval link its text gives, if any."
    )

    @classmethod
    def of(cls, message: StoredMessage) -> Message:
        return cls(
            role=message.role,
            text=message.text,
            domain=message.domain,
            cards=[Card.of(c) for c in message.payload.get("cards", ())],
            timings=dict(message.timings),
            created_at=message.created_at,
            added=message.payload.get("added") is True,
            approve_url=_approve_url(message.payload),
        )


def _approve_url(payload: Mapping[str, Any]) -> str | None:
    order = payload.get("order")
    url = order.get("approve_url") if isinstance(order, Mapping) else None
    return url if isinstance(url, str) else None


class History(BaseModel):
    messages: list[Message] = Field(description="Oldest first.")


class SessionCreated(BaseModel):
    id: str


class SessionSummary(BaseModel):
    id: str
    created_at: datetime
    updated_at: datetime


class SessionList(BaseModel):
    sessions: list[SessionSummary] = Field(description="Most recently active first.")


class Problem(BaseModel):
    """Why a request failed."""

    detail: str


class FieldProblem(BaseModel):
    loc: list[str | int] = Field(description="Where: e.g. ['body', 'text'].")
    msg: str
    type: str


class ValidationProblem(Problem):
    """The request body or a parameter is invalid; ``detail`` says what, ``errors`` where."""

    errors: list[FieldProblem]


class Examples(BaseModel):
    """``GET /api/examples``: requests a shopper could start with, made from the store's
    catalog (what it sells, its most stocked kinds, a policy)."""

    examples: list[str]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str = __version__


class ApiIndex(BaseModel):
    """``GET /api``: this server and where its parts are (paths on this origin)."""

    name: Literal["cartagent"] = "cartagent"
    version: str = __version__
    links: dict[str, str] = Field(
        default_factory=lambda: {
            "docs": "/docs",
            "openapi": "/openapi.json",
            "health": "/api/health",
            "sessions": "/api/sessions",
            "shop": "/shop",
            "merchant": "/merchant",
        }
    )
