"""PayPal Cart API v1's REST binding: the four operations of
:class:`~cartagent.commerce.paypal_cart.service.PayPalCartService` at the spec's paths
(``sdk.gen.ts``), relative to where the router is mounted (PayPal's examples use
``/api/paypal/v1``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from .service import PayPalCartService

__all__ = ["paypal_cart_router"]

JSON = "application/json"


def paypal_cart_router(service: PayPalCartService) -> APIRouter:
    router = APIRouter()

    async def run(operation: str, request: Request, cart_id: str | None = None) -> Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        # The caller's token first: an unknown caller's body is never read (the call gets 401).
        reads = request.method != "GET" and await run_in_threadpool(
            service.authorizes, headers.get("authorization")
        )
        body = await request.body() if reads else None
        answer = await run_in_threadpool(service.answer, operation, headers, body, cart_id)
        return Response(answer.encoded(), answer.status, answer.headers, media_type=JSON)

    @router.post("/merchant-cart")
    async def create_cart(request: Request) -> Response:
        return await run("create", request)

    @router.get("/merchant-cart/{cart_id}")
    async def get_cart(request: Request, cart_id: str) -> Response:
        return await run("get", request, cart_id)

    @router.put("/merchant-cart/{cart_id}")
    async def update_cart(request: Request, cart_id: str) -> Response:
        return await run("update", request, cart_id)

    @router.post("/merchant-cart/{cart_id}/checkout")
    async def complete_checkout(request: Request, cart_id: str) -> Response:
        return await run("checkout", request, cart_id)

    return router
