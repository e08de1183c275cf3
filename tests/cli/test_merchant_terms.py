"""`cartagent merchant --terms`: the store's terms from a file, a UCP shop folder's own terms."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import click
import pytest

from cartagent.cli.merchant import MerchantSetup, build_app

REPO = Path(__file__).resolve().parents[2]
FLOWER_SHOP = REPO / "third_party" / "ucp-conformance" / "test_data" / "flower_shop"


def setup(tmp_path: Path, catalog: Path, terms: Path | None) -> MerchantSetup:
    return MerchantSetup(
        catalog=str(catalog),
        database=f"sqlite:///{tmp_path / 'merchant.db'}",
        base_url="http://127.0.0.1:9",
        paypal_url="http://127.0.0.1:9",
        paypal_id="id",
        paypal_secret="secret",
        agent_token="token",
        terms=None if terms is None else str(terms),
    )


def test_the_merchant_prices_with_the_terms_file_it_is_given(tmp_path: Path) -> None:
    app = build_app(setup(tmp_path, FLOWER_SHOP, FLOWER_SHOP))
    terms = app.state.acp.merchant.terms
    assert terms.tax_percent == 0
    assert [rate.id for rate in terms.rates] == ["std-ship", "exp-ship-us", "exp-ship-intl"]
    assert len(app.state.acp.merchant.catalog) == 6


def test_a_bad_terms_file_is_a_usage_error_naming_the_entry(tmp_path: Path) -> None:
    bad = tmp_path / "terms.toml"
    bad.write_text("tax_percent = 120\n")
    with pytest.raises(click.UsageError, match=r"terms\.toml: tax_percent: .*less than or equal"):
        build_app(setup(tmp_path, FLOWER_SHOP, bad))


def test_without_terms_the_demo_store_terms_apply(tmp_path: Path) -> None:
    app = build_app(setup(tmp_path, FLOWER_SHOP, None))
    assert app.state.acp.merchant.terms.tax_percent == Decimal(8)
