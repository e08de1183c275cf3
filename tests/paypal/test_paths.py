"""Outside values in request paths: each is one encoded segment, whatever it holds."""

from __future__ import annotations

from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cartagent.paypal import PayPalClient, api_path, path_segment

BASE = "https://api.example.test"


def segments(path: str) -> list[str]:
    """The path's segments as a server sees them once httpx has normalised the URL."""
    raw = httpx.URL(BASE + path).raw_path.decode().split("?", 1)[0]
    return [unquote(s) for s in raw.split("/")[1:]]


@pytest.mark.parametrize(
    "value",
    [
        "../../../v1/billing/plans",
        "%2e%2e/%2e%2e/v1/billing/plans",
        "..%2F..%2Fv1",
        "A/capture",
        "A?x=1",
        "A#frag",
        "A\\..\\B",
        "A;B",
        "A B",
        "\u2215etc",
    ],
)
def test_an_id_with_separators_or_escapes_stays_one_segment(value: str) -> None:
    path = api_path("/v2/checkout/orders/{}/capture", value)

    assert segments(path) == ["v2", "checkout", "orders", value, "capture"]


@given(st.text(min_size=1, max_size=255).filter(lambda v: v not in {".", ".."}))
def test_any_value_round_trips_as_exactly_one_segment(value: str) -> None:
    assert segments(api_path("/v1/things/{}", value)) == ["v1", "things", value]


@pytest.mark.parametrize("value", ["", ".", "..", "x" * 256])
def test_values_that_cannot_be_an_id_are_refused(value: str) -> None:
    with pytest.raises(ValueError):
        path_segment(value)


def test_placeholders_and_values_must_match_in_number() -> None:
    with pytest.raises(ValueError, match="2 placeholders, given 1"):
        api_path("/v1/a/{}/b/{}", "x")
    assert api_path("/v1/a/{}/b/{}", "x", "y") == "/v1/a/x/b/y"


def test_the_clients_order_helpers_send_the_id_encoded() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path.decode())
        if request.url.path == "/v1/oauth2/token":
            return httpx.Response(200, json={"access_token": "t", "expires_in": 3600})
        return httpx.Response(200, json={"id": "X", "status": "COMPLETED"})

    with PayPalClient("id", "secret", base_url=BASE, transport=httpx.MockTransport(handler)) as pp:
        pp.get_order("../../../v1/billing/plans")
        pp.capture_order("A/B?c#d")

    assert seen[1:] == [
        "/v2/checkout/orders/..%2F..%2F..%2Fv1%2Fbilling%2Fplans",
        "/v2/checkout/orders/A%2FB%3Fc%23d/capture",
    ]
