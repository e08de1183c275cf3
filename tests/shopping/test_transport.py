"""One transport under both protocol clients: bounded reads, retries that keep the idempotency
key and sign each try afresh, the protocol's own refusals, and what is never retried."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from cartagent.errors import CheckoutError, DestinationRefused
from cartagent.shopping import AcpClient
from cartagent.shopping.transport import (
    MAX_BODY,
    MAX_FEED,
    ProtocolTransport,
    Reply,
    backoff,
)

SESSION = {
    "id": "cs_1",
    "status": "ready_for_payment",
    "currency": "usd",
    "line_items": [],
    "totals": [{"type": "total", "amount": 1000}],
}


def _transport(
    answer: Callable[[httpx.Request], httpx.Response], sleeps: list[float], **kwargs: object
) -> ProtocolTransport:
    def refusal(reply: Reply) -> CheckoutError:
        return CheckoutError(f"refused {reply.status}", code=reply.code() or "error")

    return ProtocolTransport(
        "https://m.test",
        who="the merchant",
        refusal=refusal,
        transport=httpx.MockTransport(answer),
        sleep=sleeps.append,
        **kwargs,  # type: ignore[arg-type]
    )


def test_a_retried_call_keeps_its_key_and_is_prepared_afresh_each_try() -> None:
    seen: list[httpx.Request] = []
    answers = iter(
        [
            httpx.Response(503, headers={"Retry-After": "0.5"}),
            httpx.Response(409, json={"code": "idempotency_in_flight"}),
            httpx.Response(200, json={"ok": True}),
        ]
    )

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return next(answers)

    tries = iter(range(100))
    sleeps: list[float] = []
    reply = _transport(answer, sleeps).send(
        "POST",
        "/things",
        content=b"{}",
        headers={"Idempotency-Key": "k-1"},
        prepare=lambda request: request.headers.__setitem__("Try", str(next(tries))),
    )
    assert reply.object() == {"ok": True}
    assert [r.headers["Idempotency-Key"] for r in seen] == ["k-1"] * 3
    assert [r.headers["Try"] for r in seen] == ["0", "1", "2"]
    assert sleeps == [0.5, backoff(1)]


def test_a_conflict_that_is_not_in_flight_is_the_answer_and_refused_the_protocols_way() -> None:
    sleeps: list[float] = []
    transport = _transport(lambda _: httpx.Response(409, json={"code": "conflict"}), sleeps)
    with pytest.raises(CheckoutError) as refused:
        transport.send("POST", "/things")
    assert (refused.value.message, refused.value.code) == ("refused 409", "conflict")
    assert sleeps == []


def test_transport_errors_are_retried_then_reported_unreachable() -> None:
    calls: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("down", request=request)

    sleeps: list[float] = []
    with pytest.raises(CheckoutError) as down:
        _transport(answer, sleeps, attempts=3).send("GET", "/x")
    assert (down.value.code, down.value.status) == ("unreachable", 503)
    assert "the merchant cannot be reached" in down.value.message
    assert len(calls) == 3 and sleeps == [backoff(0), backoff(1)]


def test_a_refused_destination_is_never_retried() -> None:
    calls: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise DestinationRefused("refused to send to 10.0.0.1", url=str(request.url))

    with pytest.raises(CheckoutError) as refused:
        _transport(answer, []).send("GET", "/x")
    assert (refused.value.code, refused.value.status) == ("destination_refused", 403)
    assert calls == [1]


@pytest.mark.parametrize("declared", [True, False])
def test_an_answer_over_the_bound_is_malformed_whether_or_not_its_length_is_declared(
    declared: bool,
) -> None:
    body = b" " * (MAX_BODY + 1)

    def answer(_: httpx.Request) -> httpx.Response:
        if declared:
            return httpx.Response(200, content=body)
        return httpx.Response(200, content=iter([body[:MAX_BODY], body[MAX_BODY:]]))

    with pytest.raises(CheckoutError) as malformed:
        _transport(answer, []).send("GET", "/x")
    assert (malformed.value.code, malformed.value.status) == ("invalid_response", 502)
    assert "the merchant answered something malformed" in malformed.value.message


def test_a_call_may_allow_a_larger_answer() -> None:
    body = b" " * (MAX_BODY + 1)
    transport = _transport(lambda _: httpx.Response(200, content=body), [])
    assert len(transport.send("GET", "/feed", limit=MAX_FEED).body) == MAX_BODY + 1


def _acp(answer: Callable[[httpx.Request], httpx.Response]) -> AcpClient:
    return AcpClient("https://m.test", "t", transport=httpx.MockTransport(answer), sleep=print)


def test_the_acp_client_reads_bounded_answers_now_as_the_ucp_client_does() -> None:
    client = _acp(lambda _: httpx.Response(200, content=b" " * (MAX_BODY + 1)))
    with pytest.raises(CheckoutError) as malformed:
        client.get("cs_1")
    assert malformed.value.code == "invalid_response"


@pytest.mark.parametrize(
    "answer", [httpx.Response(200, content=b"not json"), httpx.Response(200, json=[SESSION])]
)
def test_the_acp_client_refuses_an_answer_that_is_not_a_json_object(
    answer: httpx.Response,
) -> None:
    with pytest.raises(CheckoutError) as malformed:
        _acp(lambda _: answer).get("cs_1")
    assert (malformed.value.code, malformed.value.status) == ("invalid_response", 502)


def test_the_acp_client_reads_a_session_and_refuses_with_acps_fields() -> None:
    assert _acp(lambda _: httpx.Response(200, json=SESSION)).get("cs_1").total.amount == 10
    refusal = {"type": "invalid_request", "code": "out_of_stock", "message": "gone",
               "param": "$.line_items[0]"}  # fmt: skip
    with pytest.raises(CheckoutError) as refused:
        _acp(lambda _: httpx.Response(400, json=refusal)).get("cs_1")
    error = refused.value
    assert (error.message, error.code, error.param, error.status) == (
        "gone",
        "out_of_stock",
        ("line_items", 0),
        400,
    )


def test_the_acp_feed_is_read_whole_and_a_broken_line_is_malformed() -> None:
    broken = _acp(lambda _: httpx.Response(200, content=b'{"id": 1}\n{not json\n'))
    with pytest.raises(CheckoutError) as malformed:
        broken.products()
    assert malformed.value.code == "invalid_response"
    missing = _acp(lambda _: httpx.Response(404))
    with pytest.raises(CheckoutError) as absent:
        missing.products()
    assert (absent.value.code, absent.value.status) == ("not_found", 404)
