"""The assistant's money invariants, checked after every step of a random shopper.

A Hypothesis state machine drives the whole assistant (conversation store on SQLite and on
PostgreSQL, the in-process sandbox taking the money) through cart → order → approval on
PayPal's page → yes → capture → return → refund, with "crash here" steps: the server dies
before or after any PayPal call of the next turn, or before or after the turn's commit, and
is started again on the same database. After every step, PayPal's own records are held to:

- every unit captured was asked for: per variant, the units in captured orders never exceed
  the units the shopper put in the cart (no second charge for one cart, crash or not);
- a capture happens only in a turn whose text is a yes, for an order holding exactly the cart
  as stored before that turn (the yes came after the last change to the cart);
- per line, what was refunded is at most what was paid for that line, each line once; per
  order, refunds never reach the shipping (the store's policy); refunds only after a yes;
- every message the shopper saw answered is still in the conversation after a restart.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from cartagent.assistant import Assistant, ConversationStore, Domain
from cartagent.assistant.conversation import CartLine, Conversation
from cartagent.assistant.router import Route, RouteContext
from cartagent.assistant.specialists import (
    BackOfficeSpecialist,
    CheckoutSpecialist,
    DiscoverySpecialist,
    OrdersSpecialist,
    OutOfScopeSpecialist,
    ReturnsSpecialist,
    StoreQuestionsSpecialist,
)
from cartagent.commerce.terms import DEMO_STORE
from cartagent.retrieval.search import Searcher
from cartagent.testing import HashingEmbedder
from cartagent.tools import Toolkit, ToolResult

# postgres: it found a VARCHAR overflow only PostgreSQL refuses (SQLite ignores a column's
# width); slow: a state machine over the whole assistant.
pytestmark = [pytest.mark.postgres, pytest.mark.slow]

_RETURN_URL = "http://127.0.0.1:8000/shop?session={session}"  # as `cartagent serve` sets it
_YES = "yes"


class Crash(BaseException):
    """The server process dies here (nothing of the turn after this point happens)."""


class ScriptedRouter:
    """Routes the machine's fixed sentences (the real routers are tested elsewhere)."""

    async def route(self, text: str, context: RouteContext | None = None) -> Route:
        if text.startswith(("show", "a ")):
            domain = Domain.DISCOVERY
        elif text.startswith("where"):
            domain = Domain.ORDERS
        elif "return" in text:
            domain = Domain.RETURNS_REFUNDS
        else:
            domain = Domain.CART_CHECKOUT
        return Route(domain, 1.0, "rules")


@dataclass
class Ledger:
    """What PayPal was asked and answered, seen at the toolkit: ground truth even for calls
    whose turn was lost to a crash."""

    orders: dict[str, Counter[str]] = field(default_factory=dict)  # order id -> units
    totals: dict[str, Decimal] = field(default_factory=dict)
    shipping: dict[str, Decimal] = field(default_factory=dict)
    lines: dict[str, dict[str, Decimal]] = field(default_factory=dict)  # id -> sku -> total
    captured: dict[str, str] = field(default_factory=dict)  # capture id -> order id
    refunds: list[tuple[str, Decimal, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class CrashingToolkit:
    """The assistant's toolkit, recording every PayPal answer and dying where it is told."""

    def __init__(self, toolkit: Toolkit, ledger: Ledger) -> None:
        self.toolkit = toolkit
        self.ledger = ledger
        self.crash_at: tuple[str, int] | None = None  # ("before"|"after", nth call of a turn)
        self.calls = 0
        self.text = ""
        self.cart: tuple[CartLine, ...] = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.toolkit, name)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls += 1
        if self.crash_at == ("before", self.calls):
            raise Crash
        result = await self.toolkit.call(name, arguments)
        if not result.is_error:
            self._record(name, arguments, result.content)
        if self.crash_at == ("after", self.calls):
            raise Crash
        return result

    def _record(self, name: str, arguments: dict[str, Any], content: dict[str, Any]) -> None:
        ledger = self.ledger
        if name == "create_order":
            order_id = str(content["id"])
            units: Counter[str] = Counter()
            lines: dict[str, Decimal] = {}
            for item in arguments["items"]:
                quantity = int(item["quantity"])
                units[item["sku"]] += quantity
                price = Decimal(item["unit_price"])
                line = CartLine("p", item["sku"], "x", price, "USD", quantity)
                lines[item["sku"]] = DEMO_STORE.line_total(line).amount
            ledger.orders[order_id] = units
            ledger.lines[order_id] = lines
            ledger.totals[order_id] = Decimal(str(content["amount"]))
            ledger.shipping[order_id] = Decimal(arguments.get("shipping") or 0)
        elif name == "capture_order":
            order_id = str(arguments["order_id"])
            ledger.captured[str(content["capture_id"])] = order_id
            if self.text != _YES:
                ledger.problems.append(f"captured {order_id} in a turn that said {self.text!r}")
            ordered = Counter({line.variant_id: line.quantity for line in self.cart})
            if ordered != ledger.orders.get(order_id):
                ledger.problems.append(
                    f"captured {order_id} ({ledger.orders.get(order_id)}) for a cart of "
                    f"{dict(ordered)}: the yes was not given after the last change"
                )
        elif name == "create_refund":
            if self.text != _YES:
                ledger.problems.append(f"refunded in a turn that said {self.text!r}")
            ledger.refunds.append(
                (
                    str(arguments["capture_id"]),
                    Decimal(str(content["amount"])),
                    arguments.get("invoice_id"),
                )
            )


class CrashingStore(ConversationStore):
    """The conversation store, dying before or after a turn's commit when told."""

    crash_save: str | None = None

    def save_turn(self, state: Conversation, turn: Any) -> int:
        if self.crash_save == "before":
            raise Crash
        version = super().save_turn(state, turn)
        if self.crash_save == "after":
            raise Crash  # committed, but the shopper never saw the answer
        return version


SAYINGS = {
    "search": ["show me t-shirts", "a coffee mug"],
    "add": ["add the first one to my cart", "add the second one to my cart"],
    "quantity": ["make it 2", "make it 3", "make it 1"],
    "remove": ["empty my cart", "remove the first one"],
    "checkout": ["checkout"],
    "answer": [_YES, "no", "done"],
    "orders": ["where is my order"],
    "return": ["I want to return the t-shirt", "return the mug", "I want to return my order"],
}


class ShopperMachine(RuleBasedStateMachine):
    """One shopper's session against a server that may die at any step."""

    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self.ledger = Ledger()
        self.toolkit = CrashingToolkit(world.toolkit, self.ledger)
        self.store: CrashingStore = world.open_store()
        self.assistant = self._start()
        self.session = self.assistant.open_session(owner="shopper")
        self.acknowledged: list[str] = []
        self.asked: Counter[str] = Counter()  # units the shopper put in the cart
        self.crash_save: str | None = None

    def _start(self) -> Assistant:
        specialists = (
            DiscoverySpecialist(),
            CheckoutSpecialist(return_url=_RETURN_URL),
            OrdersSpecialist(),
            ReturnsSpecialist(),
            OutOfScopeSpecialist(),
            BackOfficeSpecialist(),
            StoreQuestionsSpecialist(HashingEmbedder()),
        )
        return Assistant(
            ScriptedRouter(),
            self.store,
            searcher=self.world.searcher,
            toolkit=cast(Toolkit, self.toolkit),
            specialists=specialists,
        )

    def _restart(self) -> None:
        self.store.close()
        self.store = self.world.open_store()
        self.assistant = self._start()

    def _say(self, text: str) -> None:
        before = self.store.load(self.session)
        self.toolkit.calls = 0
        self.toolkit.text = text.strip().casefold()
        self.toolkit.cart = tuple(before.cart)
        self.store.crash_save, self.crash_save = self.crash_save, None
        try:
            self.world.run(self.assistant.turn(self.session, text))
        except Crash:
            self._restart()
        else:
            self.acknowledged.append(text)
        finally:
            self.toolkit.crash_at = None
            self.store.crash_save = None
        after = self.store.load(self.session)
        held = Counter({line.variant_id: line.quantity for line in before.cart})
        for line in after.cart:
            self.asked[line.variant_id] += max(line.quantity - held[line.variant_id], 0)

    @rule(kind=st.sampled_from(sorted(SAYINGS)), data=st.data())
    def say(self, kind: str, data: st.DataObject) -> None:
        self._say(data.draw(st.sampled_from(SAYINGS[kind])))

    def _advance(self) -> None:
        """The next step of buying and returning, from where the conversation is (random
        sayings alone seldom get as far as a refund)."""
        state = self.store.load(self.session)
        pending = None if state.pending is None else state.pending.kind
        if pending == "pay_order":
            order_id = str(state.pending.data["order_id"]) if state.pending else ""
            seen = self.world.run(self.world.toolkit.call("get_order", {"order_id": order_id}))
            if seen.content.get("status") in ("CREATED", "PAYER_ACTION_REQUIRED"):
                self.approve_on_paypal()
                return
        if pending is not None:
            self._say(_YES)
        elif not state.results:
            self._say("show me t-shirts")
        elif state.cart:
            self._say("checkout")
        elif any(o.paid_at and o.refunded < o.total for o in state.orders):
            self._say(SAYINGS["return"][len(state.orders) % 3])
        else:
            self._say(SAYINGS["add"][len(state.orders) % 2])

    @rule()
    def advance(self) -> None:
        self._advance()

    @rule()
    def advance_again(self) -> None:  # a second rule: the flow moves on more often than not
        self._advance()

    @rule()
    def approve_on_paypal(self) -> None:
        """The shopper presses "Pay Now" on PayPal's page for the latest order."""
        if self.ledger.orders:
            latest = list(self.ledger.orders)[-1]
            self.world.http.post(f"/checkoutnow?token={latest}", data={}, follow_redirects=False)

    @rule(when=st.sampled_from(["before", "after"]), nth=st.integers(1, 3))
    def crash_in_next_paypal_call(self, when: str, nth: int) -> None:
        self.toolkit.crash_at = (when, nth)

    @rule(when=st.sampled_from(["before", "after"]))
    def crash_at_next_commit(self, when: str) -> None:
        self.crash_save = when

    @invariant()
    def no_unit_is_paid_for_twice(self) -> None:
        paid: Counter[str] = Counter()
        for order_id in set(self.ledger.captured.values()):
            paid.update(self.ledger.orders[order_id])
        over = {v: (n, self.asked[v]) for v, n in paid.items() if n > self.asked[v]}
        assert not over, f"paid units (paid, asked) beyond what was asked: {over}"

    @invariant()
    def captures_and_refunds_follow_a_yes(self) -> None:
        assert not self.ledger.problems, self.ledger.problems

    @invariant()
    def refunds_stay_within_each_line_and_never_the_shipping(self) -> None:
        by_capture: dict[str, Decimal] = {}
        lines_refunded: Counter[str] = Counter()
        for capture_id, amount, invoice_id in self.ledger.refunds:
            order_id = self.ledger.captured[capture_id]
            by_capture[capture_id] = by_capture.get(capture_id, Decimal(0)) + amount
            assert invoice_id, "a return's refund names the line it returns"
            lines_refunded[invoice_id] += 1
            prefix = f"return-{capture_id}-line-"
            if invoice_id.startswith(prefix):
                line_total = self.ledger.lines[order_id][invoice_id.removeprefix(prefix)]
                assert amount <= line_total, (invoice_id, amount, line_total)
        assert all(n == 1 for n in lines_refunded.values()), lines_refunded
        for capture_id, refunded in by_capture.items():
            order_id = self.ledger.captured[capture_id]
            goods = self.ledger.totals[order_id] - self.ledger.shipping[order_id]
            assert refunded <= goods, (order_id, refunded, goods)

    @invariant()
    def every_acknowledged_message_survives(self) -> None:
        stored = [
            m.text
            for m in self.store.load(self.session, history=10_000).messages
            if m.role == "user"
        ]
        it = iter(stored)
        assert all(text in it for text in self.acknowledged), (self.acknowledged, stored)

    def teardown(self) -> None:
        self.store.close()


@dataclass
class World:
    """What outlives a restart: the sandbox (PayPal), the database, the shopper's browser."""

    url: str
    toolkit: Toolkit
    http: TestClient
    searcher: Searcher
    loop: asyncio.AbstractEventLoop

    def open_store(self) -> CrashingStore:
        return CrashingStore.open(self.url)  # type: ignore[return-value]

    def run(self, work: Any) -> Any:
        return self.loop.run_until_complete(work)


@pytest.fixture
def world(
    database_url: str, shop_toolkit: Toolkit, http: TestClient, shop_searcher: Searcher
) -> Iterator[World]:
    loop = asyncio.new_event_loop()
    yield World(database_url, shop_toolkit, http, shop_searcher, loop)
    loop.close()


def test_money_invariants_hold_for_a_random_shopper_on_a_crashing_server(world: World) -> None:
    run_state_machine_as_test(
        lambda: ShopperMachine(world),
        settings=settings(
            max_examples=40,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )


def test_the_invariants_catch_a_second_charge() -> None:
    """The check is not vacuous: two captures of one asked unit fail it."""
    machine = ShopperMachine.__new__(ShopperMachine)
    machine.ledger = Ledger(orders={"A": Counter(v=1), "B": Counter(v=1)})
    machine.ledger.captured = {"C1": "A", "C2": "B"}
    machine.asked = Counter(v=1)
    with pytest.raises(AssertionError, match="beyond what was asked"):
        machine.no_unit_is_paid_for_twice()
