"""The merchant's records: a checkout saved only over the version it was read at, idempotency
keys claimed once per scope (replayed, refused with another body, taken over once expired or
abandoned), and the webhook outbox leased, retried and given up on."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
import sqlalchemy as sa

from cartagent.commerce.checkout import Checkout, Line
from cartagent.commerce.records import LEASE, CheckoutRecords, Event, PendingEvent, fingerprint
from cartagent.database import create_engine
from cartagent.errors import CheckoutError

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)
TTL = timedelta(hours=24)
ABANDONED = timedelta(seconds=60)


@pytest.fixture
def tag(request: pytest.FixtureRequest) -> str:
    """A prefix of this test's own: the records' database is shared by the session's tests."""
    return hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]


def _checkout(checkout_id: str, updated_at: datetime = NOW) -> Checkout:
    return Checkout(
        id=checkout_id, owner="agent-a", protocol="acp", currency="USD",
        lines=(Line("l1", "item-1", 1),), created_at=NOW, updated_at=updated_at,
        expires_at=NOW + timedelta(hours=6),
    )  # fmt: skip


def _event(agent: str, name: str, protocol: str = "acp") -> Event:
    return Event(agent, f"https://agent.example/{name}", b"{}", protocol=protocol, id=name)


def test_a_checkout_is_saved_only_over_the_version_it_was_read_at(
    records: CheckoutRecords, tag: str
) -> None:
    checkout = _checkout(f"co_{tag}")
    records.insert(checkout)
    saved = records.save(checkout)
    assert saved.version == checkout.version + 1
    assert records.get(checkout.id, "agent-a") == saved
    assert records.get(checkout.id, "agent-b") is None  # another agent's checkout is not there
    with pytest.raises(CheckoutError) as raised:
        records.save(checkout)  # read at version 0, which is no longer the stored one
    assert str(raised.value) == (f"checkout co_{tag} was changed by another request; read it again")
    assert (raised.value.code, raised.value.status) == ("conflict", 409)
    assert records.get(checkout.id, "agent-a") == saved


def _outbox(records: CheckoutRecords, tag: str, *events: tuple[str, int, str]) -> str:
    """Events ``(name, seconds after NOW, protocol)``, each saved with a checkout of its own,
    for an agent of this test's own (returned)."""
    agent = f"agent-{tag}"
    for name, seconds, protocol in events:
        checkout = _checkout(f"co_{tag}_{name}", NOW + timedelta(seconds=seconds))
        records.insert(checkout)
        records.save(checkout, [_event(agent, f"evt_{tag}_{name}", protocol)])
    return agent


def _mine(records: CheckoutRecords, agent: str) -> list[PendingEvent]:
    return [event for event in records.events() if event.agent == agent]


def _names(events: list[PendingEvent]) -> list[str]:
    return [event.id.rsplit("_", 1)[1] for event in events]


def test_events_are_stored_with_the_change_and_listed_oldest_first(
    records: CheckoutRecords, tag: str
) -> None:
    agent = _outbox(records, tag, ("later", 300, "ucp"), ("earlier", 0, "ucp"))
    listed = _mine(records, agent)
    assert _names(listed) == ["earlier", "later"]
    assert [e.created_at for e in listed] == [NOW, NOW + timedelta(minutes=5)]
    assert (listed[0].state, listed[0].attempts, listed[0].protocol) == ("pending", 0, "ucp")


@pytest.mark.postgres  # leased with FOR UPDATE SKIP LOCKED on PostgreSQL
def test_due_events_are_leased_the_earliest_first_up_to_the_limit(
    records: CheckoutRecords, tag: str
) -> None:
    agent = _outbox(records, tag, ("c", 3, "acp"), ("a", 1, "acp"), ("b", 2, "acp"))
    due = NOW + timedelta(seconds=2)  # b is due exactly now
    assert _names(records.due_events(due, 1, [agent])) == ["a"]
    assert _names(records.due_events(due, 5, [agent])) == ["b"]  # a is leased
    assert records.due_events(due, 5, [agent]) == []
    assert records.due_events(NOW + timedelta(seconds=3), 5, [f"other-{tag}"]) == []
    # A minute on, the leases are up: c (due since NOW + 3 s) comes before a and b (due again).
    assert _names(records.due_events(due + LEASE, 5, [agent])) == ["c", "a", "b"]


def test_due_events_can_be_limited_to_the_protocols_the_sender_signs(
    records: CheckoutRecords, tag: str
) -> None:
    agent = _outbox(records, tag, ("acp", 0, "acp"), ("ucp", 0, "ucp"))
    assert _names(records.due_events(NOW, 5, [agent], ["ucp"])) == ["ucp"]


def test_a_delivered_event_counts_its_try_and_a_failed_one_is_retried_then_given_up(
    records: CheckoutRecords, tag: str
) -> None:
    agent = _outbox(records, tag, ("ok", 0, "acp"), ("bad", 0, "acp"))
    records.event_delivered(f"evt_{tag}_ok")
    retry_at = NOW + timedelta(minutes=1)
    records.event_failed(f"evt_{tag}_bad", "x" * 600, retry_at, give_up=2)
    ok, bad = _mine(records, agent)
    assert (ok.state, ok.attempts) == ("delivered", 1)
    assert (bad.state, bad.attempts, bad.last_error) == ("pending", 1, "x" * 500)
    assert records.due_events(retry_at - timedelta(seconds=1), 5, [agent]) == []
    assert _names(records.due_events(retry_at, 5, [agent])) == ["bad"]
    records.event_failed(f"evt_{tag}_bad", "down again", retry_at, give_up=2)
    bad = _mine(records, agent)[1]
    assert (bad.state, bad.attempts, bad.last_error) == ("failed", 2, "down again")


# --------------------------------------------------------------------- idempotency keys


@pytest.mark.postgres  # INSERT ... ON CONFLICT in each dialect's own SQL
def test_a_key_is_new_then_in_flight_then_replayed_and_refused_with_another_body(
    records: CheckoutRecords, tag: str
) -> None:
    scope = f"{tag}:create"
    assert records.claim(scope, "k1", "print-1", NOW).kind == "new"
    assert records.claim(scope, "k1", "print-1", NOW).kind == "in_flight"
    records.finish(scope, "k1", 201, b'{"id": "co_1"}')
    replay = records.claim(scope, "k1", "print-1", NOW)
    assert (replay.kind, replay.status_code, replay.body) == ("replay", 201, b'{"id": "co_1"}')
    assert records.claim(scope, "k1", "print-2", NOW).kind == "conflict"


def test_a_key_belongs_to_its_scope_when_finished_or_released(
    records: CheckoutRecords, tag: str
) -> None:
    mine, theirs = f"{tag}:a", f"{tag}:b"
    for scope in (mine, theirs):
        assert records.claim(scope, "shared", "print", NOW).kind == "new"
    records.finish(mine, "shared", 200, b"{}")
    assert records.claim(theirs, "shared", "print", NOW).kind == "in_flight"
    records.release(mine, "shared")
    assert records.claim(theirs, "shared", "print", NOW).kind == "in_flight"
    assert records.claim(mine, "shared", "print", NOW).kind == "new"
    # ... and to its own key within the scope.
    for key in ("one", "two", "three"):
        records.claim(mine, key, "print", NOW)
    records.finish(mine, "one", 200, b"{}")
    records.release(mine, "two")
    assert records.claim(mine, "three", "print", NOW).kind == "in_flight"


def test_a_server_error_is_never_stored_the_key_is_released(
    records: CheckoutRecords, tag: str
) -> None:
    for status, kind in ((500, "new"), (503, "new"), (499, "replay")):
        scope = f"{tag}:{status}"
        records.claim(scope, "k", "print", NOW)
        records.claim(f"{tag}:other", "k", "print", NOW)  # the same key in another scope
        records.finish(scope, "k", status, b"{}")
        assert records.claim(scope, "k", "print", NOW).kind == kind
        assert records.claim(f"{tag}:other", "k", "print", NOW).kind == "in_flight"


def test_a_key_expires_after_its_ttl_and_an_abandoned_one_after_a_minute(
    records: CheckoutRecords, tag: str
) -> None:
    records.claim(tag, "done", "print", NOW)
    records.finish(tag, "done", 200, b"{}")
    records.claim(tag, "kept", "print", NOW)
    records.finish(tag, "kept", 201, b'"kept"')
    assert records.claim(tag, "done", "print", NOW + TTL - timedelta(seconds=1)).kind == "replay"
    assert records.claim(tag, "done", "other-print", NOW + TTL).kind == "new"  # expired
    # Taken over: the key is now in flight for the new request, from the new time on.
    assert records.claim(tag, "done", "other-print", NOW + TTL).kind == "in_flight"
    assert records.claim(tag, "done", "print", NOW + TTL).kind == "conflict"
    # Taking over one key leaves every other key as it was.
    kept = records.claim(tag, "kept", "print", NOW)
    assert (kept.kind, kept.body) == ("replay", b'"kept"')
    records.claim(tag, "stuck", "print", NOW)  # its process died mid-request
    just_before = NOW + ABANDONED - timedelta(milliseconds=1)
    assert records.claim(tag, "stuck", "print", just_before).kind == "in_flight"
    assert records.claim(tag, "stuck", "print", NOW + ABANDONED).kind == "new"


def test_a_key_that_vanishes_between_the_insert_and_the_read_counts_as_in_flight(
    records: CheckoutRecords, tag: str
) -> None:
    records.claim(tag, "k", "print", NOW)  # the insert of the next claim conflicts with it
    vanish = [True]

    def meanwhile(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # Another request takes the key over and releases it, between the two statements.
        if (
            vanish
            and statement.lstrip().upper().startswith("SELECT")
            and ("merchant_idempotency_keys" in statement)
        ):
            vanish.clear()
            cursor.execute(f"DELETE FROM merchant_idempotency_keys WHERE scope = '{tag}'")

    sa.event.listen(records.engine, "before_cursor_execute", meanwhile)
    try:
        assert records.claim(tag, "k", "print", NOW).kind == "in_flight"
    finally:
        sa.event.remove(records.engine, "before_cursor_execute", meanwhile)


def test_the_same_request_has_one_fingerprint_whatever_its_key_order_or_number_spelling() -> None:
    def sha(value: Any) -> str:
        return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()

    assert fingerprint({"b": [1.0, {"c": 2.0}], "a": 1}) == sha({"a": 1, "b": [1, {"c": 2}]})
    assert fingerprint({"q": 1000.0}) == fingerprint({"q": 1000})
    assert fingerprint({"q": 1.5}) == sha({"q": 1.5})
    # A float too big for a 64-bit int stays the float it was parsed as.
    assert fingerprint({"q": 2.0**63}) == sha({"q": 2.0**63}) != sha({"q": 2**63})
    assert fingerprint({"q": -(2.0**64)}) == sha({"q": -(2.0**64)})
    assert fingerprint({"q": 2.0**63 - 1024}) == sha({"q": 2**63 - 1024})
    assert fingerprint([1.0, None]) != fingerprint([1.0])


@pytest.fixture
def old_outbox(tmp_path: Any) -> Iterator[sa.Engine]:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE merchant_webhook_events (id VARCHAR(40) PRIMARY KEY, "
            "agent VARCHAR(128) NOT NULL, url TEXT NOT NULL, body BLOB NOT NULL, "
            "state VARCHAR(12) NOT NULL, attempts INTEGER NOT NULL, next_at DATETIME NOT NULL, "
            "last_error TEXT, created_at DATETIME NOT NULL)"
        )
    yield engine
    engine.dispose()


def test_an_outbox_from_before_protocols_gets_a_protocol_column_of_its_type(
    old_outbox: sa.Engine,
) -> None:
    CheckoutRecords(old_outbox)
    [column] = [
        c
        for c in sa.inspect(old_outbox).get_columns("merchant_webhook_events")
        if (c["name"] == "protocol")
    ]
    assert isinstance(column["type"], sa.String) and column["type"].length == 16
    assert not column["nullable"]
