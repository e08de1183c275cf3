"""The static bearer token check behind the HTTP transport."""

from __future__ import annotations

import pytest

from cartagent.errors import ConfigurationError
from cartagent.mcp_transport import StaticTokenVerifier

pytestmark = pytest.mark.anyio
TOKEN = "correct-horse-battery-staple"


@pytest.mark.parametrize("token", [None, "", "short"])
async def test_a_missing_or_short_token_is_a_configuration_error(token: str | None) -> None:
    with pytest.raises(ConfigurationError, match="token"):
        StaticTokenVerifier(token)


async def test_only_the_configured_token_is_accepted() -> None:
    verifier = StaticTokenVerifier(TOKEN)

    accepted = await verifier.verify_token(TOKEN)
    assert accepted is not None
    assert accepted.token == TOKEN
    assert await verifier.verify_token(TOKEN + "x") is None
    assert await verifier.verify_token(TOKEN[:-1]) is None
    assert await verifier.verify_token("") is None
