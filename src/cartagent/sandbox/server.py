"""Running the sandbox under uvicorn."""

from __future__ import annotations

import os
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from .app import create_app, ensure_merchant, open_sandbox
from .engine import DEFAULT_POOL_SIZE

_ENV_DB = "CARTAGENT_SANDBOX_WORKER_DB"
_ENV_POOL = "CARTAGENT_SANDBOX_WORKER_POOL"
_ENV_CALLS = "CARTAGENT_SANDBOX_WORKER_DB_CALLS"
_ENV_PRIVATE = "CARTAGENT_SANDBOX_WORKER_PRIVATE_WEBHOOKS"


def app_for_worker() -> FastAPI:
    """Factory uvicorn calls in each worker process when ``workers > 1``."""
    sandbox = open_sandbox(
        os.environ[_ENV_DB],
        pool_size=int(os.environ[_ENV_POOL]),
        db_calls=os.environ[_ENV_CALLS],
        allow_private_webhooks=os.environ.get(_ENV_PRIVATE) == "1",
    )
    return create_app(sandbox, deliver_webhooks=True)


def serve(
    *,
    host: str,
    port: int,
    db_url: str,
    client_id: str,
    client_secret: str,
    seed_data: Path | None = None,
    workers: int = 1,
    pool_size: int = DEFAULT_POOL_SIZE,
    db_calls: str = "auto",
    log_level: str = "warning",
    allow_private_webhooks: bool = False,
) -> None:
    """Serve the sandbox on ``db_url``, first loading the tau-bench store in ``seed_data``
    (``allow_private_webhooks``: see :func:`~.app.open_sandbox`)."""
    sandbox = open_sandbox(
        db_url,
        pool_size=pool_size,
        db_calls=db_calls,
        allow_private_webhooks=allow_private_webhooks,
    )
    ensure_merchant(sandbox, client_id, client_secret)
    if seed_data is not None:
        from .seed import seed_store

        summary = seed_store(
            db_url,
            client_id,
            client_secret,
            data_dir=seed_data,
            progress=True,
            base_url=f"http://{host}:{port}",
        )
        print(summary, flush=True)
    print(
        f"cartagent sandbox on http://{host}:{port}  (database {db_url})\n"
        f"  client id:     {client_id}\n  client secret: {client_secret}\n"
        f"  token:         curl -u {client_id}:{client_secret} -d grant_type=client_credentials "
        f"http://{host}:{port}/v1/oauth2/token",
        flush=True,
    )
    if workers > 1:
        os.environ[_ENV_DB] = db_url
        os.environ[_ENV_POOL] = str(pool_size)
        os.environ[_ENV_CALLS] = db_calls
        os.environ[_ENV_PRIVATE] = "1" if allow_private_webhooks else "0"
        uvicorn.run(
            "cartagent.sandbox.server:app_for_worker",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=log_level,
        )
        return
    uvicorn.run(
        create_app(sandbox, deliver_webhooks=True), host=host, port=port, log_level=log_level
    )
