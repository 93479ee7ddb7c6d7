"""A stateful property test of trading through the public HTTP API (issue 7, item 4).

Two merchants with funded wallets and callback receivers create withdrawals (client, quick, self
buys) and deposits (client standard and instant, self sells) and cancel them (whole trades and
single items, also as a caller who does not own the trade); the outside world moves them (sandbox
events, the bot fleet, the merchants' answers to approval callbacks) and time passes (the sandbox
clock, then the beat's sweeps). A worker may lose the task a request queued; a sweep must re-drive
it. After every step ``check_all`` (invariants.py) checks the wallet, the state machine, the money
and the webhooks; every answer is checked by the harness (api.py).

Isolation: hypothesis runs every example inside this one pytest-django test, whose transaction
pytest-django rolls back at the end. The world (merchants, catalog, listings, bot, platform users)
is built once in that transaction. Each example opens a savepoint in the machine's ``__init__``
and rolls it back in ``teardown`` (hypothesis calls it after every example, failed or not), and
clears the Redis cache (clock offset, inventory snapshots, rate-limit counters), so every example
starts from the same state. On-commit work is run by the harness, as a worker would after commit.

Settings: 10 examples of up to 30 steps, derandomized (a fixed seed, no example database), no
deadline: 30-35 s on the shared 2-core machine at load 2-3, 40-55 s at load 7-8 (once 76 s).
For a longer hunt raise ``max_examples`` (80 examples of 40 steps take about 5 minutes).
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from merchants.webhooks.tasks import sweep_webhooks
from tests.factories import auth_body, trade_url
from tests.properties.api import Answer, Api
from tests.properties.invariants import TERMINAL, Delivery, ItemView, Observed, check_all
from tests.properties.world import CENT, CS, RUST, Party, World, world_build
from tests.withdrawals.receiver import Received, receiver
from trading.models import Trade
from trading.tasks import sweep_cancels, sweep_deposit_offers, sweep_holds, sweep_purchases

pytestmark = pytest.mark.django_db

SETTINGS = settings(
    max_examples=10,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# How the merchant answers approval callbacks: approve, reject in the body, refuse with a 4xx
# (also a rejection), or fail to answer (retried, then APPROVAL_TIMEOUT).
MOODS = {
    "approve": (200, b"{}"),
    "reject": (200, b'{"action": "reject", "reason": "property test"}'),
    "refuse": (400, b""),
    "undecided": (503, b""),
}
SWEEPS = {
    "webhooks": sweep_webhooks,
    "purchases": sweep_purchases,
    "holds": sweep_holds,
    "deposit_offers": sweep_deposit_offers,
    "cancels": sweep_cancels,
}
# Minutes: 0 (the beat runs without time passing), past the approval retries, the purchase,
# cancel and offer graces, the deposit offer expiry, the 30-minute cancel rule, the 8-day hold.
CLOCK_STEPS = (0, 1, 3, 16, 31, 8 * 24 * 60 + 1)
# The sandbox events that can move an item in each status (others are drawn too, rarely).
WITHDRAW_EVENTS = {
    "pending": ("purchased", "purchase_failed"),
    "active": ("accepted", "declined"),
    "hold": ("hold_ended", "reversed"),
}
DEPOSIT_EVENTS = {
    "initiated": ("offer_created", "failed"),
    "pending": ("offer_sent", "failed"),
    "active": ("accepted", "declined", "failed"),
    "hold": ("hold_ended", "reversed"),
}
# A task the request queues for after commit, lost before any worker ran it.
CREATIONS = ("client_deposit", "self_buy", "client_withdraw", "quick_withdraw", "self_sell")
PURCHASE = "trading.withdrawal_purchase"
OFFER = "trading.deposit_offer"
CANCEL = "trading.complete_cancels"

PARTNER = st.sampled_from((1, 2))
RARELY = st.sampled_from((False, False, False, True))
SELDOM = st.sampled_from((False,) * 7 + (True,))
EXTERNAL_ID = st.sampled_from((None, "ext-1", "ext-2"))


def optional(name: str, value: object) -> dict[str, object]:
    """An optional body field, left out when None: the trading bodies refuse ``null`` today,
    although docs/decisions.md says optional body fields take it as "not given" (reported)."""
    return {} if value is None else {name: value}


@dataclass(frozen=True)
class Owner:
    """Whose trade it is, how it was made (``self`` or ``client``) and for which platform user."""

    party: Party
    route: str
    partner: int
    type: str


class TradingMachine(RuleBasedStateMachine):
    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self.example = transaction.atomic()
        self.example.__enter__()
        cache.clear()
        self.api = Api()
        self.observed = Observed()
        self.fleet = "online"
        self.clock_minutes = 0
        self.moods = {party.name: "approve" for party in world.parties}
        self.tokens: dict[tuple[str, int, int], dict[str, str]] = {}
        self.owners: dict[str, Owner] = {}  # in creation order, so draws replay the same
        for party in world.parties:
            party.receiver.received.clear()
            party.receiver.answer = self.answerer(party)

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self.example.__exit__(None, None, None)
        cache.clear()

    def answerer(self, party: Party) -> Any:
        """The merchant's receiver: records every delivery, answers approvals by mood."""

        def answer(got: Received) -> tuple[int, bytes]:
            payload = got.json
            trade = payload["trade"]
            status, body = 200, b"{}"
            if payload["type"] == "trade.initiated" and trade["type"] == Trade.Type.WITHDRAW:
                status, body = MOODS[self.moods[party.name]]
            self.observed.deliveries[trade["id"]].append(
                Delivery(payload["id"], payload["sequence"], trade["status"], status)
            )
            return status, body

        return answer

    # --- helpers -------------------------------------------------------------------------------

    def party(self, data: st.DataObject) -> Party:
        return data.draw(st.sampled_from(self.world.parties), label="merchant")

    def other(self, party: Party) -> Party:
        return next(p for p in self.world.parties if p is not party)

    def client_headers(self, party: Party, partner: int) -> dict[str, str]:
        """A token minted at the current service time (tokens expire after a day)."""
        key = (party.name, partner, self.clock_minutes)
        if key not in self.tokens:
            answer = self.api.post("/auth/authenticate-client", auth_body(partner), party.headers)
            assert answer.ok, answer
            self.tokens[key] = {"Authorization": f"Bearer {answer.data['token']}"}
        return self.tokens[key]

    def post(self, path: str, body: object, headers: dict[str, str], *, lost: str = "") -> Answer:
        """A request; a refused one must have written nothing."""
        self.observed.before_request()
        answer = self.api.post(path, body, headers, lost=lost, fleet_online=self.fleet == "online")
        self.observed.after_request(ok=answer.ok)
        return answer

    def created(self, answer: Answer, party: Party, route: str, partner: int) -> None:
        if answer.ok:
            self.owners[answer.data["id"]] = Owner(party, route, partner, answer.data["type"])

    def items(self, trade_id: str) -> list[ItemView]:
        return self.observed.items_of[trade_id]

    def pick_trade(self, data: st.DataObject) -> str:
        """Mostly a trade still in flight."""
        trades = list(self.owners)
        live = [t for t in trades if self.observed.trades.get(t) not in TERMINAL]
        pool = live if live and not data.draw(SELDOM, label="any trade") else trades
        return data.draw(st.sampled_from(pool), label="trade")

    def external_id(self, data: st.DataObject) -> dict[str, str]:
        """Sometimes an externalId, from a small pool so some are taken already."""
        return optional("externalId", data.draw(EXTERNAL_ID, label="externalId"))

    def lost(self, data: st.DataObject, task: str) -> str:
        return task if data.draw(RARELY, label=f"{task} lost") else ""

    def listing_items(self, data: st.DataObject, party: Party, game: int) -> list[dict[str, Any]]:
        listings = data.draw(
            st.lists(
                st.sampled_from(self.world.listings_of(game)), min_size=1, max_size=3, unique=True
            ),
            label="listings",
        )
        items = [
            {
                "itemId": listing.id,
                "price": self.world.withdraw_price(party, listing),
                "externalId": f"line-{n}",
            }
            for n, listing in enumerate(listings)
        ]
        if data.draw(RARELY, label="price changed"):
            items[0]["price"] += CENT
        return items

    def inventory_items(
        self, data: st.DataObject, party: Party, partner: int
    ) -> list[dict[str, Any]]:
        item_ids = data.draw(
            st.lists(
                st.sampled_from(list(self.world.inventories[partner])),
                min_size=1,
                max_size=3,
                unique=True,
            ),
            label="inventory items",
        )
        items = [
            {"itemId": i, "price": self.world.deposit_price(party, partner, i)} for i in item_ids
        ]
        if data.draw(RARELY, label="price changed"):
            items[0]["price"] += CENT
        return items

    # Hypothesis tries rules with fewer arguments first, so the rules that move trades take one
    # and the rarer ones (creating, cancelling, the beat, the switches) take two.

    # --- creating trades -----------------------------------------------------------------------

    @initialize(data=st.data())
    def open_trades(self, data: st.DataObject) -> None:
        """Every example starts with a few trades for the world to move."""
        for kind in data.draw(st.lists(st.sampled_from(CREATIONS), min_size=2, max_size=4)):
            getattr(self, kind)(data, self.party(data))

    @rule(data=st.data(), kind=st.sampled_from(CREATIONS))
    def create_trade(self, data: st.DataObject, kind: str) -> None:
        getattr(self, kind)(data, self.party(data))

    def self_buy(self, data: st.DataObject, party: Party) -> None:
        game = data.draw(st.sampled_from((CS, CS, RUST)), label="game")
        partner = data.draw(st.sampled_from((1, 2, 42)), label="partner")
        body = {
            "tradeUrl": trade_url(partner),
            "items": self.listing_items(data, party, game),
            "game": str(game),
            **self.external_id(data),
        }
        answer = self.post("/secure/buy", body, party.headers, lost=self.lost(data, PURCHASE))
        self.created(answer, party, "self", partner)

    def client_withdraw(self, data: st.DataObject, party: Party) -> None:
        partner = data.draw(PARTNER, label="partner")
        body = {
            "items": self.listing_items(data, party, CS),
            **optional(
                "autoCancel", data.draw(st.sampled_from((None, 30, 60, 720)), label="autoCancel")
            ),
            **self.external_id(data),
        }
        headers = self.client_headers(party, partner)
        answer = self.post(
            "/client/trading/withdraw", body, headers, lost=self.lost(data, PURCHASE)
        )
        self.created(answer, party, "client", partner)

    def quick_withdraw(self, data: st.DataObject, party: Party) -> None:
        route = data.draw(st.sampled_from(("self", "client")), label="route")
        partner = data.draw(PARTNER, label="partner")
        body: dict[str, Any] = {
            "itemId": self.world.quick_item,
            "maxPrice": data.draw(st.sampled_from(self.world.quick_prices), label="maxPrice"),
            "amount": data.draw(st.integers(1, 3), label="amount"),
        }
        if route == "self":
            path, headers = "/secure/buy/quick", party.headers
            body["tradeUrl"] = trade_url(partner)
        else:
            path, headers = "/client/trading/withdraw/quick", self.client_headers(party, partner)
        answer = self.post(path, body, headers, lost=self.lost(data, PURCHASE))
        self.created(answer, party, route, partner)

    def client_deposit(self, data: st.DataObject, party: Party) -> None:
        partner = data.draw(PARTNER, label="partner")
        body = {
            "items": self.inventory_items(data, party, partner),
            "isInstant": data.draw(st.booleans(), label="isInstant"),
            **self.external_id(data),
        }
        headers = self.client_headers(party, partner)
        answer = self.post("/client/trading/deposit", body, headers, lost=self.lost(data, OFFER))
        self.created(answer, party, "client", partner)

    def self_sell(self, data: st.DataObject, party: Party) -> None:
        partner = data.draw(PARTNER, label="partner")
        body = {
            "tradeUrl": trade_url(partner),
            "items": self.inventory_items(data, party, partner),
            **self.external_id(data),
        }
        answer = self.post("/secure/sell", body, party.headers, lost=self.lost(data, OFFER))
        self.created(answer, party, "self", partner)

    # --- cancels -------------------------------------------------------------------------------

    def cancel_caller(self, trade_id: str, who: str) -> tuple[str, dict[str, str], str]:
        """The route prefix, the caller's headers and the refusal a caller who may not cancel
        the trade gets: another merchant or another client (not found), or the merchant using
        its own route on a client's trade (forbidden)."""
        owner = self.owners[trade_id]
        if owner.route == "self" or who == "merchant":
            prefix = f"/secure/buy/{trade_id}"
            if who == "stranger":
                return prefix, self.other(owner.party).headers, "ITEM_NOT_FOUND"
            return prefix, owner.party.headers, "FORBIDDEN" if owner.route == "client" else ""
        prefix = f"/client/trading/withdraw/{trade_id}"
        if who == "stranger":
            return prefix, self.client_headers(owner.party, 3 - owner.partner), "ITEM_NOT_FOUND"
        return prefix, self.client_headers(owner.party, owner.partner), ""

    @precondition(lambda self: self.owners)
    @rule(data=st.data(), who=st.sampled_from(("owner", "owner", "merchant", "stranger")))
    def cancel_trade(self, data: st.DataObject, who: str) -> None:
        trade_id = self.pick_trade(data)
        prefix, headers, refusal = self.cancel_caller(trade_id, who)
        before = self.items(trade_id)
        if data.draw(st.booleans(), label="one item"):
            item = data.draw(st.sampled_from(before), label="item")
            by_external_id = data.draw(st.booleans(), label="by externalId")
            ref = item.external_id if by_external_id and item.external_id else item.public_id
            path = f"{prefix}/items/{ref}/cancel"
        else:
            path = f"{prefix}/cancel"
        answer = self.post(path, None, headers, lost=self.lost(data, CANCEL))
        if refusal:
            assert answer.error == refusal, answer
        self.observed.cancels_answered(trade_id, answer.data if answer.ok else None, before)

    # --- the outside world ---------------------------------------------------------------------

    @precondition(lambda self: self.owners)
    @rule(data=st.data())
    def move_trade(self, data: st.DataObject) -> None:
        """The outside world moves one trade up to three times (sandbox events, mostly ones that
        fit the state of an item), with the invariants checked after each."""
        trade_id = self.pick_trade(data)
        for step in range(data.draw(st.integers(1, 3), label="events")):
            if step:
                check_all(self.observed, self.world)
                if self.observed.trades[trade_id] in TERMINAL:
                    return
            self.trade_event(data, trade_id)

    def trade_event(self, data: st.DataObject, trade_id: str) -> None:
        owner = self.owners[trade_id]
        items = self.items(trade_id)
        moves = DEPOSIT_EVENTS if owner.type == Trade.Type.DEPOSIT else WITHDRAW_EVENTS
        fitting = list(dict.fromkeys(e for i in items for e in moves.get(i.status, ())))
        every = list(dict.fromkeys(e for events in moves.values() for e in events))
        surprise = data.draw(RARELY, label="any event")
        name = data.draw(st.sampled_from(every if surprise or not fitting else fitting))
        body: dict[str, Any] = {"event": name}
        if owner.type == Trade.Type.WITHDRAW and data.draw(RARELY, label="some items"):
            chosen = data.draw(st.lists(st.sampled_from(items), min_size=1, unique=True))
            body["itemIds"] = [i.external_id or i.public_id for i in chosen]
        stranger = data.draw(SELDOM, label="stranger")
        headers = self.other(owner.party).headers if stranger else owner.party.headers
        answer = self.post(f"/sandbox/trades/{trade_id}/events", body, headers)
        if stranger:
            assert answer.error == "TRADE_NOT_FOUND", answer

    @rule(data=st.data(), minutes=st.sampled_from(CLOCK_STEPS))
    def beat(self, data: st.DataObject, minutes: int) -> None:
        """Time passes (or not), then the beat runs some of its sweeps, in some order."""
        if minutes:
            body = {"minutes": minutes}
            answer = self.post("/sandbox/clock/advance", body, self.world.parties[0].headers)
            assert answer.ok, answer
            self.clock_minutes += minutes
        sweeps = data.draw(
            st.lists(st.sampled_from(sorted(SWEEPS)), min_size=1, unique=True), label="sweeps"
        )
        for name in sweeps:
            self.api.run(SWEEPS[name])

    @rule(data=st.data(), fleet=st.booleans())
    def switch(self, data: st.DataObject, fleet: bool) -> None:
        """A merchant changes how it answers approvals, or the bot fleet changes."""
        if fleet:
            status = data.draw(st.sampled_from(("online", "degraded", "offline")), label="fleet")
            answer = self.post("/sandbox/bots", {"status": status}, self.world.parties[0].headers)
            assert answer.ok, answer
            self.fleet = status
        else:
            party = self.party(data)
            self.moods[party.name] = data.draw(st.sampled_from(list(MOODS)), label="mood")

    @invariant()
    def everything_holds(self) -> None:
        check_all(self.observed, self.world)


@pytest.fixture
def world(db: None) -> Iterator[World]:
    with receiver() as alice_hooks, receiver() as bob_hooks:
        yield world_build(alice_hooks, bob_hooks)


def test_trading_keeps_its_invariants(world: World) -> None:
    run_state_machine_as_test(lambda: TradingMachine(world), settings=SETTINGS)
