"""A mutating call answered at most once per idempotency key, whatever the protocol: the work
runs once, its answer is replayed, a server error or a Retry-After answer is never stored, the
key's own states are answered by the protocol's rules, and a key table that fails fails closed."""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from cartagent.commerce.idempotency import Answer, Idempotency, KeyRules, Refusal
from cartagent.commerce.records import CheckoutRecords

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)

RULES = KeyRules(
    conflict=lambda: Refusal(422, {"code": "idempotency_conflict"}),
    in_flight=lambda: Refusal(409, {"code": "in_flight"}, {"Retry-After": "1"}),
    unavailable=lambda: Refusal(503, {"code": "unavailable"}),
    failure=lambda error: Refusal(500, {"code": "failed", "why": str(error)}),
    replay_headers={"Idempotent-Replayed": "true"},
)


@pytest.fixture
def scope(request: pytest.FixtureRequest) -> str:
    """This test's own scope: the records' database is shared by the session's tests."""
    return hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]


@pytest.fixture
def keys(records: CheckoutRecords) -> Idempotency:
    return Idempotency(records, lambda: NOW, RULES)


class Work:
    """The call itself, counting its runs; answers ``answer`` or raises it."""

    def __init__(self, answer: tuple[int, dict[str, Any]] | Exception) -> None:
        self.answer = answer
        self.runs = 0

    def __call__(self) -> tuple[int, dict[str, Any]]:
        self.runs += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_work_runs_once_and_its_answer_is_replayed(keys: Idempotency, scope: str) -> None:
    work = Work((201, {"id": "co_1"}))
    first = keys.run(scope, "k", {"a": 1}, work)
    again = keys.run(scope, "k", {"a": 1.0}, work)  # the same request, spelled otherwise
    assert (first.status, first.json(), first.headers, first.replayed) == (
        201, {"id": "co_1"}, {}, False,
    )  # fmt: skip
    assert (again.status, again.json(), again.replayed) == (201, {"id": "co_1"}, True)
    assert again.headers == {"Idempotent-Replayed": "true"}
    assert work.runs == 1


def test_the_key_with_another_body_or_still_running_is_answered_by_the_rules(
    keys: Idempotency, scope: str
) -> None:
    keys.run(scope, "done", {"a": 1}, Work((200, {})))
    with pytest.raises(Refusal) as conflict:
        keys.run(scope, "done", {"a": 2}, Work((200, {})))
    assert (conflict.value.status, conflict.value.body) == (422, {"code": "idempotency_conflict"})

    def nested() -> tuple[int, dict[str, Any]]:
        with pytest.raises(Refusal) as in_flight:
            keys.run(scope, "running", {}, Work((200, {})))
        assert in_flight.value.headers == {"Retry-After": "1"}
        return 200, {"inner": "refused"}

    assert keys.run(scope, "running", {}, nested).json() == {"inner": "refused"}


def test_a_refusal_is_the_answer_and_is_stored_like_one(keys: Idempotency, scope: str) -> None:
    refused = Work(Refusal(400, {"code": "invalid"}, {"X-Why": "field"}))
    answer = keys.run(scope, "k", {}, refused)
    assert (answer.status, answer.json(), answer.headers) == (
        400,
        {"code": "invalid"},
        {"X-Why": "field"},
    )
    assert keys.run(scope, "k", {}, refused).replayed
    assert refused.runs == 1
    assert str(Refusal(400, {"code": "invalid"})) == "{'code': 'invalid'}"


@pytest.mark.parametrize(
    ("answer", "stored"),
    [
        ((500, {"code": "down"}), False),
        ((503, {"code": "down"}), False),
        ((499, {"code": "closed"}), True),
        (Refusal(409, {"code": "busy"}, {"retry-after": "2"}), False),
        (Refusal(409, {"code": "busy"}), True),
        (RuntimeError("boom"), False),  # the rules make it a 500
    ],
)
def test_server_errors_and_retry_after_answers_are_never_stored(
    keys: Idempotency, scope: str, answer: Any, stored: bool
) -> None:
    work = Work(answer)
    first = keys.run(scope, "k", {}, work)
    second = keys.run(scope, "k", {}, work)
    assert second.replayed is stored
    assert work.runs == (1 if stored else 2)
    assert first.json() == second.json()
    if isinstance(answer, RuntimeError):
        assert first.status == 500 and first.json() == {"code": "failed", "why": "boom"}


def test_a_key_table_that_cannot_be_read_fails_closed_and_says_which_key(
    records: CheckoutRecords, scope: str, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any) -> Any:
        raise sa.exc.OperationalError("SELECT", {}, Exception("database is locked"))

    keys = Idempotency(records, lambda: NOW, RULES)
    records.claim = broken  # type: ignore[method-assign]
    work = Work((200, {}))
    logged = caplog.at_level(logging.ERROR, "cartagent.commerce.idempotency")
    with logged, pytest.raises(Refusal) as raised:
        keys.run(scope, "k", {}, work)
    assert (raised.value.status, work.runs) == (503, 0)
    assert [r.getMessage() for r in caplog.records] == [
        f"idempotency key 'k' in '{scope}' could not be claimed"
    ]


def test_an_answer_that_cannot_be_stored_is_still_given_and_logged(
    records: CheckoutRecords, scope: str, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any) -> Any:
        raise sa.exc.OperationalError("UPDATE", {}, Exception("disk full"))

    keys = Idempotency(records, lambda: NOW, RULES)
    records.finish = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, "cartagent.commerce.idempotency"):
        answer = keys.run(scope, "k", {}, Work((201, {"id": "co_1"})))
    assert (answer.status, answer.json()) == (201, {"id": "co_1"})
    assert [r.getMessage() for r in caplog.records] == [
        f"the answer for idempotency key 'k' in '{scope}' was not stored"
    ]


def test_an_answer_reads_back_as_json() -> None:
    assert Answer(200, b'{"a": [1]}').json() == {"a": [1]}
