"""``/docs`` works offline: Swagger UI from the package under the web app's CSP; ``GET /api``
says where things are."""

from __future__ import annotations

import base64
import hashlib
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cartagent import __version__
from cartagent.web.docs import ASSETS_PATH, SWAGGER_UI

ROOT = Path(__file__).resolve().parents[2]
KINDS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
    "LICENSE": "text/plain",
    "NOTICE": "text/plain",
}


def referenced(html: str) -> list[str]:
    return re.findall(r"""\b(?:src|href)=["']([^"']+)["']""", html)


def test_the_docs_page_references_this_origin_only(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "http://" not in page.text and "https://" not in page.text  # no CDN
    urls = referenced(page.text)
    assert f"{ASSETS_PATH}/swagger-ui-bundle.js" in urls
    assert f"{ASSETS_PATH}/swagger-ui.css" in urls
    assert all(url.startswith("/") and not url.startswith("//") for url in urls)
    assert "url: '/openapi.json'" in page.text


def test_the_docs_page_keeps_the_csp_and_allows_only_its_own_inline_script(
    client: TestClient,
) -> None:
    page = client.get("/docs")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
    assert len(inline) == 1 and "SwaggerUIBundle(" in inline[0]
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    (script_src,) = [d.strip() for d in policy.split(";") if d.strip().startswith("script-src")]
    assert script_src == f"script-src 'self' 'sha256-{digest}'"
    assert page.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(("name", "kind"), sorted(KINDS.items()))
def test_swagger_ui_files_are_served_with_their_type(
    client: TestClient, name: str, kind: str
) -> None:
    response = client.get(f"{ASSETS_PATH}/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(kind)
    assert response.content == (SWAGGER_UI / name).read_bytes()
    assert response.headers["x-content-type-options"] == "nosniff"
    again = client.get(f"{ASSETS_PATH}/{name}", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("name", ["index.html", "..%2F..%2Fapi.py", "swagger-ui.js.map"])
def test_only_the_named_swagger_ui_files_are_served(client: TestClient, name: str) -> None:
    assert client.get(f"{ASSETS_PATH}/{name}").status_code == 404


def test_fastapis_cdn_pages_are_gone(client: TestClient) -> None:
    assert client.get("/redoc").status_code == 404
    assert client.get("/docs/oauth2-redirect").status_code == 404


def test_the_vendored_files_are_package_data_with_their_licence() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["cartagent.web"]
    for path in SWAGGER_UI.iterdir():
        relative = path.relative_to(SWAGGER_UI.parent.parent).as_posix()
        assert any(fnmatch(relative, glob) for glob in globs), relative
    assert "Apache License" in (SWAGGER_UI / "LICENSE").read_text()
    assert "swagger-ui" in (SWAGGER_UI / "NOTICE").read_text()


def test_the_api_index_needs_no_key_and_every_link_answers(client: TestClient) -> None:
    index = client.get("/api")
    assert index.status_code == 200
    body = index.json()
    assert (body["name"], body["version"]) == ("cartagent", __version__)
    links = body["links"]
    assert {"docs", "openapi", "sessions", "shop", "merchant"} <= set(links)
    for name, path in links.items():
        status = client.get(path).status_code
        assert status == (401 if name == "sessions" else 200), (name, path, status)
    assert client.get("/openapi.json").json()["paths"]["/api"]["get"]
