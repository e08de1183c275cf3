"""Merchants' client secrets are kept as salted scrypt hashes: the row never holds the secret,
only the right secret gets a token, and databases that held plain secrets are migrated."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from fastapi.testclient import TestClient

from cartagent.sandbox import Sandbox, create_app, ensure_merchant, open_sandbox
from cartagent.sandbox.database import alembic_config
from cartagent.sandbox.engine import create_engine
from cartagent.sandbox.identity import client_secrets as secrets_module
from cartagent.sandbox.identity.client_secrets import (
    ClientSecrets,
    hash_secret,
    is_hashed,
    secret_matches,
)
from cartagent.settings import Settings

# A hash is longer than the secret it replaced: PostgreSQL enforces a column's width, SQLite
# does not; and old databases are migrated.
pytestmark = pytest.mark.postgres

SECRET = "correct horse battery staple"


def token(http: TestClient, client_id: str, secret: str) -> int:
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    response = http.post(
        "/v1/oauth2/token",
        data={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}"},
    )
    return response.status_code


def stored_row(sandbox: Sandbox, client_id: str) -> dict[str, object]:
    with sandbox.store.engine.connect() as conn:
        row = conn.execute(
            sa.text("SELECT * FROM merchants WHERE client_id = :cid"), {"cid": client_id}
        ).one()
    return dict(row._mapping)


def test_the_stored_row_holds_a_salted_hash_and_never_the_secret(sandbox: Sandbox) -> None:
    ensure_merchant(sandbox, "hashed-one", SECRET)
    ensure_merchant(sandbox, "hashed-two", SECRET)
    one, two = stored_row(sandbox, "hashed-one"), stored_row(sandbox, "hashed-two")
    for row in (one, two):
        assert not any(SECRET in str(value) for value in row.values())
        assert is_hashed(str(row["client_secret_hash"]))
    assert one["client_secret_hash"] != two["client_secret_hash"]  # each its own salt


def test_only_the_right_secret_gets_a_token(sandbox: Sandbox, http: TestClient) -> None:
    ensure_merchant(sandbox, "checked", SECRET)
    assert token(http, "checked", SECRET) == 200
    for wrong in ("", SECRET[:-1], SECRET + "x", SECRET.upper(), "secret"):
        assert token(http, "checked", wrong) == 401
    assert token(http, "nobody", SECRET) == 401


def test_a_new_secret_replaces_the_old_one(sandbox: Sandbox, http: TestClient) -> None:
    ensure_merchant(sandbox, "rotated", SECRET)
    ensure_merchant(sandbox, "rotated", "the new secret")
    assert token(http, "rotated", "the new secret") == 200
    assert token(http, "rotated", SECRET) == 401


def test_the_demo_merchants_credentials_still_authenticate(
    sandbox: Sandbox, http: TestClient
) -> None:
    demo = Settings.from_env({}).sandbox
    ensure_merchant(sandbox, demo.client_id, demo.client_secret)
    ensure_merchant(sandbox, demo.client_id, demo.client_secret)  # each start does it again
    assert token(http, demo.client_id, demo.client_secret) == 200
    assert not any(
        demo.client_secret in str(v) for v in stored_row(sandbox, demo.client_id).values()
    )


def test_a_database_with_plain_secrets_is_migrated_and_they_still_work(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    config = alembic_config()
    with engine.connect() as conn:  # the schema as it was when secrets were kept plain
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        conn.execute(
            sa.text(
                "INSERT INTO merchants (id, client_id, client_secret, email, created_at) "
                "VALUES ('OLDMERCHANT1', 'old-client', :secret, 'o@example.com', :now)"
            ),
            {"secret": SECRET, "now": "2026-01-01 00:00:00"},
        )
        conn.commit()
    engine.dispose()

    sandbox = open_sandbox(url)
    try:
        stored = stored_row(sandbox, "old-client")
        assert str(stored["client_secret_hash"]).startswith("scrypt$14$8$1$")  # full cost
        assert not any(SECRET in str(value) for value in stored.values())
        with TestClient(create_app(sandbox), base_url="http://sandbox.test") as http:
            assert token(http, "old-client", SECRET) == 200
            assert token(http, "old-client", "a guess") == 401
        assert open_sandbox(url).store.merchant_by_credentials("old-client", SECRET)  # again
    finally:
        sandbox.store.engine.dispose()


def test_a_hash_matches_only_its_secret_and_a_damaged_one_matches_nothing() -> None:
    stored = hash_secret(SECRET)
    assert secret_matches(stored, SECRET) and not secret_matches(stored, SECRET + " ")
    scheme, log2_n, r, p, salt, digest = stored.split("$")
    for damaged in (
        SECRET,  # a secret stored as it was given is no hash
        stored[:-2],
        "$".join([scheme, "40", r, p, salt, digest]),  # a cost no one should compute
        "$".join(["bcrypt", log2_n, r, p, salt, digest]),
        "$".join([scheme, log2_n, r, p, "!!!", digest]),
    ):
        assert not is_hashed(damaged)
        assert not secret_matches(damaged, SECRET)


def test_a_passed_check_is_remembered_and_a_failed_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secrets = ClientSecrets()
    stored = secrets.hash(SECRET)
    calls: list[str] = []

    def counted(stored: str, offered: str) -> bool:
        calls.append(offered)
        return secret_matches(stored, offered)

    monkeypatch.setattr(secrets_module, "secret_matches", counted)
    assert secrets.matches(stored, SECRET) and secrets.matches(stored, SECRET)
    assert calls == []  # the hash made it: its check is known to pass
    assert not secrets.matches(stored, "wrong") and not secrets.matches(stored, "wrong")
    assert calls == ["wrong", "wrong"]
    assert ClientSecrets().matches(stored, SECRET)  # another process checks it the long way
