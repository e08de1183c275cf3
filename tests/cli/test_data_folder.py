"""cartagent's data folder holds keys, secrets and databases: the commands that write there
(``serve``, ``merchant``, ``chat``, ``sandbox``) make it 0700 and everything in it 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cartagent.assistant import ConversationStore
from cartagent.cli.assistant_setup import default_db
from cartagent.cli.main import cli
from cartagent.cli.merchant import _token
from cartagent.cli.serve import GUEST_SECRET_FILE, _api_keys
from cartagent.cli.settings import data_folder, run_settings
from cartagent.commerce import CheckoutRecords
from cartagent.database import create_engine
from cartagent.sandbox import ensure_merchant, open_sandbox
from cartagent.web import guest_secret


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty XDG data home and the usual umask (022), under which files and folders are
    world-readable unless the code says otherwise; the data folder is ``<xdg>/cartagent``."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    for name in ("CARTAGENT_SANDBOX_DB", "CARTAGENT_API_KEYS_FILE"):
        monkeypatch.delenv(name, raising=False)
    previous = os.umask(0o022)
    yield home
    os.umask(previous)


def modes(root: Path) -> dict[str, int]:
    """Every file and folder under ``root`` (itself included) and its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


def private(root: Path) -> dict[str, int]:
    """What :func:`modes` should find under ``root``: folders 0700, files 0600."""
    return {name: 0o700 if (root / name).is_dir() else 0o600 for name in modes(root)}


def test_what_serve_merchant_and_chat_keep_is_0600_in_a_0700_folder(xdg: Path) -> None:
    with click.Context(click.Command("serve")):
        data = data_folder()
        _api_keys(None, data)  # serve: the demo keys
        guest_secret(data / GUEST_SECRET_FILE)  # serve: the guest tokens' secret
        chats = ConversationStore.open(default_db())  # serve, chat: conversations
        sandbox = open_sandbox(run_settings().sandbox.db_url)  # serve, merchant, sandbox
        ensure_merchant(sandbox, "demo", "secret")
        _token(data_folder())  # merchant: the agent token
        records = CheckoutRecords(create_engine(f"sqlite:///{data_folder() / 'merchant.db'}"))
    try:
        found = modes(data)
        assert {"api-keys.toml", GUEST_SECRET_FILE, "merchant-agent-token"} <= set(found)
        assert {"chat.db", "sandbox.db", "sandbox.db-wal", "merchant.db"} <= set(found)
        assert found == private(data)
        assert stat.S_IMODE(xdg.stat().st_mode) == 0o700  # made for it, so made private
    finally:
        chats.close()
        sandbox.store.engine.dispose()
        records.engine.dispose()


def test_a_data_folder_left_world_readable_is_tightened(xdg: Path) -> None:
    (xdg / "cartagent").mkdir(parents=True, mode=0o755)
    (xdg / "cartagent").chmod(0o755)
    result = CliRunner().invoke(cli, ["sandbox", "migrate"])
    assert result.exit_code == 0, result.output
    found = modes(xdg / "cartagent")
    assert "sandbox.db" in found and found == private(xdg / "cartagent")
