"""The web app's pages: ``/shop`` for shoppers, ``/login`` and ``/merchant`` for the merchant.

Plain HTML, CSS and JavaScript modules from ``static/`` (no build step, no CDN). Every page
and asset is sent with a Content-Security-Policy that allows this origin only (and, for product
pictures, https images) and no inline script or style, so data that slipped into the markup
could not run. The pages talk to the
``/api`` routes with the key or guest token the browser holds; the PayPal approval page is
another origin, reached by navigation.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import RedirectResponse, Response

__all__ = ["CONTENT_SECURITY_POLICY", "HEADERS", "HTML", "STATIC", "pages_router"]

STATIC = Path(__file__).with_name("static")

CONTENT_SECURITY_POLICY = (
    # A catalog's product pictures may live on its own https image host (a CDN).
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # The shop's URL holds its session id on the way back from PayPal: never pass it on.
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_PAGES = {"shop": "shop.html", "merchant": "merchant.html", "login": "login.html"}
_ASSETS = {
    "app.css": "text/css; charset=utf-8",
    "chat.js": "text/javascript; charset=utf-8",
    "shop.js": "text/javascript; charset=utf-8",
    "merchant.js": "text/javascript; charset=utf-8",
    "login.js": "text/javascript; charset=utf-8",
    # uPlot 1.6.31 (MIT, its licence beside it in static/), the dashboard's chart.
    "uplot.iife.min.js": "text/javascript; charset=utf-8",
    "uplot.min.css": "text/css; charset=utf-8",
    # A product's picture where the catalog has none (schemas.ILLUSTRATIONS).
    **{
        f"icon-{name}.svg": "image/svg+xml"
        for name in ("garment", "footwear", "mug", "laptop", "bag", "tag")
    },
}
HTML = "text/html; charset=utf-8"


def pages_router(static: Path = STATIC) -> APIRouter:
    """The pages and their assets, read once from ``static``; only the files named above are
    served, so no request path reaches the file system."""
    files = {name: (static / name).read_bytes() for name in [*_PAGES.values(), *_ASSETS]}
    router = APIRouter(include_in_schema=False)

    def page(name: str) -> Response:
        return Response(files[_PAGES[name]], media_type=HTML, headers=HEADERS)

    @router.get("/")
    async def home() -> RedirectResponse:
        return RedirectResponse("/shop", status_code=303)

    @router.get("/shop")
    async def shop() -> Response:
        return page("shop")

    @router.get("/merchant")
    async def merchant() -> Response:
        return page("merchant")

    @router.get("/login")
    async def login() -> Response:
        return page("login")

    @router.get("/static/{name}")
    async def asset(name: str) -> Response:
        if name not in _ASSETS:
            raise HTTPException(404, "no such file")
        return Response(files[name], media_type=_ASSETS[name], headers=HEADERS)

    return router
