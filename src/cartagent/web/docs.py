"""The API's docs at ``/docs``: Swagger UI served from this package, so the page works offline.

``static/swagger-ui/`` holds swagger-ui-dist 5.35.0 from npm, unchanged: the bundle, its CSS,
its favicon, and its LICENSE, NOTICE and the bundle's third-party licences. FastAPI's page
starts Swagger UI with an inline script; the page is sent with the web app's
Content-Security-Policy, that one script allowed by its SHA-256 hash.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import Response

from .pages import CONTENT_SECURITY_POLICY, HEADERS, HTML, STATIC

__all__ = ["ASSETS_PATH", "SWAGGER_UI", "docs_router", "inline_script_hashes"]

SWAGGER_UI = STATIC / "swagger-ui"
ASSETS_PATH = "/static/swagger-ui"
_TEXT = "text/plain; charset=utf-8"
_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "LICENSE": _TEXT,
    "NOTICE": _TEXT,
    "swagger-ui-bundle.js.LICENSE.txt": _TEXT,
}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def inline_script_hashes(html: str) -> list[str]:
    """The CSP sources (``'sha256-...'``) that allow each inline script of ``html``."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    ]


def docs_router(title: str, openapi_url: str, folder: Path = SWAGGER_UI) -> APIRouter:
    """``/docs`` for the OpenAPI document at ``openapi_url``, and Swagger UI's files, read once
    from ``folder``; only the files named above are served."""
    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{title} - API docs",
        swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
        # Swagger UI would otherwise send the document's URL to validator.swagger.io.
        swagger_ui_parameters={"validatorUrl": None},
    ).body
    allowed = " ".join(["'self'", *inline_script_hashes(bytes(page).decode())])
    policy = CONTENT_SECURITY_POLICY.replace("script-src 'self'", f"script-src {allowed}")
    page_headers = {**HEADERS, "Content-Security-Policy": policy}
    files = {name: (folder / name).read_bytes() for name in _ASSETS}
    tags = {name: '"' + hashlib.sha256(body).hexdigest()[:32] + '"' for name, body in files.items()}
    router = APIRouter(include_in_schema=False)

    @router.get("/docs")
    async def docs() -> Response:
        return Response(page, media_type=HTML, headers=page_headers)

    @router.get(ASSETS_PATH + "/{name}")
    async def asset(name: str, request: Request) -> Response:
        if name not in _ASSETS:
            raise HTTPException(404, "no such file")
        # The bundle is 1.7 MB: "no-cache" revalidates, and an unchanged file is a 304.
        headers = {**HEADERS, "ETag": tags[name]}
        if request.headers.get("if-none-match") == tags[name]:
            return Response(status_code=304, headers=headers)
        return Response(files[name], media_type=_ASSETS[name], headers=headers)

    return router
