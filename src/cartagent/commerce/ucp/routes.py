"""UCP's REST binding (``services/shopping/rest.openapi.json``): the business profile at
``/.well-known/ucp`` (each release's at ``/.well-known/ucp/<version>``) and the operations of
:class:`~cartagent.commerce.ucp.service.UcpService` under the settings' ``api_prefix``.

With a simulation secret the testing surface is served too (:mod:`.testing`): ``PUT`` on
orders and ``POST /testing/simulate-shipping/{order_id}`` at the root.

The profile is served with ``Cache-Control: public, max-age=300`` (overview.md: public, at
least 60 s, never ``no-store``) and without redirects.
"""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..requests import http_message
from . import testing
from .service import OPERATIONS, SERVED, UcpCall, UcpService

__all__ = ["ucp_router"]

JSON = "application/json"
PROFILE_CACHE = "public, max-age=300"


def ucp_router(service: UcpService) -> APIRouter:
    router = APIRouter()
    prefix = service.settings.api_prefix.rstrip("/")

    async def run(name: str, request: Request, resource_id: str | None = None) -> Response:
        operation = OPERATIONS[name]
        headers = {key.lower(): value for key, value in request.headers.items()}
        # The caller's token first: an unknown caller's body is never read (the call gets 401).
        reads = operation.method != "GET" and service.authenticates(headers)
        body = await request.body() if reads else None
        message = http_message(request, body or b"")
        call = UcpCall(operation, headers, body, resource_id, message=message)
        answer = await service.answer(call)
        return Response(answer.body, answer.status, answer.headers, media_type=JSON)

    @router.get("/.well-known/ucp", include_in_schema=False)
    def well_known() -> Response:
        return Response(
            orjson.dumps(service.profile()),
            media_type=JSON,
            headers={"Cache-Control": PROFILE_CACHE},
        )

    @router.get("/.well-known/ucp/{version}", include_in_schema=False)
    def well_known_version(version: str) -> Response:
        try:
            profile = service.profile(version)
        except KeyError:
            served = ", ".join(SERVED)
            body = {"code": "not_found", "content": f"no profile for {version[:16]!r}: {served}"}
            return Response(orjson.dumps(body), 404, media_type=JSON)
        return Response(
            orjson.dumps(profile), media_type=JSON, headers={"Cache-Control": PROFILE_CACHE}
        )

    @router.post(f"{prefix}/checkout-sessions")
    async def create_checkout(request: Request) -> Response:
        return await run("create_checkout", request)

    @router.get(prefix + "/checkout-sessions/{checkout_id}")
    async def get_checkout(request: Request, checkout_id: str) -> Response:
        return await run("get_checkout", request, checkout_id)

    @router.put(prefix + "/checkout-sessions/{checkout_id}")
    async def update_checkout(request: Request, checkout_id: str) -> Response:
        return await run("update_checkout", request, checkout_id)

    @router.post(prefix + "/checkout-sessions/{checkout_id}/complete")
    async def complete_checkout(request: Request, checkout_id: str) -> Response:
        return await run("complete_checkout", request, checkout_id)

    @router.post(prefix + "/checkout-sessions/{checkout_id}/cancel")
    async def cancel_checkout(request: Request, checkout_id: str) -> Response:
        return await run("cancel_checkout", request, checkout_id)

    @router.post(f"{prefix}/catalog/search")
    async def search_catalog(request: Request) -> Response:
        return await run("search_catalog", request)

    @router.post(f"{prefix}/catalog/lookup")
    async def lookup_catalog(request: Request) -> Response:
        return await run("lookup_catalog", request)

    @router.post(f"{prefix}/catalog/product")
    async def get_product(request: Request) -> Response:
        return await run("get_product", request)

    @router.get(prefix + "/orders/{order_id}")
    async def get_order(request: Request, order_id: str) -> Response:
        return await run("get_order", request, order_id)

    if service.settings.policy.simulation_secret is not None:

        @router.put(prefix + "/orders/{order_id}")
        async def update_order(request: Request, order_id: str) -> Response:
            return await run("update_order", request, order_id)

        @router.post("/testing/simulate-shipping/{order_id}", include_in_schema=False)
        async def simulate_shipping(request: Request, order_id: str) -> Response:
            secret = request.headers.get(testing.SECRET_HEADER)
            answer = await run_in_threadpool(service.simulate_shipping, order_id, secret)
            return Response(answer.body, answer.status, answer.headers, media_type=JSON)

    return router
