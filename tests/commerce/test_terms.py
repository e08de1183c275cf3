"""Store terms: tax by region, shipping rates by destination, free-shipping promotions,
discount codes, and the terms file that sets them (TOML, or a UCP sample shop folder)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from cartagent.catalog.product import Product, Variant
from cartagent.commerce import MerchantCatalog
from cartagent.commerce.checkout import Checkout, bill, merge_items
from cartagent.commerce.terms import (
    DEMO_STORE,
    Discount,
    FreeShipping,
    ShippingRate,
    StoreTerms,
)
from cartagent.commerce.terms_file import load_terms
from cartagent.errors import ConfigurationError
from cartagent.money import Money

REPO = Path(__file__).resolve().parents[2]
FLOWER_SHOP = REPO / "third_party" / "ucp-conformance" / "test_data" / "flower_shop"


def usd(amount: str) -> Money:
    return Money(Decimal(amount), "USD")


def offered(terms: StoreTerms, country: str, items: str, ids: tuple[str, ...] = ()) -> list:
    return [
        (o.rate.id, str(o.cost.amount)) for o in terms.shipping_offers(country, usd(items), ids)
    ]


def test_the_demo_store_ships_standard_for_5_99_and_free_from_50_everywhere() -> None:
    assert offered(DEMO_STORE, "US", "49.99") == [("standard", "5.99")]
    assert offered(DEMO_STORE, "FR", "50.00") == [("standard", "0.00")]
    assert DEMO_STORE.shipping_for(usd("10")) == usd("5.99")
    assert DEMO_STORE.tax_rate("CA", "QC") == Decimal(8)


def test_a_country_rate_beats_the_default_at_its_level_and_offers_are_cheapest_first() -> None:
    terms = StoreTerms(
        rates=(
            ShippingRate("std", "Standard", Decimal(5)),
            ShippingRate("exp", "Express", Decimal(25), level="express"),
            ShippingRate("exp-us", "Express (US)", Decimal(15), level="express", country="US"),
            ShippingRate("std-ca", "Standard (CA)", Decimal(30), country="CA"),
        ),
        free_shipping_from=None,
    )
    assert offered(terms, "us", "10") == [("std", "5.00"), ("exp-us", "15.00")]
    assert offered(terms, "CA", "10") == [("exp", "25.00"), ("std-ca", "30.00")]
    assert offered(terms, "DE", "10") == [("std", "5.00"), ("exp", "25.00")]


def test_free_shipping_by_subtotal_or_by_item_frees_only_its_level() -> None:
    terms = StoreTerms(
        rates=(
            ShippingRate("std", "Standard", Decimal(5)),
            ShippingRate("exp", "Express", Decimal(25), level="express"),
        ),
        promotions=(
            FreeShipping(min_items=Decimal(100)),
            FreeShipping(item_ids=frozenset({"roses"})),
        ),
        free_shipping_from=None,
    )
    assert offered(terms, "US", "99.99") == [("std", "5.00"), ("exp", "25.00")]
    assert offered(terms, "US", "100") == [("std", "0.00"), ("exp", "25.00")]
    assert offered(terms, "US", "35", ("pot", "roses")) == [("std", "0.00"), ("exp", "25.00")]


def test_tax_by_region_is_the_most_precise_rate_known() -> None:
    terms = StoreTerms(tax_regions={"US-CA": Decimal("7.25"), "CA": Decimal(5)})
    assert terms.tax_rate("US", "CA") == Decimal("7.25")
    assert terms.tax_rate("CA", "QC") == Decimal(5)
    assert terms.tax_rate("US", "NY") == Decimal(8)
    assert terms.tax_rate() == Decimal(8)


def test_a_toml_terms_file_sets_every_term(tmp_path: Path) -> None:
    path = tmp_path / "terms.toml"
    path.write_text(
        'currency = "eur"\ntax_percent = 19\nreturn_days = 14\n'
        '[tax_regions]\n"at" = 20\n'
        '[[shipping]]\nid = "std"\ntitle = "Standard"\nprice = 4.90\ndays = [2, 4]\n'
        '[[shipping]]\nid = "exp-at"\ntitle = "Express"\nprice = "12.5"\nlevel = "express"\n'
        'country = "at"\n'
        "[[free_shipping]]\nmin_items = 60\n"
    )
    terms = load_terms(path)
    assert (terms.currency, terms.tax_percent, terms.return_days) == ("EUR", Decimal(19), 14)
    assert terms.tax_rate("AT") == Decimal(20)
    assert terms.rates[0] == ShippingRate("std", "Standard", Decimal("4.90"), days=(2, 4))
    assert terms.rates[1].country == "AT"
    eur = Money(Decimal(60), "EUR")
    assert [str(o.cost.amount) for o in terms.shipping_offers("AT", eur, ())] == ["0.00", "12.50"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("tax_percent = 101\n", "tax_percent"),
        ("[tax_regions]\nUSA = 5\n", "tax_regions.USA"),
        ('[[shipping]]\nid = "a"\ntitle = "A"\nprice = -1\n', "shipping.0.price"),
        ('[[shipping]]\nid = "a"\ntitle = "A"\nprice = 1\ncountry = "USA"\n', "shipping.0.country"),
        ('[[shipping]]\nid = "a"\ntitle = "A"\nprice = 1\n' * 2, "two rates share an id"),
        ("shiping = []\n", "shiping"),
        ("tax_percent = \n", "terms.toml"),
    ],
)
def test_a_bad_terms_file_names_the_entry(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "terms.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as raised:
        load_terms(path)
    assert problem in str(raised.value)


def test_the_flower_shop_folder_gives_its_rates_and_promotions_and_no_tax() -> None:
    terms = load_terms(FLOWER_SHOP)
    assert terms.tax_rate("US", "IL") == 0
    assert offered(terms, "US", "35", ("pot_ceramic",)) == [
        ("std-ship", "5.00"),
        ("exp-ship-us", "15.00"),
    ]
    assert offered(terms, "CA", "35", ("pot_ceramic",)) == [
        ("std-ship", "5.00"),
        ("exp-ship-intl", "25.00"),
    ]
    assert offered(terms, "US", "35", ("bouquet_roses",))[0] == ("std-ship", "0.00")
    assert offered(terms, "US", "105", ("pot_ceramic",))[0] == ("std-ship", "0.00")


@pytest.mark.parametrize(
    ("rates", "promotions", "problem"),
    [
        ("id,country_code,service_level,price,title\na,USA,standard,5,A\n", "", "country_code"),
        ("id,country_code,service_level,price,title\na,US,standard,5.5,A\n", "", "minor units"),
        ("", "id,type,min_subtotal,eligible_item_ids,description\np,coupon,1,,x\n", "free_ship"),
        ("", "id,type,min_subtotal,eligible_item_ids,description\np,free_shipping,,x,y\n", "JSON"),
        ("", "id,type,min_subtotal,eligible_item_ids,description\np,free_shipping,,,y\n", "give"),
    ],
)
def test_a_bad_shop_folder_row_names_its_file_and_line(
    tmp_path: Path, rates: str, promotions: str, problem: str
) -> None:
    if rates:
        (tmp_path / "shipping_rates.csv").write_text(rates)
    if promotions:
        (tmp_path / "promotions.csv").write_text(promotions)
    with pytest.raises(ConfigurationError) as raised:
        load_terms(tmp_path)
    assert ".csv:2:" in str(raised.value) and problem in str(raised.value)


def test_the_readme_terms_example_loads_as_it_says(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Store terms") :]
    example = section[section.index("```toml\n") + 8 : section.index("```\n", 10)]
    path = tmp_path / "terms.toml"
    path.write_text(example)
    terms = load_terms(path)
    assert terms.tax_rate("US", "CA") == Decimal("7.25") and terms.tax_rate("DE") == 8
    assert offered(terms, "US", "49") == [("standard", "5.99"), ("express-us", "15.00")]
    assert offered(terms, "DE", "50") == [("standard", "0.00")]


def test_discount_codes_stack_each_on_what_the_ones_before_left() -> None:
    ten, twenty = Discount("10OFF", "10% off", Decimal(10)), Discount("W20", "20%", Decimal(20))
    fixed = Discount("FIXED500", "$5 off", amount=Decimal(5))
    assert ten.off(usd("35")) == usd("3.50") and twenty.off(usd("31.50")) == usd("6.30")
    assert fixed.off(usd("3")) == usd("3")  # never more than the items cost
    assert ten.off(usd("0.05")) == usd("0.01")  # half-up to the minor unit
    terms = StoreTerms(discounts=(ten, fixed))
    assert terms.discount(" 10off ") is ten and terms.discount("nope") is None
    with pytest.raises(ValueError, match="a percent or an amount"):
        Discount("X", "x", Decimal(1), Decimal(1))
    with pytest.raises(ValueError, match="at most 100"):
        Discount("X", "x", Decimal(101))


def test_a_bill_allocates_the_discount_over_the_lines_and_taxes_what_is_left() -> None:
    catalog = MerchantCatalog(
        [
            Product(id="a", title="A", variants=(Variant(id="a", price=Decimal("10.00")),)),
            Product(id="b", title="B", variants=(Variant(id="b", price=Decimal("20.01")),)),
        ]
    )
    terms = StoreTerms(discounts=(Discount("TEN", "10% off", Decimal(10)),))
    now = datetime.now(UTC)
    cart = Checkout(
        id="cs_1", owner="o", protocol="ucp", currency="USD",
        lines=merge_items([("a", 1), ("b", 1)], catalog, "USD"),
        created_at=now, updated_at=now, expires_at=now, discount_codes=("ten", "BOGUS"),
    )  # fmt: skip
    priced = bill(cart, catalog, terms, now)
    [applied] = priced.discounts
    assert (applied.code, applied.amount) == ("TEN", usd("3.00"))
    assert [share for _, share in applied.allocations] == [usd("1.00"), usd("2.00")]
    a, b = priced.lines
    assert (a.discount, a.tax) == (usd("1.00"), usd("0.72"))  # 8% of 9.00
    assert (b.discount, b.tax) == (usd("2.00"), usd("1.44"))  # 8% of 18.01, half-up
    assert priced.total == usd("30.01") - usd("3.00") + usd("2.16") + priced.shipping
    [warning] = [p for p in priced.problems if p.code == "discount_code_invalid"]
    assert (warning.param, warning.severity) == (("discount_codes", 1), "warning")


def test_discounts_load_from_toml_and_from_the_shop_folder(tmp_path: Path) -> None:
    path = tmp_path / "terms.toml"
    path.write_text(
        '[[discounts]]\ncode = "SAVE5"\ntitle = "5 off"\namount = "5.00"\n'
        '[[discounts]]\ncode = "half"\ntitle = "Half"\npercent = 50\n'
    )
    terms = load_terms(path)
    assert terms.discount("save5") == Discount("SAVE5", "5 off", amount=Decimal("5.00"))
    assert terms.discount("HALF") is not None
    path.write_text(
        '[[discounts]]\ncode = "A"\ntitle = "a"\n[[discounts]]\ncode = "b"\ntitle = "b"\n'
    )
    with pytest.raises(ConfigurationError, match="a percent or an amount"):
        load_terms(path)
    shop = load_terms(FLOWER_SHOP)
    assert [d.code for d in shop.discounts] == ["10OFF", "WELCOME20", "FIXED500"]
    assert shop.discount("FIXED500") == Discount("FIXED500", "$5.00 Off", amount=Decimal(5))
    (tmp_path / "discounts.csv").write_text("code,type,value,description\nX,bogo,1,x\n")
    with pytest.raises(ConfigurationError, match=r"discounts\.csv:2: type 'bogo'"):
        load_terms(tmp_path)


def test_the_readme_discount_example_loads_as_it_says(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Store terms") : readme.index("### Testing a UCP business")]
    blocks = section.split("```toml\n")[1:]
    example = next(block for block in blocks if "[[discounts]]" in block).split("```")[0]
    path = tmp_path / "terms.toml"
    path.write_text(example)
    code, sale = load_terms(path).discounts
    assert code == Discount("WELCOME10", "10% off your first order", Decimal(10))
    assert sale == Discount(
        "SPRING", "Spring sale", Decimal(5), automatic=True, min_items=Decimal(100)
    )


def test_price_bands_choose_the_rate_for_the_subtotal() -> None:
    terms = StoreTerms(
        rates=(
            ShippingRate("small", "Standard", Decimal("4.99"), max_items=Decimal(25)),
            ShippingRate("large", "Standard", Decimal("9.99"), min_items=Decimal(25)),
            ShippingRate("exp", "Express", Decimal(15), level="express"),
        )
    )
    assert offered(terms, "US", "24.99") == [("small", "4.99"), ("exp", "15.00")]
    assert offered(terms, "US", "25") == [("large", "9.99"), ("exp", "15.00")]


def test_automatic_promotions_apply_without_a_code_before_the_codes() -> None:
    catalog = MerchantCatalog(
        [Product(id="a", title="A", variants=(Variant(id="a", price=Decimal("60.00")),))]
    )
    sale = Discount("SPRING", "Spring sale", Decimal(5), automatic=True, min_items=Decimal(100))
    terms = StoreTerms(discounts=(sale, Discount("TEN", "10% off", Decimal(10))))
    assert terms.discount("SPRING") is None  # a promotion is no code a buyer can type
    now = datetime.now(UTC)

    def priced(quantity: int, codes: tuple[str, ...]) -> list[tuple[str, str, bool]]:
        cart = Checkout(
            id="cs_1", owner="o", protocol="ucp", currency="USD",
            lines=merge_items([("a", quantity)], catalog, "USD"),
            created_at=now, updated_at=now, expires_at=now, discount_codes=codes,
        )  # fmt: skip
        return [
            (d.code, str(d.amount.amount), d.automatic)
            for d in bill(cart, catalog, terms, now).discounts
        ]

    assert priced(1, ("TEN",)) == [("TEN", "6.00", False)]  # 60 < 100: no sale
    assert priced(2, ("TEN",)) == [("SPRING", "6.00", True), ("TEN", "11.40", False)]


def test_bands_and_promotions_load_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "terms.toml"
    path.write_text(
        '[[shipping]]\nid = "s"\ntitle = "S"\nprice = 5\nmax_items = 25\n'
        '[[discounts]]\ncode = "SALE"\ntitle = "Sale"\npercent = 5\nautomatic = true\n'
        "min_items = 100\n"
    )
    terms = load_terms(path)
    assert terms.rates[0].max_items == Decimal(25) and terms.rates[0].min_items is None
    [sale] = terms.discounts
    assert (sale.automatic, sale.min_items) == (True, Decimal(100))
