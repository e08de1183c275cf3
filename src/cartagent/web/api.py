"""The assistant's HTTP API: ``create_api(assistant, keys)`` is a FastAPI app serving ``/api``.

Every route but ``/api`` and ``/api/health`` needs ``Authorization: Bearer <key>``; the key's
principal owns the sessions it creates, and nobody else's session exists for it (404, as for an
unknown id).
Turns on one session run one at a time in this process; different sessions run concurrently.
``POST /api/sessions/{id}/messages/stream`` answers with Server-Sent Events (see
:mod:`cartagent.web.sse`). ``GET /api`` says where things are; OpenAPI docs are at ``/docs``
(:mod:`cartagent.web.docs`). Besides API keys, guest tokens
(:mod:`cartagent.web.guest`) authenticate shoppers; the web app's pages and their JSON
(:mod:`cartagent.web.pages`, :mod:`cartagent.web.panels`) are served at ``/``.
"""

# No ``from __future__ import annotations``: FastAPI reads the routes' annotations at run time,
# and they name dependencies local to create_api.

import asyncio
import logging
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import Scope

from .. import __version__
from ..assistant import Assistant, ConversationConflict, Reply, UnknownSession
from ..body_limit import header
from ..errors import ModelError, PayPalError
from .auth import ApiKeys, Principal, Role
from .docs import docs_router
from .failures import NOT_FOUND, failure
from .guest import GuestTokens
from .middleware import AccessLog, BodyLimit
from .pages import pages_router
from .panels import panels_router
from .pictures import pictures_router
from .schemas import (
    ApiIndex,
    Examples,
    FieldProblem,
    Health,
    History,
    Message,
    MessageIn,
    Problem,
    ReplyOut,
    SessionCreated,
    SessionList,
    SessionSummary,
    ValidationProblem,
)
from .session_locks import SessionLocks
from .sse import reply_events

__all__ = ["MAX_BODY_BYTES", "create_api"]

MAX_BODY_BYTES = 16 * 1024

log = logging.getLogger("cartagent.web")

_bearer = HTTPBearer(auto_error=False, description="An API key from the keys file.")
_UNAUTHORIZED = "a valid API key is needed: send 'Authorization: Bearer <key>'"
_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": Problem, "description": "No valid API key."},
    422: {"model": ValidationProblem, "description": "Invalid parameters or body."},
}
_NOT_YOURS = {**_AUTH, 404: {"model": Problem, "description": "No such session (or not yours)."}}
_TURN_FAILURES = {
    **_NOT_YOURS,
    409: {"model": Problem, "description": "Another turn on this session was saved first."},
    413: {"model": Problem, "description": "The body is over 16 KiB."},
    502: {"model": Problem, "description": "The model or the payments service failed."},
}
_STREAM = {
    "description": "Server-Sent Events: domain, delta..., card..., done (or error).",
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def create_api(
    assistant: Assistant,
    keys: ApiKeys,
    *,
    guests: GuestTokens | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    pictures: Path | None = None,
) -> FastAPI:
    """The API app over ``assistant``, for the principals of ``keys`` and the guest shoppers
    of ``guests`` (default: tokens that last as long as this app). ``pictures`` is the catalog's
    folder, whose picture files the products name (none are served without it)."""
    store = assistant.store
    guest_tokens = guests or GuestTokens.random()
    locks = SessionLocks()

    def principal_of(authorization: str | None) -> Principal | None:
        scheme, _, offered = (authorization or "").partition(" ")
        offered = offered.strip()
        if scheme.lower() != "bearer" or not offered:
            return None
        return keys.principal(offered) or guest_tokens.principal(offered)

    def admits(scope: Scope) -> bool:
        """The body limit's check, before a body is read: the same as :func:`caller`'s."""
        return principal_of(header(scope, b"authorization")) is not None

    def caller(
        request: Request,
        # Declared for the docs' Authorize button; the header is read by principal_of.
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    ) -> Principal:
        principal = principal_of(request.headers.get("authorization"))
        if principal is None:
            raise HTTPException(401, _UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
        request.state.principal = principal  # for the access log
        return principal

    async def owned_session(
        session_id: str, principal: Annotated[Principal, Depends(caller)]
    ) -> str:
        try:
            conversation = await asyncio.to_thread(store.load, session_id, history=0)
        except UnknownSession:
            conversation = None
        if conversation is None or conversation.owner != principal.name:
            raise HTTPException(404, NOT_FOUND)
        return session_id

    async def answer(session_id: str, text: str, principal: Principal) -> Reply:
        async with locks.lock(session_id):
            merchant = principal.role is Role.MERCHANT
            return await assistant.turn(session_id, text, merchant=merchant)

    api = APIRouter(prefix="/api")

    @api.get("", response_model=ApiIndex, tags=["health"])
    async def index() -> ApiIndex:
        """What this server is and where its parts are; needs no key."""
        return ApiIndex()

    @api.get("/examples", response_model=Examples, tags=["sessions"])
    async def examples() -> Examples:
        """Requests a shopper could start with on this store; needs no key."""
        return Examples(examples=assistant.examples())

    @api.get("/health", response_model=Health, tags=["health"])
    async def health() -> Health:
        """Answers while the server runs; needs no key."""
        return Health()

    @api.post(
        "/sessions",
        status_code=201,
        response_model=SessionCreated,
        responses=_AUTH,
        tags=["sessions"],
    )
    async def create_session(principal: Annotated[Principal, Depends(caller)]) -> SessionCreated:
        """Start a conversation owned by the caller."""
        session_id = await asyncio.to_thread(assistant.open_session, owner=principal.name)
        return SessionCreated(id=session_id)

    @api.get("/sessions", response_model=SessionList, responses=_AUTH, tags=["sessions"])
    async def list_sessions(
        principal: Annotated[Principal, Depends(caller)],
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> SessionList:
        """The caller's conversations (up to ``limit``), most recently active first."""
        rows = await asyncio.to_thread(store.owned_sessions, principal.name, limit=limit)
        found = [SessionSummary(id=i, created_at=c, updated_at=u) for i, c, u in rows]
        return SessionList(sessions=found)

    @api.get(
        "/sessions/{session_id}/messages",
        response_model=History,
        responses=_NOT_YOURS,
        tags=["messages"],
    )
    async def history(session_id: Annotated[str, Depends(owned_session)]) -> History:
        """Every message of the conversation, with its cards and (for replies) timings."""
        stored = await asyncio.to_thread(store.history, session_id)
        return History(messages=[Message.of(m) for m in stored])

    @api.post(
        "/sessions/{session_id}/messages",
        response_model=ReplyOut,
        responses=_TURN_FAILURES,
        tags=["messages"],
    )
    async def post_message(
        body: MessageIn,
        session_id: Annotated[str, Depends(owned_session)],
        principal: Annotated[Principal, Depends(caller)],
    ) -> ReplyOut:
        """Send a message; the reply has the answer, cards, data and the latency breakdown."""
        return ReplyOut.of(await answer(session_id, body.text, principal))

    @api.post(
        "/sessions/{session_id}/messages/stream",
        response_class=StreamingResponse,
        responses={**_NOT_YOURS, 413: _TURN_FAILURES[413], 200: _STREAM},
        tags=["messages"],
    )
    async def stream_message(
        body: MessageIn,
        session_id: Annotated[str, Depends(owned_session)],
        principal: Annotated[Principal, Depends(caller)],
    ) -> StreamingResponse:
        """Send a message; the reply comes as Server-Sent Events.

        ``domain`` ``{"domain"}``, then ``delta`` ``{"text"}`` events whose texts join to the
        reply, one ``card`` per product card, and ``done`` ``{"domain", "timings", "data"}``.
        A turn that fails sends one ``error`` ``{"status", "detail"}`` event instead.
        """
        events = reply_events(answer(session_id, body.text, principal))
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(events, media_type="text/event-stream", headers=headers)

    app = FastAPI(
        title="cartagent",
        version=__version__,
        summary="The shopping assistant's HTTP API.",
        description="Authenticate with `Authorization: Bearer <key>` (the Authorize button).",
        # FastAPI's own /docs and /redoc load their scripts from a CDN: see cartagent.web.docs.
        docs_url=None,
        redoc_url=None,
    )
    app.include_router(api)
    app.include_router(docs_router(app.title, app.openapi_url or "/openapi.json"))
    # The web app: its JSON routes, then its pages at "/", after the API so that /api/* wins.
    app.include_router(panels_router(assistant, caller, guest_tokens))
    if pictures is not None and assistant.searcher is not None:
        app.include_router(pictures_router(pictures, assistant.searcher.product))
    app.include_router(pages_router())
    _handle_errors(app)
    # A body is read only for a caller with a valid key or guest token: see cartagent.body_limit.
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, admits=admits)
    app.add_middleware(AccessLog, logger=log)  # added last: outermost, so it sees every 413
    return app


def _handle_errors(app: FastAPI) -> None:
    async def turn_failed(request: Request, error: Exception) -> JSONResponse:
        status, detail = failure(error)
        return JSONResponse({"detail": detail}, status_code=status)

    for known in (UnknownSession, ConversationConflict, ModelError, PayPalError, Exception):
        app.add_exception_handler(known, turn_failed)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        errors = [
            FieldProblem(loc=list(e["loc"]), msg=e["msg"], type=e["type"]) for e in error.errors()
        ]
        detail = "; ".join(f"{_where(e.loc)}: {e.msg}" for e in errors)
        problem = ValidationProblem(detail=detail or "invalid request", errors=errors)
        return JSONResponse(problem.model_dump(), status_code=422)


def _where(loc: list[str | int]) -> str:
    """``['body', 'text']`` -> ``text``; a whole body or parameter keeps its place's name."""
    return ".".join(str(part) for part in loc[1:]) or str(loc[0])
