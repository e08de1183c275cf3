"""The store: what a request's transaction costs in statements and round trips, and what its
shortcuts (rows held, lookups sent ahead, pipelined statements) must never change."""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from cartagent.bench.sandbox import ORDER  # the benchmark's order: these are its flows
from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import Store
from tests.conftest import START, Api, approve

# Advisory locks, FOR UPDATE and the statements each dialect sends: the backend is the point.
pytestmark = pytest.mark.postgres


class Wire:
    """Counts what the store sends its database while a block runs.

    SQLite: the statements executed (``sqlite3`` trace callback). PostgreSQL: the round trips,
    read from libpq's protocol trace: each ``Sync`` or ``Flush`` the client sends (a ``Flush``
    right behind a ``Sync`` adds no wait) and each simple ``Query``.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.statements: list[str] = []  # those sent inside the last block
        self._live: list[str] = []
        self._log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by close()
        self._traced: set[int] = set()
        self._start = 0
        self.round_trips = 0
        sa.event.listen(store.engine, "checkout", self._on_checkout)

    def _on_checkout(self, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if id(dbapi_connection) in self._traced:
            return
        self._traced.add(id(dbapi_connection))
        if self.store.dialect == "sqlite":
            dbapi_connection.set_trace_callback(self._live.append)
        else:
            from psycopg import pq

            dbapi_connection.pgconn.trace(self._log.fileno())
            dbapi_connection.pgconn.set_trace_flags(
                pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE
            )

    def close(self) -> None:
        sa.event.remove(self.store.engine, "checkout", self._on_checkout)
        self.store.engine.dispose()  # drops the traced connections
        self._log.close()

    def __enter__(self) -> Wire:
        self._live.clear()
        self._log.flush()
        self._start = os.fstat(self._log.fileno()).st_size
        return self

    def __exit__(self, *exc: object) -> None:
        self.statements = list(self._live)
        self._log.flush()
        self._log.seek(self._start)
        sent = re.findall(r"^F\t\d+\t(\w+)", self._log.read(), re.MULTILINE)
        self._log.seek(0, os.SEEK_END)
        self.round_trips = sum(
            1
            for i, message in enumerate(sent)
            if message in ("Sync", "Query")
            or (message == "Flush" and (i == 0 or sent[i - 1] != "Sync"))
        )
        self.messages = Counter(sent)


@pytest.fixture
def wire(store: Store) -> Iterator[Wire]:
    counter = Wire(store)
    yield counter
    counter.close()


def _flow(api: Api, wire: Wire) -> dict[str, Wire]:
    """One create → approve → capture flow (the benchmark's), each step measured; the figures
    are taken on the second flow, once connections are warm."""
    seen: dict[str, Wire] = {}
    for _ in range(2):
        with wire:
            created = api.post("/v2/checkout/orders", json=ORDER)
        seen["create"] = _snapshot(wire)
        with wire:
            approved = approve(api, created.json()["id"])
        seen["approve"] = _snapshot(wire)
        with wire:
            captured = api.post(f"/v2/checkout/orders/{created.json()['id']}/capture")
        seen["capture"] = _snapshot(wire)
        assert (created.status_code, approved.status_code, captured.status_code) == (201, 200, 201)
    return seen


def _snapshot(wire: Wire) -> Any:
    return type("Seen", (), {"statements": list(wire.statements), "round_trips": wire.round_trips})


def test_a_checkout_flow_costs_few_round_trips_or_statements(
    store: Store, api: Api, wire: Wire
) -> None:
    seen = _flow(api, wire)
    if store.dialect == "postgresql":
        # BEGIN with the merchant's clock and webhooks; writes with the COMMIT. Before these
        # were pipelined: 11, 15 and 16 round trips.
        budget = {"create": 2, "approve": 3, "capture": 4}
        assert {step: seen[step].round_trips for step in budget} == budget
    else:
        # BEGIN IMMEDIATE, the clock, the writes, the webhook lookup, COMMIT.
        budget = {"create": 6, "approve": 7, "capture": 11}
        assert {step: len(seen[step].statements) for step in budget} == budget


def test_descendants_come_parents_first_each_level_in_creation_order(sandbox: Sandbox) -> None:
    with sandbox.store.transaction("m-tree") as tx:
        for name, parent, minutes in [
            ("a", "root", 2),
            ("b", "root", 1),
            ("b1", "b", 5),
            ("a1", "a", 3),
            ("a1x", "a1", 4),
            ("deep", "a1x", 0),
        ]:
            tx.insert("node", f"tree-{name}", {}, now=START + timedelta(minutes=minutes),
                      parent_id=f"tree-{parent}")  # fmt: skip
        below = [row.id.removeprefix("tree-") for row in tx.descendants("tree-root", depth=3)]
        two = [row.id.removeprefix("tree-") for row in tx.descendants("tree-root")]
    assert below == ["b", "a", "a1", "b1", "a1x"]
    assert two == ["b", "a", "a1", "b1"]


def test_a_row_written_in_the_transaction_reads_back_without_a_query(
    sandbox: Sandbox, wire: Wire
) -> None:
    with sandbox.store.transaction("m-held") as tx:
        tx.insert("thing", "held-1", {"n": 1}, now=START, status="NEW", parent_id="p")
        with wire:
            row = tx.get("thing", "held-1")
            assert row is not None
            row.data["n"] = 99  # the caller's copy: what is held does not change
            tx.update("thing", "held-1", {"n": 2}, now=START + timedelta(seconds=1), status="OLD")
            again = tx.get("thing", "held-1")
    if sandbox.store.dialect == "postgresql":
        assert wire.round_trips == 0  # the UPDATE waits in the pipeline for the COMMIT
    else:
        assert [sql.split()[0] for sql in wire.statements] == ["UPDATE"]
    assert again is not None
    assert (again.data, again.status, again.updated_at) == (
        {"n": 2},
        "OLD",
        START + timedelta(seconds=1),
    )
    with sandbox.store.transaction("m-held", write=False) as tx:
        stored = tx.get("thing", "held-1")
    assert stored is not None
    assert (stored.data, stored.status, stored.created_at, stored.parent_id) == (
        {"n": 2},
        "OLD",
        START,
        "p",
    )


def test_an_unlocked_read_is_not_held_so_a_locking_read_still_locks(
    sandbox: Sandbox, wire: Wire
) -> None:
    with sandbox.store.transaction("m-lock") as tx:
        tx.insert("thing", "lock-1", {}, now=START)
    with sandbox.store.transaction("m-lock") as tx:
        assert tx.get("thing", "lock-1") is not None
        with wire:
            assert tx.get("thing", "lock-1", lock=True) is not None
    if sandbox.store.dialect == "postgresql":
        assert wire.round_trips == 1
    else:
        assert len(wire.statements) == 1


def test_a_failed_pipelined_write_rolls_back_the_whole_transaction(sandbox: Sandbox) -> None:
    refused = pytest.raises(Exception, match=r"(?i)unique|duplicate")
    with refused, sandbox.store.transaction("m-fail") as tx:
        tx.insert("thing", "fail-1", {}, now=START)
        tx.insert("thing", "fail-2", {}, now=START)
        tx.insert("thing", "fail-1", {}, now=START)  # the same key: refused
        tx.update("thing", "fail-2", {"late": True}, now=START)
    with sandbox.store.transaction("m-fail", write=False) as tx:
        assert tx.find("thing") == []
    # The connection went back to the pool in a usable state.
    with sandbox.store.transaction("m-fail") as tx:
        tx.insert("thing", "fail-3", {}, now=START)
    with sandbox.store.transaction("m-fail", write=False) as tx:
        assert [row.id for row in tx.find("thing")] == ["fail-3"]


def test_a_lookup_sent_ahead_is_not_stale_after_a_write_of_its_kind(sandbox: Sandbox) -> None:
    with sandbox.store.transaction("m-ahead") as tx:
        tx.prefetch("hook")
        tx.insert("hook", "ahead-1", {}, now=START)
        assert [row.id for row in tx.find("hook", newest_first=False)] == ["ahead-1"]


def _wait_until_blocked(store: Store, thread: threading.Thread) -> None:
    """Until ``thread``'s transaction waits on this one: on PostgreSQL for the counter row, on
    SQLite for the write lock (the one place it can wait, which pg_stat_activity cannot show)."""
    if store.dialect != "postgresql":
        thread.join(0.2)
    else:
        waiting = sa.text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO counters%'"
        )
        deadline = time.monotonic() + 10
        with store.engine.connect() as conn:
            while not conn.execute(waiting).scalar() and time.monotonic() < deadline:
                thread.join(0.01)
    assert thread.is_alive()


def test_two_first_uses_of_a_counter_at_once_both_advance_it(store: Store) -> None:
    merchant, name = f"m-race-{uuid.uuid4().hex[:12]}", "invoicing.invoice_number"
    second: dict[str, int | BaseException] = {}

    def use_it_too() -> None:
        try:
            with store.transaction(merchant) as tx:
                second["value"] = tx.next_number(name)
        except BaseException as exc:  # reported by the assertion below
            second["value"] = exc

    with store.transaction(merchant) as tx:
        assert tx.next_number(name) == 1
        other = threading.Thread(target=use_it_too)
        other.start()
        _wait_until_blocked(store, other)
    other.join(10)
    assert second == {"value": 2}
    assert store.counter(merchant, name) == 2


def test_meta_setdefault_keeps_the_first_value_stored(store: Store) -> None:
    key = f"test-setdefault-{os.getpid()}"
    assert store.meta_setdefault(key, "first") == "first"
    assert store.meta_setdefault(key, "second") == "first"
    assert store.meta_get(key) == "first"


def test_the_buyer_page_approves_another_merchants_order_as_that_merchant(
    api: Api, other_api: Api, http: TestClient
) -> None:
    order = api.post("/v2/checkout/orders", json=ORDER).json()
    assert approve(api, order["id"]).status_code == 200
    assert api.get(f"/v2/checkout/orders/{order['id']}").json()["status"] == "APPROVED"
    assert other_api.get(f"/v2/checkout/orders/{order['id']}").status_code == 404
    assert http.post("/checkoutnow?token=NO-SUCH-ORDER", data={}).status_code == 404
    assert http.get("/checkoutnow?token=NO-SUCH-ORDER").status_code == 404


def _order(value: str) -> dict[str, Any]:
    return {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": value}}],
    }


def test_a_request_id_replays_only_for_the_merchant_that_sent_it(api: Api, other_api: Api) -> None:
    key = {"PayPal-Request-Id": "shared-key-1"}
    mine = api.post("/v2/checkout/orders", json=_order("10.00"), headers=key)
    theirs = other_api.post("/v2/checkout/orders", json=_order("20.00"), headers=key)
    assert (mine.status_code, theirs.status_code) == (201, 201), theirs.text
    assert theirs.json()["id"] != mine.json()["id"]
    shown = other_api.get(f"/v2/checkout/orders/{theirs.json()['id']}")
    assert shown.status_code == 200, shown.text  # its own order, not the other merchant's
    assert shown.json()["purchase_units"][0]["amount"]["value"] == "20.00"
    # Each merchant's own retry still replays its own answer.
    again = other_api.post("/v2/checkout/orders", json=_order("20.00"), headers=key)
    assert (again.status_code, again.json()["id"]) == (200, theirs.json()["id"])


def test_a_request_id_replays_only_for_the_operation_it_was_sent_with(api: Api) -> None:
    key = {"PayPal-Request-Id": "one-key-for-create-and-capture"}
    created = api.post("/v2/checkout/orders", json=_order("15.00"), headers=key)
    assert created.status_code == 201, created.text
    order_id = created.json()["id"]
    assert approve(api, order_id).status_code == 200
    captured = api.post(f"/v2/checkout/orders/{order_id}/capture", headers=key)
    assert captured.status_code == 201, captured.text  # a capture, not the create replayed
    assert captured.json()["status"] == "COMPLETED"
    captures = captured.json()["purchase_units"][0]["payments"]["captures"]
    assert [c["amount"]["value"] for c in captures] == ["15.00"]
    assert api.get(f"/v2/checkout/orders/{order_id}").json()["status"] == "COMPLETED"


# ---------------------------------------------------------------------- idempotency keys


def test_a_request_id_replays_until_it_expires_and_is_then_replaced(store: Store) -> None:
    merchant, other = (f"m-key-{uuid.uuid4().hex[:12]}" for _ in range(2))
    expires = START + timedelta(hours=1)
    later = START + timedelta(hours=2)
    with store.transaction(merchant) as tx:
        tx.remember("create", "k", 201, '"first"', expires)
        tx.remember("capture", "k", 201, '"capture"', later)  # another operation
        tx.remember("create", "k2", 201, '"k2"', later)  # another request id
    with store.transaction(other) as tx:
        tx.remember("create", "k", 201, '"theirs"', later)  # another merchant
    with store.transaction(merchant) as tx:
        assert tx.replay("create", "k", expires - timedelta(microseconds=1)) == (201, '"first"')
        assert tx.replay("create", "missing", START) is None
    with store.transaction(merchant) as tx:
        assert tx.replay("create", "k", expires) is None  # expired the moment it expires
        tx.remember("create", "k", 200, '"second"', later)  # this request's own answer
    with store.transaction(merchant) as tx:
        assert tx.replay("create", "k", expires) == (200, '"second"')
        assert tx.replay("capture", "k", expires) == (201, '"capture"')
        assert tx.replay("create", "k2", expires) == (201, '"k2"')
    with store.transaction(other) as tx:
        assert tx.replay("create", "k", expires) == (201, '"theirs"')


def test_on_postgresql_a_request_id_is_locked_until_its_transaction_ends(store: Store) -> None:
    if store.dialect != "postgresql":
        pytest.skip("SQLite runs one writing transaction at a time: no key lock is needed")
    held = sa.text(
        "SELECT count(*) FROM pg_locks "
        "WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()"
    )
    merchant = f"m-lock-{uuid.uuid4().hex[:12]}"
    with store.transaction(merchant) as tx:
        tx.lock_key("create", "k1")
        tx.lock_key("create", "k2")  # each request id has a lock of its own
        tx.lock_key("create", "k1")
        assert tx.conn.execute(held).scalar() == 2
