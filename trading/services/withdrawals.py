"""Withdrawals (client, quick, self buy): create with a lock, the approval callback's outcome,
purchases through the marketplace, deliveries, holds, settlement and refunds."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import DatabaseError, IntegrityError, transaction

from core import clock
from core.db import atomic_retried
from core.errors import DomainError
from core.handoffs import handoff_on_commit
from merchants.models import Client, Merchant
from merchants.tradeurls import trade_url_platform_id
from merchants.webhooks.outbox import Approval
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.accounts.selectors.tradeurls import trade_url_check
from trading.games import CS_GAME
from trading.marketplace import get_marketplace
from trading.marketplace.base import Listing
from trading.models import CatalogItem, Status, Trade, TradeEvent, TradeItem
from trading.platform.base import STATE_MESSAGES, TradeUrlState
from trading.pricing import CENT, fee_inclusive
from trading.representations import BotInfoOut, catalog_details
from trading.selectors.switches import game_settings_get
from trading.services.handover import bot_delivery_expect
from trading.services.trades import (
    Move,
    items_known,
    items_listed_once_check,
    trade_apply,
    trade_emit,
    trade_lock,
)
from wallet.services import (
    InsufficientFundsError,
    wallet_lock,
    wallet_release,
    wallet_settle_purchase,
)

AUTO_CANCEL_DISABLED = 720
REJECTED_STATES = {
    TradeUrlState.BANNED,
    TradeUrlState.TRADE_URL_INVALID,
    TradeUrlState.USER_NOT_TRADEABLE,
}


# Second-game stacks: at most this many units of one listing in one withdrawal item.
MAX_STACK_AMOUNT = 10_000
MAX_WITHDRAW_ITEMS = 50
BPS = 10_000  # basis points in a whole


@dataclass(frozen=True)
class WithdrawItemIn:
    item_id: str
    price: Decimal  # per unit
    external_id: str = ""
    amount: int = 1


@dataclass(frozen=True)
class Recipient:
    trade_url: str
    client: Client | None = None
    external_client_user_id: str = ""


def recipient_check(*, merchant: Merchant, trade_url: str) -> str:
    """The platform id of a trade URL that can receive items, or the documented refusal."""
    platform_id = trade_url_platform_id(trade_url)
    if platform_id is None:
        raise DomainError("INVALID_TRADEURL")
    check = trade_url_check(merchant=merchant, url=trade_url, force_refresh=False)
    state = check.state
    if state == TradeUrlState.USER_NOT_FOUND:
        raise DomainError("USER_NOT_FOUND")
    if state in (TradeUrlState.PLATFORM_UNAVAILABLE, TradeUrlState.UNKNOWN_ERROR):
        raise DomainError("PLATFORM_UNAVAILABLE")
    if state in REJECTED_STATES:
        raise DomainError("INVALID_TRADEURL", STATE_MESSAGES[state])
    return platform_id


def withdraw_items_check(items: list[WithdrawItemIn]) -> None:
    """Counts, repeats and prices with their own codes: 2, 8, 18, 1601 and 15."""
    if not items:
        raise DomainError("MISSING_ITEMS")
    if len(items) > MAX_WITHDRAW_ITEMS:
        raise DomainError("TOO_MANY_ITEMS", f"At most {MAX_WITHDRAW_ITEMS} items.")
    items_listed_once_check(item.item_id for item in items)
    for item in items:
        if item.price <= 0:
            raise DomainError("INVALID_AMOUNT", f"{item.item_id}: the price must be above 0.")
        if item.price != item.price.quantize(CENT):
            raise DomainError("LISTING_PRICE_INVALID", f"{item.item_id}: whole cents only.")


def external_id_check(merchant: Merchant, external_id: str) -> None:
    if external_id and Trade.objects.filter(merchant=merchant, external_id=external_id).exists():
        raise DomainError("EXTERNAL_ID_EXISTS")


def price_accepted(*, submitted: Decimal, current: Decimal, slippage_bps: int | None) -> bool:
    """Without a tolerance the current price must be the submitted one; with one it may exceed
    it by at most ``slippage_bps`` hundredths of a percent (exactly, no rounding) or be lower."""
    if slippage_bps is None:
        return current == submitted
    return current * BPS <= submitted * (BPS + slippage_bps)


def _priced_listings(
    merchant: Merchant, game: int, items: list[WithdrawItemIn], slippage_bps: int | None
) -> list[tuple[WithdrawItemIn, Listing, Decimal]]:
    """Each item with its listing and the fee-inclusive price it is bought (and locked) at."""
    market = get_marketplace()
    for item in items:
        if not market.listing_id_valid(game=game, listing_id=item.item_id):
            raise DomainError(
                "INVALID_LISTING_ID", f"{item.item_id} is not a listing id of {game}."
            )
    found = market.listings_lookup([item.item_id for item in items])
    priced = []
    for item in items:
        if item.item_id not in found:
            raise DomainError("LISTING_NOT_FOUND", f"No listing {item.item_id}.")
        listing = found[item.item_id]
        if listing is None:
            raise DomainError("ITEMS_UNAVAILABLE", f"{item.item_id} is no longer on the market.")
        if listing.game != game:
            raise DomainError("LISTING_NOT_FOUND", f"No listing {item.item_id} in game {game}.")
        if item.amount > 1 and (listing.game == CS_GAME or item.amount > MAX_STACK_AMOUNT):
            raise DomainError("EXCEEDS_MAX_AMOUNT", f"{item.item_id}: at most {_max(listing)}.")
        if item.amount > listing.amount:
            raise DomainError(
                "INSUFFICIENT_ITEM_AMOUNT", f"{item.item_id}: {listing.amount} available."
            )
        current = fee_inclusive(listing.price, merchant.withdraw_fee_rate)
        if not price_accepted(submitted=item.price, current=current, slippage_bps=slippage_bps):
            raise DomainError(
                "PRICE_CHANGED",
                f"{item.item_id} now costs {current}.",
                details={"itemId": item.item_id, "price": current},
            )
        priced.append((item, listing, current))
    return priced


def _max(listing: Listing) -> int:
    return 1 if listing.game == CS_GAME else MAX_STACK_AMOUNT


def withdrawal_store(
    *,
    merchant: Merchant,
    source: str,
    recipient: Recipient,
    platform_id: str,
    game: int,
    external_id: str,
    rows: list[TradeItem],
    auto_cancel_minutes: int | None = None,
    quick: dict[str, object] | None = None,
) -> Trade:
    """Lock the total and store the trade with its ``trade.initiated`` approval callback."""
    total = sum((row.price * row.amount for row in rows), Decimal("0.00"))
    if total <= 0:
        raise DomainError("INVALID_AMOUNT")
    now = clock.now()

    def write() -> Trade:
        if recipient.client is not None:
            _claim_client(recipient.client)
        # Inserted by ``trade_emit``'s save with its first sequence number: one INSERT, not an
        # INSERT and then a full-row UPDATE.
        trade = Trade(
            merchant=merchant,
            client=recipient.client,
            type=Trade.Type.WITHDRAW,
            source=source,
            game=game,
            external_id=external_id,
            client_platform_id=platform_id,
            client_trade_url=recipient.trade_url,
            external_client_user_id=recipient.external_client_user_id,
            total_price=total,
            auto_cancel_at=(
                now + timedelta(minutes=auto_cancel_minutes) if auto_cancel_minutes else None
            ),
            created_at=now,
            updated_at=now,
            **(quick or {}),
        )
        for position, row in enumerate(rows):
            row.trade = trade
            row.position = position
            row.locked = row.price * row.amount
            row.updated_at = now
        trade_emit(trade=trade, items=rows, before=None, is_approval=True)
        TradeItem.objects.bulk_create(rows)
        wallet_lock(merchant=merchant, amount=total, cause_type="trade", cause_id=str(trade.id))
        items_known(trade, rows)
        return trade

    try:
        return atomic_retried(write)
    except InsufficientFundsError as exc:
        raise DomainError("MERCHANT_BALANCE_LOW") from exc
    except IntegrityError as exc:
        if "trade_external_id_per_merchant" in str(exc):
            raise DomainError("EXTERNAL_ID_EXISTS") from exc
        raise


def _claim_client(client: Client) -> None:
    """One withdrawal at a time per user: a second, concurrent one gets 20."""
    try:
        # NO KEY: the trades and deposits being written for this client still commit.
        Client.objects.select_for_update(nowait=True, no_key=True).get(pk=client.pk)
    except DatabaseError as exc:
        raise DomainError("WITHDRAW_IN_PROGRESS") from exc


def withdrawal_create(
    *,
    merchant: Merchant,
    source: str,
    recipient: Recipient,
    items: list[WithdrawItemIn],
    game: int,
    external_id: str = "",
    auto_cancel_minutes: int | None = None,
    slippage_bps: int | None = None,
) -> Trade:
    """``POST /secure/buy`` and ``POST /client/trading/withdraw``. With ``slippage_bps`` an item
    whose price moved within the tolerance is bought at its current price, which is locked."""
    withdraw_items_check(items)
    if not merchant.has_active_callback:
        raise DomainError("MERCHANT_NO_CALLBACK_URL")
    external_id_check(merchant, external_id)
    platform_id = recipient_check(merchant=merchant, trade_url=recipient.trade_url)
    priced = _priced_listings(merchant, game, items, slippage_bps)
    # Named from the start: the created trade shows each item's name and marketHashName.
    catalog = CatalogItem.objects.in_bulk({listing.catalog_id for _, listing, _ in priced})
    rows = [
        TradeItem(
            public_id=item.item_id,
            external_id=item.external_id,
            listing_id=listing.id,
            catalog_id=listing.catalog_id,
            appid=game,
            amount=item.amount,
            price=price,
            sourcing_price=listing.price,
            delivery=listing.delivery,
            phase=listing.phase,
            details=catalog_details(catalog.get(listing.catalog_id)),
        )
        for item, listing, price in priced
    ]
    return withdrawal_store(
        merchant=merchant,
        source=source,
        recipient=recipient,
        platform_id=platform_id,
        game=game,
        external_id=external_id,
        rows=rows,
        auto_cancel_minutes=(
            auto_cancel_minutes if auto_cancel_minutes != AUTO_CANCEL_DISABLED else None
        ),
    )


def refund_item(trade: Trade, item: TradeItem, kind: str = "REFUND") -> None:
    if item.locked > 0:
        wallet_release(
            merchant=trade.merchant,
            amount=item.locked,
            cause_type="trade_item",
            cause_id=str(item.pk),
            kind=kind,
        )
        item.locked = Decimal("0.00")


def withdrawal_approval_resume(trade_id: str) -> None:
    """The purchase an approval started, handed on again: it buys only what is not yet
    bought (keyed by item), and nothing for a trade the answer failed."""
    handoff_on_commit("trading.withdrawal_purchase", trade_id)


def withdrawal_approval_resolve(trade_id: str, outcome: str, reason: str) -> None:
    """The merchant's answer to the approval callback (runs in the delivery's transaction)."""
    trade, items = trade_lock(trade_id=trade_id)
    if trade.status != Status.INITIATED:
        return
    if outcome == Approval.APPROVED:
        catalog = CatalogItem.objects.in_bulk({item.catalog_id for item in items})
        trade_apply(
            trade=trade,
            items=items,
            actor="merchant",
            kind="approved",
            moves=[
                Move(
                    item, Status.PENDING, {"details": catalog_details(catalog.get(item.catalog_id))}
                )
                for item in items
            ],
        )
        handoff_on_commit("trading.withdrawal_purchase", str(trade.id))
        return
    error = "MERCHANT_REJECTED" if outcome == Approval.REJECTED else "APPROVAL_TIMEOUT"
    for item in items:
        refund_item(trade, item)
    trade_apply(
        trade=trade,
        items=items,
        actor="merchant",
        kind=error.lower(),
        moves=[Move(item, Status.FAILED, {"error": error}) for item in items],
        trade_fields={"error": error},
        detail={"reason": reason} if reason else None,
    )


def withdrawal_purchase(*, trade_id: str) -> None:
    """Order every approved, unbought item from the marketplace. The purchase is keyed by the
    item, so running this twice never buys twice; network calls happen outside transactions."""
    market = get_marketplace()
    waiting = (
        TradeItem.objects.filter(
            trade_id=trade_id,
            status=Status.PENDING,
            purchase_ref="",
            cancel_requested_at__isnull=True,
        )
        .exclude(listing_id="")
        .select_related("trade")
    )
    for item in waiting:
        assert item.sourcing_price is not None
        result = market.purchase(
            listing_id=item.listing_id,
            max_price=item.sourcing_price,
            key=f"ti-{item.pk}",
            amount=item.amount,
            trade_url=item.trade.client_trade_url,
        )
        if result.ok:
            # Only the item's row changes: one guarded statement, no lock of the trade. An item
            # that left PENDING meanwhile (cancelled) keeps no ref; its cancel finds the
            # purchase by its key. A bot that hands the item over gets its delivery row with it.
            with transaction.atomic():
                recorded = TradeItem.objects.filter(
                    pk=item.pk, status=Status.PENDING, purchase_ref=""
                ).update(purchase_ref=result.ref, updated_at=clock.now())
                if recorded and result.held is not None and result.listing is not None:
                    bot_delivery_expect(item=item, held=result.held, listing=result.listing)
            continue
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            current = next(i for i in items if i.pk == item.pk)
            if current.status != Status.PENDING or current.purchase_ref:
                continue
            refund_item(trade, current)
            trade_apply(
                trade=trade,
                items=items,
                actor="marketplace",
                kind="purchase_failed",
                moves=[Move(current, Status.FAILED, {"error": result.reason})],
                trade_fields={"error": result.reason},
            )


def withdrawal_items_delivered(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    actor: str,
    offer_id: str = "",
    bot_info: BotInfoOut | None = None,
) -> None:
    """Bought items offered to the recipient: the trade offer (``offer_id``, sent by the bot
    ``bot_info``; the supplier's own when not given) is live."""
    now = clock.now()
    offer_id = offer_id or f"{int(now.timestamp())}{trade.next_sequence:04d}"
    extra = {"bot_info": bot_info} if bot_info else {}
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="purchased",
        moves=[
            Move(item, Status.ACTIVE, {"offer_id": offer_id, "active_at": now}) for item in targets
        ],
        trade_fields={"offer_id": offer_id, "active_at": trade.active_at or now, **extra},
    )


def withdrawal_items_accepted(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    actor: str,
    hold_until: datetime | None = None,
) -> None:
    """The recipient accepted: the items are in its inventory, held for the game's protection
    window, or until the platform's own hold (``hold_until``, escrow) ends if that is later."""
    hold_end = clock.now() + timedelta(days=game_settings_get(game=trade.game).hold_days)
    hold_end = max(hold_end, hold_until) if hold_until else hold_end
    merchant, recipient = trade.merchant, trade.client_platform_id
    transaction.on_commit(lambda: inventory_cache_forget(merchant=merchant, platform_id=recipient))
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="accepted",
        moves=[Move(item, Status.HOLD, {"hold_end_date": hold_end}) for item in targets],
        trade_fields={"hold_end_date": hold_end},
    )


def withdrawal_items_completed(
    *, trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str
) -> None:
    """The protection window is over: the lock settles to the supplier and revenue."""
    for item in targets:
        assert item.sourcing_price is not None
        if item.locked > 0:
            wallet_settle_purchase(
                merchant=trade.merchant,
                gross=item.locked,
                sourcing=item.sourcing_price * item.amount,
                cause_type="trade_item",
                cause_id=str(item.pk),
            )
            item.locked = Decimal("0.00")
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="hold_ended",
        moves=[Move(item, Status.COMPLETED) for item in targets],
    )


def withdrawal_items_ended(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    to: str,
    actor: str,
    kind: str,
    error: str = "",
    reverted_by: str = "",
) -> None:
    """Items that end without delivery (failed, declined, canceled, reverted): refunded."""
    for item in targets:
        refund_item(trade, item)
    fields = {"error": error} if error else {}
    # The trade carries the shared failure cause too, as a failed purchase's does.
    trade_fields = {**fields, **({"reverted_by": reverted_by} if reverted_by else {})}
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind=kind,
        moves=[Move(item, to, dict(fields)) for item in targets],
        trade_fields=trade_fields or None,
    )


def trade_force_cancel(*, trade_id: str, staff: str, reason: str) -> int:
    """Staff stop a withdrawal: undelivered items end now with a refund (initiated ones fail,
    bought ones are canceled); delivered items are left alone. Returns how many ended."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        if trade.type != Trade.Type.WITHDRAW:
            raise DomainError("TRADE_NOT_CANCELLABLE", "Only withdrawals can be force-cancelled.")
        actor = f"staff:{staff}"
        initiated = [i for i in items if i.status == Status.INITIATED]
        bought = [i for i in items if i.status in (Status.PENDING, Status.ACTIVE)]
        if initiated:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=initiated,
                to=Status.FAILED,
                actor=actor,
                kind="force_cancel",
                error="CANCELED_BY_STAFF",
            )
        if bought:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=bought,
                to=Status.CANCELED,
                actor=actor,
                kind="force_cancel",
            )
        TradeEvent.objects.create(
            trade=trade,
            kind="staff_note",
            actor=actor,
            detail={"reason": reason},
            created_at=clock.now(),
        )
    return len(initiated) + len(bought)
