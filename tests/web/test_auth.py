"""API keys files, their principals, and the demo keys."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.web import ApiKeys, Principal, Role, load_keys, write_demo_keys

TOML = """
[[keys]]
key = "alice-key-0123456789abcdef"
name = "alice"
role = "shopper"

[[keys]]
key = "alice-new-key-0123456789ab"
name = "alice"
role = "shopper"

[[keys]]
key = "store-key-0123456789abcdef"
name = "store"
role = "merchant"
"""


def test_a_toml_keys_file_maps_each_key_to_its_principal(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(TOML)
    keys = load_keys(path)
    alice = Principal("alice", Role.SHOPPER)
    assert keys.principal("alice-key-0123456789abcdef") == alice
    assert keys.principal("alice-new-key-0123456789ab") == alice
    assert keys.principal("store-key-0123456789abcdef") == Principal("store", Role.MERCHANT)
    assert keys.principal("alice-key-0123456789abcde") is None
    assert keys.principal("") is None
    assert keys.principals == [alice, Principal("store", Role.MERCHANT)]


def test_a_json_keys_file_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    entry = {"key": "bob-key-0123456789abcdefgh", "name": "bob", "role": "merchant"}
    path.write_text(json.dumps({"keys": [entry]}))
    assert load_keys(path).principal(entry["key"]) == Principal("bob", Role.MERCHANT)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("keys = 3", "expected a list of keys"),
        ("[[keys]]\nkey = 'short'\nname = 'a'\nrole = 'shopper'", "shorter than 16"),
        ("[[keys]]\nkey = '0123456789abcdefgh'\nname = 'a'\nrole = 'admin'", "'admin'"),
        ("[[keys]]\nkey = '0123456789abcdefgh'\nrole = 'shopper'", "key 1: key and name"),
        ("keys = []", "no API keys"),
        ("[[keys", "is not valid"),
        (
            "[[keys]]\nkey = '0123456789abcdefgh'\nname = 'a'\nrole = 'shopper'\n"
            "[[keys]]\nkey = '0123456789abcdefgi'\nname = 'a'\nrole = 'merchant'",
            "'a' is listed with two roles",
        ),
        (
            "[[keys]]\nkey = '0123456789abcdefgh'\nname = 'a'\nrole = 'shopper'\n"
            "[[keys]]\nkey = '0123456789abcdefgh'\nname = 'b'\nrole = 'shopper'",
            "the key of 'b' is listed twice",
        ),
    ],
)
def test_a_bad_keys_file_is_a_configuration_error_saying_why(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=says):
        load_keys(path)


def test_a_missing_keys_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_keys(tmp_path / "nope.toml")


def test_demo_keys_are_one_random_shopper_and_one_random_merchant_readable_by_the_owner_only(
    tmp_path: Path,
) -> None:
    path = tmp_path / "data" / "api-keys.toml"
    written = write_demo_keys(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    listing = written.listing()
    assert [p.role for _, p in listing] == [Role.SHOPPER, Role.MERCHANT]
    assert all(len(key) >= 40 for key, _ in listing)
    loaded = load_keys(path)
    assert loaded.listing() == listing
    other = write_demo_keys(tmp_path / "other.toml")
    assert not {k for k, _ in listing} & {k for k, _ in other.listing()}


def test_demo_keys_never_overwrite_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "api-keys.toml"
    path.write_text(TOML)
    with pytest.raises(FileExistsError):
        write_demo_keys(path)
    assert path.read_text() == TOML


def test_keys_must_not_be_empty() -> None:
    with pytest.raises(ConfigurationError):
        ApiKeys([])
