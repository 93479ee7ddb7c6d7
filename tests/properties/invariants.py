"""What must hold after every step of the trading state machine, checked against the database
and against what the machine saw before (statuses, accepted cancels, webhook deliveries)."""

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import pairwise

from merchants.models import Merchant
from merchants.webhooks.models import WebhookEvent
from sandbox.models import SandboxPurchase
from tests.properties.world import FUNDS, World
from trading.models import Trade, TradeItem
from trading.trades.services import derived_status
from wallet.models import Account
from wallet.selectors import wallet_balances, wallet_invariants_check

ZERO = Decimal("0.00")
IN_FLIGHT = ("initiated", "pending", "active", "hold")
TERMINAL = frozenset({"completed", "failed", "canceled", "declined", "reverted"})
# The item moves of the shared decisions, section 4 (written out here, not taken from the code).
WITHDRAW_MOVES = {
    "initiated": {"pending", "failed"},
    "pending": {"active", "failed", "canceled"},
    "active": {"hold", "declined", "canceled"},
    "hold": {"completed", "reverted"},
}
DEPOSIT_MOVES = {
    "initiated": {"pending", "canceled", "failed"},
    "pending": {"active", "canceled", "failed"},
    "active": {"declined", "canceled", "failed", "hold"},
    "hold": {"completed", "reverted"},
}
# An item whose cancel the API reported accepted may only wait for the worker, then be canceled.
AFTER_ACCEPTED_CANCEL = frozenset({"pending", "active", "canceled"})


def _reachable(moves: dict[str, set[str]], start: str) -> frozenset[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in moves.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


REACHABLE = {
    Trade.Type.WITHDRAW: {s: _reachable(WITHDRAW_MOVES, s) for s in WITHDRAW_MOVES},
    Trade.Type.DEPOSIT: {s: _reachable(DEPOSIT_MOVES, s) for s in DEPOSIT_MOVES},
}


def _rank(status: str) -> int:
    return IN_FLIGHT.index(status) if status in IN_FLIGHT else len(IN_FLIGHT)


@dataclass(frozen=True)
class Delivery:
    """One webhook POST as the merchant's receiver saw it, with the receiver's answer."""

    webhook_id: str
    sequence: int
    trade_status: str
    answered: int

    @property
    def accepted(self) -> bool:
        return 200 <= self.answered < 300


@dataclass(frozen=True)
class ItemView:
    pk: int
    public_id: str
    external_id: str
    status: str
    cancel_requested: bool


def state_fingerprint() -> tuple[object, ...]:
    """Everything a refused request must leave as it was."""
    return (
        list(
            TradeItem.objects.order_by("pk").values_list(
                "pk", "status", "locked", "cancel_requested_at"
            )
        ),
        list(Account.objects.order_by("pk").values_list("pk", "balance")),
        WebhookEvent.objects.count(),
        Trade.objects.count(),
    )


@dataclass
class Observed:
    """What the machine has seen so far."""

    trades: dict[str, str] = field(default_factory=dict)
    items: dict[int, str] = field(default_factory=dict)
    cancel_accepted: set[int] = field(default_factory=set)
    deliveries: dict[str, list[Delivery]] = field(default_factory=lambda: defaultdict(list))
    # trade id -> its items as last seen, for the rules to pick from
    items_of: dict[str, list[ItemView]] = field(default_factory=dict)
    # the state as of the last check or the last successful request; None: not known
    fingerprint: tuple[object, ...] | None = None

    def before_request(self) -> None:
        if self.fingerprint is None:
            self.fingerprint = state_fingerprint()

    def after_request(self, *, ok: bool) -> None:
        """A refused request must have written nothing."""
        if ok:
            self.fingerprint = None
        else:
            assert state_fingerprint() == self.fingerprint

    def cancels_answered(
        self, trade_id: str, answer: dict[str, object] | None, before: list[ItemView]
    ) -> None:
        """The items whose cancel this request accepted are as many as the answer says (all of
        a trade's answer's ``cancelled``, the one item of an item's answer, none of a refusal);
        from now on they may only become ``canceled``."""
        was = {item.pk: item.cancel_requested for item in before}
        requested = TradeItem.objects.filter(trade_id=trade_id, cancel_requested_at__isnull=False)
        newly = {pk for pk in requested.values_list("pk", flat=True) if not was[pk]}
        expected = 0 if answer is None else answer.get("cancelled", 1)
        assert len(newly) == expected, (trade_id, answer, newly)
        self.cancel_accepted |= newly


def check_all(observed: Observed, world: World) -> None:
    report = wallet_invariants_check()
    assert report.clean, report
    trades = list(Trade.objects.prefetch_related("items").order_by("created_at", "id"))
    for trade in trades:
        items = sorted(trade.items.all(), key=lambda i: i.position)
        _check_statuses(observed, trade, items)
        _check_webhooks(observed, trade)
        observed.items_of[str(trade.id)] = [
            ItemView(i.pk, i.public_id, i.external_id, i.status, i.cancel_requested_at is not None)
            for i in items
        ]
    _check_marketplace(observed, trades)
    for party in world.parties:
        merchant = party.actor.merchant
        _check_money(merchant, [t for t in trades if t.merchant_id == merchant.pk])
    observed.fingerprint = state_fingerprint()
    undelivered = WebhookEvent.objects.filter(status=WebhookEvent.Status.PENDING, is_approval=False)
    assert not undelivered.exists(), list(undelivered.values("type", "subject_id", "attempts"))


def _check_statuses(observed: Observed, trade: Trade, items: list[TradeItem]) -> None:
    trade_id = str(trade.id)
    assert trade.status == derived_status(items), (
        trade_id,
        trade.status,
        [i.status for i in items],
    )
    before = observed.trades.get(trade_id)
    if before in TERMINAL:
        assert trade.status == before, f"trade {trade_id} left {before} for {trade.status}"
    elif before is not None:
        assert _rank(trade.status) >= _rank(before), f"trade {trade_id}: {before} -> {trade.status}"
    observed.trades[trade_id] = trade.status
    reachable = REACHABLE[trade.type]
    for item in items:
        was = observed.items.get(item.pk, "initiated")
        if was in TERMINAL:
            assert item.status == was, f"item {item.pk} left {was} for {item.status}"
        else:
            assert item.status in reachable[was], f"item {item.pk}: {was} -> {item.status}"
        observed.items[item.pk] = item.status
        if item.pk in observed.cancel_accepted:
            assert item.status in AFTER_ACCEPTED_CANCEL, f"cancelled item {item.pk} {item.status}"
    if trade.type == Trade.Type.DEPOSIT:
        assert len({i.status for i in items}) == 1, "a deposit's items move together"
        if trade.status in TERMINAL:
            assert trade.pending_credit == ZERO


def _check_webhooks(observed: Observed, trade: Trade) -> None:
    """Per trade, the receiver sees sequences that never go back (an approval retried is the
    same event again) and accepts them strictly increasing; the last accepted one tells the
    trade's current status."""
    trade_id = str(trade.id)
    seen = observed.deliveries.get(trade_id, [])
    for earlier, later in pairwise(seen):
        assert later.sequence >= earlier.sequence, (trade_id, seen)
        if later.sequence == earlier.sequence:
            assert later.webhook_id == earlier.webhook_id, (trade_id, seen)
    accepted = [d.sequence for d in seen if d.accepted]
    assert accepted == sorted(set(accepted)), (trade_id, seen)
    last = next((d for d in reversed(seen) if d.accepted), None)
    if last is None:
        # Only an approval callback still waiting for the merchant's answer is not accepted.
        assert trade.type == Trade.Type.WITHDRAW, (trade_id, seen)
        assert trade.status == "initiated", (trade_id, seen)
        return
    assert last.sequence == trade.next_sequence - 1, (trade_id, trade.next_sequence, seen)
    assert last.trade_status == trade.status, (trade_id, trade.status, seen)


def _check_marketplace(observed: Observed, trades: list[Trade]) -> None:
    """The supplier is paid for what it delivered and keeps no purchase it cancelled or was
    never asked to cancel: a completed item's purchase stands, a canceled item's does not."""
    withdrawals = [t for t in trades if t.type == Trade.Type.WITHDRAW]
    items = [i for t in withdrawals for i in t.items.all()]
    purchases = dict(
        SandboxPurchase.objects.filter(key__in=[f"ti-{i.pk}" for i in items]).values_list(
            "key", "status"
        )
    )
    for item in items:
        purchase = purchases.get(f"ti-{item.pk}")
        if item.status == "completed":
            assert purchase == SandboxPurchase.Status.ACCEPTED, (item.pk, purchase)
        if item.status == "canceled":
            assert purchase != SandboxPurchase.Status.ACCEPTED, (item.pk, purchase)


def _check_money(merchant: Merchant, trades: list[Trade]) -> None:
    """Each balance is what the trades' statuses say it should be:
    locked = the in-flight withdrawal items (price x amount each, quick rows at their bound price
    or ceiling); escrow = standard client deposits in their hold; collateral = the merchant's part
    of instant deposits in their hold; and the merchant's total (available + locked + escrow +
    collateral) = the funding + the value of deposits credited (a reverted instant deposit leaves
    the provider's part) - the completed withdrawal items."""
    locked = escrow = collateral = spent = credited = ZERO
    for trade in trades:
        if trade.type == Trade.Type.WITHDRAW:
            for item in trade.items.all():
                gross = item.price * item.amount
                if item.status in TERMINAL:
                    assert item.locked == ZERO, (item.pk, item.status, item.locked)
                    spent += gross if item.status == "completed" else ZERO
                else:
                    assert item.locked == gross, (item.pk, item.status, item.locked, gross)
                    locked += gross
            continue
        value, merchant_part = trade.total_price, trade.collateral_merchant
        instant = trade.source == Trade.Source.CLIENT and trade.is_instant
        if instant:
            assert merchant_part + trade.collateral_provider == value
            assert min(merchant_part, trade.collateral_provider) >= ZERO
        if trade.status == "hold":
            credited += value
            if trade.source == Trade.Source.CLIENT and not trade.is_instant:
                escrow += value
            if instant:
                collateral += merchant_part
        elif trade.status == "completed":
            credited += value
        elif trade.status == "reverted" and instant:
            credited += value - merchant_part
    balances = wallet_balances(merchant=merchant)
    for held in ("locked", "escrow", "collateral"):
        assert balances[held] >= ZERO, balances
    assert balances["locked"] == locked, (balances, locked)
    assert balances["escrow"] == escrow, (balances, escrow)
    assert balances["collateral"] == collateral, (balances, collateral)
    assert sum(balances.values()) == FUNDS + credited - spent, (balances, credited, spent)
