"""An agent's ACP client: discover a merchant, read its product feed, run a checkout session.

::

    with AcpClient.discover("http://127.0.0.1:8780", token) as shop:
        session = shop.create([("9612497925", 1)], address=address)
        if shop_user_says_yes(session.total):
            paid = shop.complete(session.id, payment_token)

Each call sends ``API-Version``, the bearer token and, for an agent with a signing secret, the
request's ``Signature``. A POST keeps ONE ``Idempotency-Key`` across its retries (transport
errors, 409 in flight, 503), so a retried completion is answered, never charged twice. A
refusal raises :class:`~cartagent.errors.CheckoutError` with the merchant's code and the
offending field.

The merchant's URL and the ``api_base_url`` its discovery document names are someone else's
say-so: requests go through :func:`~cartagent.outbound.guarded_transport`, and one to a
loopback, private or otherwise non-public address raises ``destination_refused`` unless the
client is made with ``allow_private=True`` (local development, ``--allow-private-urls``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from ..addresses import Address, Contact
from ..catalog.product import Product
from ..errors import CheckoutError
from ..money import Money
from ..outbound import Resolver, system_resolver
from ..paypal import path_segment
from ..protocols.acp.feed import products_from_feed
from ..protocols.acp.schema import API_VERSION
from ..protocols.acp.shapes import fulfillment_details
from ..protocols.acp.signing import sign
from .shop_client import SessionLine, SessionView
from .transport import MAX_FEED, ClosingClient, ProtocolTransport, Reply, malformed

__all__ = ["AcpClient", "parse_json_path", "session_view"]

_PATH_PART = re.compile(r"\.([A-Za-z_][\w]*)|\[(\d+)\]")


def parse_json_path(path: str | None) -> tuple[str | int, ...]:
    """``$.line_items[0].id`` as ``("line_items", 0, "id")``."""
    if not path or not path.startswith("$"):
        return ()
    return tuple(int(index) if index else name for name, index in _PATH_PART.findall(path[1:]))


def session_view(body: dict[str, Any]) -> SessionView:
    """An ACP checkout session answer as a :class:`SessionView`."""
    currency = str(body["currency"]).upper()

    def money(amount: int) -> Money:
        return Money.from_minor(int(amount), currency)

    lines = []
    for line in body.get("line_items", []):
        line_totals = {t["type"]: t["amount"] for t in line.get("totals", [])}
        unit = line.get("unit_amount", line["item"].get("unit_amount", 0))
        lines.append(
            SessionLine(
                item_id=str(line["item"]["id"]),
                name=str(line.get("name") or line["item"].get("name") or line["item"]["id"]),
                quantity=int(line["quantity"]),
                unit_price=money(unit),
                total=money(line_totals.get("total", unit * int(line["quantity"]))),
            )
        )
    return SessionView(
        id=str(body["id"]),
        status=str(body["status"]),
        currency=currency,
        lines=tuple(lines),
        totals={t["type"]: money(t["amount"]) for t in body.get("totals", [])},
        messages=tuple(body.get("messages", [])),
        order=body.get("order"),
        raw=body,
    )


class AcpClient(ClosingClient):
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        signing_secret: str | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        attempts: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
    ) -> None:
        self._transport = ProtocolTransport(
            base_url,
            who="the merchant",
            refusal=_refusal,
            transport=transport,
            timeout=timeout,
            attempts=attempts,
            sleep=sleep,
            allow_private=allow_private,
            resolver=resolver,
        )
        self.base_url = self._transport.base_url
        self._token = token
        self._secret = signing_secret

    @classmethod
    def discover(
        cls,
        url: str,
        token: str,
        *,
        transport: httpx.BaseTransport | None = None,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
        **kwargs: Any,
    ) -> AcpClient:
        """The client for the merchant at ``url``, from its ``/.well-known/acp.json``.

        Raises :class:`CheckoutError` if it has no discovery document or does not speak this
        client's API version (``destination_refused`` if it is at a non-public address).
        """

        def absent(reply: Reply) -> CheckoutError:
            return CheckoutError(
                f"{url} serves no ACP discovery document (HTTP {reply.status})",
                code="not_found",
                status=404,
            )

        merchant = ProtocolTransport(
            url,
            who=url,
            refusal=absent,
            transport=transport,
            timeout=kwargs.get("timeout", 30.0),
            sleep=time.sleep,
            allow_private=allow_private,
            resolver=resolver,
        )
        try:
            reply = merchant.send("GET", "/.well-known/acp.json", attempts=1)
        finally:
            merchant.close()
        document = reply.object()
        if document is None:
            raise malformed("its discovery document is not a JSON object", who=url)
        versions = document.get("protocol", {}).get("supported_versions", [])
        if API_VERSION not in versions:
            raise CheckoutError(
                f"{url} speaks ACP {', '.join(versions) or '(none)'}, not {API_VERSION}",
                code="unsupported_api_version",
            )
        return cls(
            str(document["api_base_url"]),
            token,
            transport=transport,
            allow_private=allow_private,
            resolver=resolver,
            **kwargs,
        )

    def products(self) -> list[Product]:
        """The merchant's product feed as catalog products (variants priced, with stock)."""

        def absent(reply: Reply) -> CheckoutError:
            return CheckoutError(
                f"the merchant's feed answered HTTP {reply.status}",
                code="not_found",
                status=reply.status,
            )

        reply = self._transport.send(
            "GET", "/feed/products.jsonl", attempts=1, limit=MAX_FEED, refusal=absent
        )
        try:
            rows = [orjson.loads(line) for line in reply.body.splitlines() if line.strip()]
        except ValueError:
            raise malformed("its product feed is not JSON lines") from None
        return list(products_from_feed(rows))

    def create(
        self,
        items: Sequence[tuple[str, int]],
        *,
        address: Address | None = None,
        contact: Contact | None = None,
        buyer: dict[str, str] | None = None,
    ) -> SessionView:
        body: dict[str, Any] = {
            "line_items": [{"id": item, "quantity": quantity} for item, quantity in items],
            "currency": "usd",
            "capabilities": {},
        }
        body |= _people(address, contact, buyer)
        return self._session("POST", "/checkout_sessions", body)

    def update(
        self,
        session_id: str,
        *,
        items: Sequence[tuple[str, int]] | None = None,
        address: Address | None = None,
        contact: Contact | None = None,
        shipping_option: str | None = None,
    ) -> SessionView:
        body: dict[str, Any] = _people(address, contact, None)
        if items is not None:
            body["line_items"] = [{"id": item, "quantity": n} for item, n in items]
        if shipping_option is not None:
            body["selected_fulfillment_options"] = [
                {"type": "shipping", "option_id": shipping_option, "item_ids": []}
            ]
        return self._session("POST", f"/checkout_sessions/{path_segment(session_id)}", body)

    def get(self, session_id: str) -> SessionView:
        return self._session("GET", f"/checkout_sessions/{path_segment(session_id)}", None)

    def complete(
        self, session_id: str, payment_token: str, *, buyer: dict[str, str] | None = None
    ) -> SessionView:
        """Pay with a PayPal payment token. Only call this after the buyer said yes to
        :attr:`SessionView.total`: it moves money."""
        body: dict[str, Any] = {
            "payment_data": {
                "handler_id": "paypal",
                "instrument": {
                    "type": "paypal",
                    "credential": {"type": "paypal_payment_token", "token": payment_token},
                },
            }
        }
        if buyer:
            body["buyer"] = buyer
        path = f"/checkout_sessions/{path_segment(session_id)}/complete"
        return self._session("POST", path, body)

    def cancel(self, session_id: str) -> SessionView:
        return self._session("POST", f"/checkout_sessions/{path_segment(session_id)}/cancel", {})

    def _session(self, method: str, path: str, body: dict[str, Any] | None) -> SessionView:
        return session_view(self._send(method, path, body))

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self._token}", "API-Version": API_VERSION}
        if method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())
        content = None if body is None else orjson.dumps(body)
        if content is not None:
            headers["Content-Type"] = "application/json"

        def signed(request: httpx.Request) -> None:
            if self._secret is not None:
                stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
                signature = sign(self._secret, stamp, body)
                request.headers.update({"Timestamp": stamp, "Signature": signature})

        reply = self._transport.send(method, path, content=content, headers=headers, prepare=signed)
        answer = reply.object()
        if answer is None:
            raise malformed("the answer is not a JSON object")
        return answer


def _people(
    address: Address | None, contact: Contact | None, buyer: dict[str, str] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"buyer": buyer} if buyer else {}
    details = fulfillment_details(contact, address)
    if details:
        out["fulfillment_details"] = details
    return out


def _refusal(reply: Reply) -> CheckoutError:
    """A 4xx/5xx answer (ACP's ``{"code", "message", "param"}``) as a CheckoutError."""
    body = reply.object() or {}
    return CheckoutError(
        str(body.get("message") or f"HTTP {reply.status}"),
        code=str(body.get("code") or "error"),
        param=parse_json_path(body.get("param")),
        status=reply.status,
    )
