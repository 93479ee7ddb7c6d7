"""How a deposit ends once the offer is out: accepted into a hold, completed, reversed, or ended
before acceptance, with the wallet's transfers of decisions sections 3 and 4 in the same
transaction as the move."""

from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction

from core import clock
from core.errors import DomainError
from core.services import staff_action_record
from core.staff import Staff
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.models import Status, Trade, TradeItem
from trading.selectors.switches import game_settings_get
from trading.trades.channels import trade_events_publish
from trading.trades.services import Move, trade_apply, trade_lock
from wallet.services import DepositCredit, wallet_deposit_post


def _credit(trade: Trade) -> str:
    if trade.source == Trade.Source.SELF:
        return DepositCredit.SELF
    return DepositCredit.INSTANT if trade.is_instant else DepositCredit.ESCROW


def _money(trade: Trade, stage: str) -> None:
    wallet_deposit_post(
        merchant=trade.merchant,
        credit=_credit(trade),
        stage=stage,
        value=trade.total_price,
        merchant_part=trade.collateral_merchant,
        cause_id=str(trade.id),
    )


def deposit_accepted(
    *, trade: Trade, items: list[TradeItem], actor: str, hold_until: datetime | None = None
) -> None:
    """The owner accepted: the items are ours, held for the game's hold period (or until the
    platform's own hold, ``hold_until``, ends if that is later). Instant and self-sold value is
    credited now; a standard deposit's value waits in escrow."""
    hold_end = clock.now() + timedelta(days=game_settings_get(game=trade.game).hold_days)
    hold_end = max(hold_end, hold_until) if hold_until else hold_end
    _money(trade, "accept")
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="accepted",
        moves=[Move(item, Status.HOLD, {"hold_end_date": hold_end}) for item in items],
        trade_fields={"hold_end_date": hold_end, "offer_expires_at": None},
    )
    trade_events_publish(change)


def deposit_completed(*, trade: Trade, items: list[TradeItem], actor: str) -> None:
    """The hold ended: escrow is released, the merchant's collateral comes back. The assets are
    the bots' now: the owner's inventory as this merchant keeps it is read again."""
    _money(trade, "complete")
    merchant, owner = trade.merchant, trade.client_platform_id
    transaction.on_commit(lambda: inventory_cache_forget(merchant=merchant, platform_id=owner))
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="hold_ended",
        moves=[Move(item, Status.COMPLETED) for item in items],
        trade_fields={"pending_credit": Decimal("0.00")},
    )
    trade_events_publish(change)


def deposit_reversed(*, trade: Trade, items: list[TradeItem], actor: str) -> None:
    """The platform rolled the trade back during the hold: the clawback."""
    _money(trade, "reverse")
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="reversed",
        moves=[Move(item, Status.REVERTED) for item in items],
        trade_fields={"reverted_by": "user", "pending_credit": Decimal("0.00")},
    )
    trade_events_publish(change)


def deposit_ended(
    *, trade: Trade, items: list[TradeItem], to: str, actor: str, kind: str, error: str = ""
) -> None:
    """Declined, expired, canceled or failed before acceptance: no money had moved."""
    fields = {"error": error} if error else {}
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind=kind,
        moves=[Move(item, to, dict(fields)) for item in items],
        trade_fields={**fields, "pending_credit": Decimal("0.00"), "offer_expires_at": None},
    )
    trade_events_publish(change)


def deposit_cancel_by_staff(*, trade_id: str, staff: Staff) -> int:
    """Staff end a deposit whose offer is not out yet (waiting for a bot, or the platform's
    answer): no money had moved, so nothing is refunded. A deposit whose offer the owner holds
    is left to the offer's expiry, which withdraws it: cancelling here while the owner could
    still accept would take their items without paying for them."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        if trade.type != Trade.Type.DEPOSIT:
            raise DomainError("TRADE_NOT_CANCELLABLE", "This is not a deposit.")
        if trade.status == Status.ACTIVE:
            raise DomainError(
                "TRADE_NOT_CANCELLABLE",
                "The owner holds the offer: it is withdrawn when it expires, which ends the "
                "deposit.",
                details={"status": trade.status},
            )
        if trade.status not in (Status.INITIATED, Status.PENDING):
            raise DomainError(
                "TRADE_NOT_CANCELLABLE",
                f"The deposit is {trade.status}: the offer was accepted or it has ended.",
                details={"status": trade.status},
            )
        staff_action_record(
            staff=staff,
            action="cancel_trade",
            subject_type="trade",
            subject_id=str(trade.pk),
            canceled=len(items),
        )
        deposit_ended(
            trade=trade,
            items=items,
            to=Status.CANCELED,
            actor=staff.actor,
            kind="force_cancel",
            error="CANCELED_BY_STAFF",
        )
    return len(items)
