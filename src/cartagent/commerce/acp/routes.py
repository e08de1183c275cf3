"""ACP's REST binding: discovery, the product feed, and the checkout-session operations of
:class:`~cartagent.commerce.acp.service.AcpService` at the spec's paths."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from ...protocols.acp import feed
from . import wire
from .service import OPERATIONS, AcpCall, AcpService

__all__ = ["acp_router"]

JSON = "application/json"


def acp_router(service: AcpService) -> APIRouter:
    router = APIRouter()
    merchant = service.merchant
    settings = service.settings
    started = merchant.clock()

    async def run(name: str, request: Request, session_id: str | None = None) -> Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        # The caller's token first: an unknown caller's body is never read (the call gets 401).
        reads = request.method != "GET" and service.authenticates(headers)
        body = await request.body() if reads else None
        call = AcpCall(OPERATIONS[name], headers, body, session_id)
        answer = await service.answer(call)
        return Response(answer.body, answer.status, answer.headers, media_type=JSON)

    @router.get("/.well-known/acp.json", include_in_schema=False)
    def well_known() -> Response:
        return Response(
            orjson.dumps(wire.discovery(settings.base_url, mcp=settings.mcp_url is not None)),
            media_type=JSON,
        )

    @router.get("/feed/metadata.json", include_in_schema=False)
    def metadata() -> Response:
        return Response(orjson.dumps(feed.feed_metadata(started)), media_type=JSON)

    @router.get("/feed/products.jsonl", include_in_schema=False)
    def products() -> StreamingResponse:
        lines = (orjson.dumps(feed.feed_product(p)) + b"\n" for p in merchant.catalog.products)
        return StreamingResponse(lines, media_type="application/jsonl")

    @router.post("/checkout_sessions")
    async def create(request: Request) -> Response:
        return await run("create", request)

    @router.post("/checkout_sessions/{checkout_session_id}")
    async def update(request: Request, checkout_session_id: str) -> Response:
        return await run("update", request, checkout_session_id)

    @router.get("/checkout_sessions/{checkout_session_id}")
    async def get(request: Request, checkout_session_id: str) -> Response:
        return await run("get", request, checkout_session_id)

    @router.post("/checkout_sessions/{checkout_session_id}/complete")
    async def complete(request: Request, checkout_session_id: str) -> Response:
        return await run("complete", request, checkout_session_id)

    @router.post("/checkout_sessions/{checkout_session_id}/cancel")
    async def cancel(request: Request, checkout_session_id: str) -> Response:
        return await run("cancel", request, checkout_session_id)

    @router.post("/carts")
    async def cart_create(request: Request) -> Response:
        return await run("cart_create", request)

    @router.get("/carts/{cart_id}")
    async def cart_get(request: Request, cart_id: str) -> Response:
        return await run("cart_get", request, cart_id)

    @router.put("/carts/{cart_id}")
    async def cart_update(request: Request, cart_id: str) -> Response:
        return await run("cart_update", request, cart_id)

    @router.post("/carts/{cart_id}/cancel")
    async def cart_cancel(request: Request, cart_id: str) -> Response:
        return await run("cart_cancel", request, cart_id)

    return router
