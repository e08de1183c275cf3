"""`cartagent merchant`'s UCP options: the release at the root, open access, the prefix, the
intersection and the testing surface reach the app."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fastapi.testclient import TestClient

from cartagent.cli.merchant import MerchantSetup, build_app
from tests.cli.test_merchant_terms import FLOWER_SHOP, setup


def test_the_ucp_options_reach_the_business(tmp_path: Path) -> None:
    chosen: MerchantSetup = replace(
        setup(tmp_path, FLOWER_SHOP, FLOWER_SHOP),
        ucp_version="2026-01-11",
        ucp_open=True,
        ucp_intersect=False,
        simulation_secret="s3cret",
        ucp_prefix="",
    )
    app = build_app(chosen)
    policy = app.state.ucp.settings.policy
    assert (policy.version, policy.open_access, policy.intersect) == ("2026-01-11", True, False)
    assert policy.simulation_secret == "s3cret"
    with TestClient(app, base_url="http://127.0.0.1:9") as http:
        profile = http.get("/.well-known/ucp").json()
        assert profile["ucp"]["version"] == "2026-01-11"
        assert profile["ucp"]["services"]["dev.ucp.shopping"]["rest"]["endpoint"].endswith(":9")
        # The testing surface is mounted at the root, behind its secret.
        assert http.post("/testing/simulate-shipping/ord_1").status_code == 403


def test_by_default_ucp_is_under_its_prefix_at_the_current_release(tmp_path: Path) -> None:
    app = build_app(setup(tmp_path, FLOWER_SHOP, None))
    policy = app.state.ucp.settings.policy
    assert (policy.version, policy.open_access, policy.intersect) == ("2026-04-08", False, True)
    assert policy.simulation_secret is None
    with TestClient(app, base_url="http://127.0.0.1:9") as http:
        [rest] = http.get("/.well-known/ucp").json()["ucp"]["services"]["dev.ucp.shopping"]
        assert rest["endpoint"] == "http://127.0.0.1:9/ucp"
        assert http.post("/testing/simulate-shipping/ord_1").status_code == 404
