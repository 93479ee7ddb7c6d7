"""Withdrawals (client, quick, self buy): create with a lock, the approval callback's outcome,
purchases through the marketplace, deliveries, holds, settlement and refunds."""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.db import DatabaseError

from core import clock
from core.errors import DomainError
from merchants.models import Client, Merchant
from merchants.tradeurls import trade_url_platform_id
from trading.accounts.selectors.tradeurls import trade_url_check
from trading.games import CS_GAME
from trading.marketplace import get_marketplace
from trading.marketplace.base import Listing
from trading.models import CatalogItem, Trade, TradeItem
from trading.platform.base import STATE_MESSAGES, TradeUrlState
from trading.pricing import CENT, fee_inclusive
from trading.trades.channels import trade_events_publish
from trading.trades.services import (
    external_id_unused_check,
    items_listed_once_check,
    trade_draft,
    trade_insert,
    trade_store,
    trade_total,
)
from trading.trades.shapes import catalog_details
from wallet.services import (
    InsufficientFundsError,
    wallet_lock,
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
class WithdrawItem:
    """A listing to buy, at the price the merchant saw."""

    item_id: str
    price: Decimal  # per unit
    external_id: str = ""
    amount: int = 1


@dataclass(frozen=True)
class WithdrawalOrder:
    """What a withdrawal buys. ``auto_cancel_minutes``: after how long its items still being
    bought are cancelled (None or 720: never); ``slippage_bps``: how far above its price an
    item's current price may be and still be bought; ``trade_url``: the recipient's, when the
    order names one (a self buy)."""

    items: list[WithdrawItem]
    game: int
    external_id: str = ""
    auto_cancel_minutes: int | None = None
    slippage_bps: int | None = None
    trade_url: str = ""


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


def withdraw_items_check(items: list[WithdrawItem]) -> None:
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


def price_accepted(*, submitted: Decimal, current: Decimal, slippage_bps: int | None) -> bool:
    """Without a tolerance the current price must be the submitted one; with one it may exceed
    it by at most ``slippage_bps`` hundredths of a percent (exactly, no rounding) or be lower."""
    if slippage_bps is None:
        return current == submitted
    return current * BPS <= submitted * (BPS + slippage_bps)


def _priced_listings(
    merchant: Merchant, game: int, items: list[WithdrawItem], slippage_bps: int | None
) -> list[tuple[WithdrawItem, Listing, Decimal]]:
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
    total = trade_total(rows)
    now = clock.now()

    def write() -> Trade:
        if recipient.client is not None:
            _claim_client(recipient.client)
        trade = trade_draft(
            merchant=merchant,
            type=Trade.Type.WITHDRAW,
            source=source,
            game=game,
            external_id=external_id,
            client=recipient.client,
            platform_id=platform_id,
            trade_url=recipient.trade_url,
            external_client_user_id=recipient.external_client_user_id,
            rows=rows,
            total=total,
            now=now,
            auto_cancel_at=(
                now + timedelta(minutes=auto_cancel_minutes) if auto_cancel_minutes else None
            ),
            **(quick or {}),
        )
        for row in rows:
            row.locked = row.price * row.amount
        created = trade_insert(trade=trade, items=rows, asks_approval=True, items_known=True)
        trade_events_publish(created)
        wallet_lock(merchant=merchant, amount=total, cause_type="trade", cause_id=str(trade.id))
        return trade

    try:
        return trade_store(write)
    except InsufficientFundsError as exc:
        raise DomainError("MERCHANT_BALANCE_LOW") from exc


def _claim_client(client: Client) -> None:
    """One withdrawal at a time per user: a second, concurrent one gets 20."""
    try:
        # NO KEY: the trades and deposits being written for this client still commit.
        Client.objects.select_for_update(nowait=True, no_key=True).get(pk=client.pk)
    except DatabaseError as exc:
        raise DomainError("WITHDRAW_IN_PROGRESS") from exc


def withdrawal_create(
    *, merchant: Merchant, source: str, recipient: Recipient, order: WithdrawalOrder
) -> Trade:
    """``POST /secure/buy`` and ``POST /client/trading/withdraw``. With a slippage tolerance an
    item whose price moved within it is bought at its current price, which is locked."""
    items, game, external_id = order.items, order.game, order.external_id
    auto_cancel_minutes = order.auto_cancel_minutes
    withdraw_items_check(items)
    if not merchant.has_active_callback:
        raise DomainError("MERCHANT_NO_CALLBACK_URL")
    external_id_unused_check(merchant=merchant, external_id=external_id)
    platform_id = recipient_check(merchant=merchant, trade_url=recipient.trade_url)
    priced = _priced_listings(merchant, game, items, order.slippage_bps)
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
