"""The one settings object: read from a given environment, every variable in the README."""

from __future__ import annotations

import re
from pathlib import Path

from cartagent.settings import Settings
from tests.conftest import ROOT

SETTINGS = ROOT / "src" / "cartagent" / "settings.py"


def test_the_defaults_need_no_environment() -> None:
    settings = Settings.from_env({})
    assert settings.data_dir == Path.home() / ".local" / "share" / "cartagent"
    assert settings.sandbox.db_url == f"sqlite:///{settings.data_dir / 'sandbox.db'}"
    assert settings.sandbox.base_url == "http://127.0.0.1:8765"
    assert settings.adapter.registry == settings.data_dir / "registry"
    assert settings.adapter.search_adapter is None and settings.adapter.merged_type == "Q4_0"
    assert settings.llm.base_url is None and settings.llm.schema_style == "json_schema"
    assert settings.paypal.base_url is None and settings.mcp.token is None
    assert settings.merchant.db_url is None and settings.api_keys_file is None


def test_the_data_folder_follows_xdg_and_the_defaults_in_it_follow_the_folder() -> None:
    settings = Settings.from_env({"XDG_DATA_HOME": "/srv/data"})
    assert settings.data_dir == Path("/srv/data/cartagent")
    assert settings.sandbox.db_url == "sqlite:////srv/data/cartagent/sandbox.db"
    assert settings.adapter.registry == Path("/srv/data/cartagent/registry")


def test_variables_override_and_empty_ones_count_as_unset() -> None:
    settings = Settings.from_env(
        {
            "CARTAGENT_SANDBOX_PORT": "9999",
            "CARTAGENT_SANDBOX_DB": "",
            "CARTAGENT_MCP_TOKEN": "t" * 20,
            "CARTAGENT_PAYPAL_CLIENT_ID": "",
            "CARTAGENT_SEARCH_ADAPTER": "~/mine.gguf",
            "CARTAGENT_MERGED_TYPE": "Q8_0",
            "CARTAGENT_API_KEYS_FILE": "keys.toml",
            "CARTAGENT_EMBEDDER": "minilm-onnx",
        }
    )
    assert settings.sandbox.port == 9999
    assert settings.sandbox.db_url.endswith("/cartagent/sandbox.db")
    assert settings.mcp.token == "t" * 20
    assert settings.paypal.client_id is None
    assert settings.adapter.search_adapter == Path.home() / "mine.gguf"
    assert settings.adapter.merged_type == "Q8_0"
    assert settings.api_keys_file == Path("keys.toml")
    assert settings.embedder == "minilm-onnx"


def test_every_variable_read_is_in_the_readme_table_and_every_row_is_read() -> None:
    read = set(re.findall(r'"((?:CARTAGENT|XDG)_[A-Z_]+)"', SETTINGS.read_text()))
    readme = (ROOT / "README.md").read_text()
    table = set(re.findall(r"^\| `([A-Z_]+)` \|", readme, flags=re.MULTILINE))
    assert read == table
    assert len(read) == 30


def test_nothing_outside_settings_reads_the_environment() -> None:
    readers = re.compile(r"os\.environ\.get|os\.getenv|os\.environ\[|envvar=")
    # uvicorn's worker processes get their parent's resolved setup this way: not a setting.
    handoffs = {Path("src/cartagent/sandbox/server.py"), Path("src/cartagent/cli/merchant.py")}
    offending = {
        path.relative_to(ROOT)
        for path in (ROOT / "src").rglob("*.py")
        if path != SETTINGS and readers.search(path.read_text())
    }
    assert offending == handoffs
