"""Deposits (client deposits and self sells): created behind the per-client guard, offered to
the owner by a bot through the game platform, then accepted into a hold, completed or reversed,
with the money of decisions sections 3 and 4 moving in the same transaction as each step."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from math import ceil
from typing import Protocol

from django.conf import settings
from django.db import IntegrityError, transaction

from core import clock
from core.db import advisory_lock, atomic_retried
from core.errors import DomainError
from core.handoffs import handoff_on_commit
from core.metrics import RATE_LIMIT_REFUSALS
from merchants.models import Client, Merchant
from merchants.tradeurls import trade_url_platform_id
from trading.games import CS_GAME
from trading.models import Status, Trade, TradeItem
from trading.platform import get_platform
from trading.platform.base import (
    STATE_MESSAGES,
    OfferAsset,
    OfferRefusedError,
    PlatformError,
    TradeOffer,
    TradeUrlState,
)
from trading.pricing import CENT
from trading.representations import bans_json
from trading.selectors.deposits import (
    ASSET_UNIT_LIVE,
    MAX_ACTIVE_DEPOSITS,
    MAX_RECENT_DEPOSITS,
    client_collateral_available,
    deposit_free_units,
    deposit_guard_count,
)
from trading.selectors.inventory import (
    USER_STATE_ERRORS,
    DepositQuote,
    Refusal,
    deposit_quotes,
    deposits_open_check,
    fleet_check,
    inventory_assets,
    inventory_cache_forget,
)
from trading.selectors.switches import game_settings_get
from trading.trades.services import (
    Move,
    items_listed_once_check,
    trade_apply,
    trade_emit,
    trade_lock,
)
from trading.trades.shapes import bot_info_json, catalog_details
from wallet.services import DepositCredit, wallet_deposit_post

MAX_DEPOSIT_ITEMS = 250
# Stacks of the second game go at most one unit per deposit (contract 2.3).
MAX_UNITS_PER_ASSET = 1


@dataclass(frozen=True)
class DepositItemIn:
    item_id: str
    price: Decimal  # per unit
    amount: int = 1


@dataclass(frozen=True)
class Depositor:
    """Whose items: a client (its token's account) or, for a self sell, a trade URL's owner."""

    platform_id: str
    trade_url: str
    client: Client | None = None
    external_client_user_id: str = ""


def _guard_key(merchant: Merchant, platform_id: str) -> str:
    return f"deposit-guard:{merchant.pk}:{platform_id}"


def deposit_guard_check(*, merchant: Merchant, platform_id: str) -> None:
    """At most 5 active deposits and 10 per rolling 5 minutes per merchant and platform id."""
    now = clock.now()
    count = deposit_guard_count(merchant=merchant, platform_id=platform_id, now=now)
    if count.active >= MAX_ACTIVE_DEPOSITS:
        raise DomainError("TOO_MANY_ACTIVE_TRADES")
    if count.recent >= MAX_RECENT_DEPOSITS:
        assert count.window_frees_at is not None
        wait = max(1, ceil((count.window_frees_at - now).total_seconds()))
        RATE_LIMIT_REFUSALS.labels("deposit_guard").inc()
        raise DomainError(
            "RATE_LIMITED",
            f"At most {MAX_RECENT_DEPOSITS} deposits per 5 minutes for this user.",
            retry_after=wait,
        )


def deposit_owner_check(
    *, merchant: Merchant, platform_id: str, game: int, trade_url: str = ""
) -> None:
    """The owner's account can give items of this game now (asked afresh, never cached)."""
    try:
        user = get_platform().user(platform_id, tenant=str(merchant.pk), trade_url=trade_url)
    except PlatformError as exc:
        raise DomainError(exc.error_key) from exc
    if user.state == TradeUrlState.TRADE_URL_INVALID:
        raise DomainError("INVALID_TRADEURL", STATE_MESSAGES[user.state])
    not_tradeable = user.state in (TradeUrlState.BANNED, TradeUrlState.USER_NOT_TRADEABLE)
    if not_tradeable or (game == CS_GAME and user.anti_cheat_banned):
        raise DomainError("USER_NOT_TRADEABLE", details=bans_json(user))
    if user.state in USER_STATE_ERRORS:
        raise DomainError(USER_STATE_ERRORS[user.state])
    if user.escrow_days > 0:
        raise DomainError(
            "ESCROW_NOT_ALLOWED", f"Trades with this account are held {user.escrow_days} days."
        )


def _busy_item_ids(platform_id: str, held: dict[str, int]) -> list[str]:
    """Items every unit of which is already in a live deposit (the one rule of a busy asset)."""
    return sorted(set(held) - set(deposit_free_units(platform_id=platform_id, held=held)))


def _refuse(key: str, item_ids: list[str], message: str) -> DomainError:
    return DomainError(key, message, details={"items": item_ids})


def _asset_busy(item_ids: list[str]) -> DomainError:
    message = f"Already in a deposit that has not ended: {', '.join(item_ids)}."
    return _refuse("DEPOSIT_IN_PROGRESS", item_ids, message)


def _priced_items(
    merchant: Merchant, platform_id: str, game: int, items: list[DepositItemIn]
) -> list[tuple[DepositItemIn, DepositQuote]]:
    """Each item against the owner's inventory and the merchant's current offer."""
    assets = inventory_assets(merchant=merchant, platform_id=platform_id, game=game)
    quotes = {q.item_id: q for q in deposit_quotes(assets=assets, merchant=merchant, game=game)}
    ids = [item.item_id for item in items]
    missing = [item_id for item_id in ids if item_id not in quotes]
    if missing:
        raise _refuse("ITEMS_UNAVAILABLE", missing, f"Not in the inventory: {', '.join(missing)}.")
    busy = _busy_item_ids(platform_id, {i: quotes[i].asset.amount for i in ids})
    if busy:
        raise _asset_busy(busy)
    refused = [i for i in ids if quotes[i].refusal and quotes[i].refusal != Refusal.OVERSTOCKED]
    if refused:
        raise _refuse("ITEMS_NOT_ACCEPTED", refused, f"Not accepted: {', '.join(refused)}.")
    for item in items:
        asset = quotes[item.item_id].asset
        if item.amount > asset.amount:
            raise DomainError("INSUFFICIENT_ITEM_AMOUNT", f"{item.item_id}: {asset.amount} held.")
        if item.amount > MAX_UNITS_PER_ASSET:
            raise DomainError(
                "EXCEEDS_MAX_AMOUNT", f"{item.item_id}: at most {MAX_UNITS_PER_ASSET} per deposit."
            )
    overstocked = _overstocked(items, quotes)
    if overstocked:
        raise _refuse("ITEM_OVERSTOCKED", overstocked, "The service's stock of these is full.")
    for item in items:
        current = quotes[item.item_id].price
        if item.price != current:
            raise DomainError(
                "PRICE_CHANGED",
                f"{item.item_id} is now offered {current}.",
                details={"itemId": item.item_id, "price": current},
            )
    return [(item, quotes[item.item_id]) for item in items]


def _overstocked(items: list[DepositItemIn], quotes: dict[str, DepositQuote]) -> list[str]:
    """Items whose catalog entry would go over its stock limit with this deposit."""
    wanted: dict[str, int] = {}
    over = []
    for item in items:
        quote = quotes[item.item_id]
        assert quote.item is not None or quote.refusal == Refusal.OVERSTOCKED
        key = quote.item.id if quote.item is not None else item.item_id
        wanted[key] = wanted.get(key, 0) + item.amount
        if quote.refusal == Refusal.OVERSTOCKED or wanted[key] > quote.room:
            over.append(item.item_id)
    return over


def deposit_create(
    *,
    merchant: Merchant,
    source: str,
    depositor: Depositor,
    items: list[DepositItemIn],
    game: int,
    external_id: str = "",
    is_instant: bool = False,
) -> Trade:
    """``POST /client/trading/deposit`` and ``POST /secure/sell``. The per-client guard runs
    before anything is fetched; it runs again under a lock when the trade is stored."""
    if not items:
        raise DomainError("MISSING_ITEMS")
    if len(items) > MAX_DEPOSIT_ITEMS:
        raise DomainError("TOO_MANY_ITEMS", f"At most {MAX_DEPOSIT_ITEMS} items.")
    items_listed_once_check(item.item_id for item in items)
    if source == Trade.Source.CLIENT:
        deposit_guard_check(merchant=merchant, platform_id=depositor.platform_id)
    if is_instant and not merchant.instant_deposits_enabled:
        raise DomainError("INSTANT_DEPOSITS_DISABLED")
    if external_id and Trade.objects.filter(merchant=merchant, external_id=external_id).exists():
        raise DomainError("EXTERNAL_ID_EXISTS")
    deposits_open_check(game=game)
    fleet_check(merchant=merchant)
    deposit_owner_check(
        merchant=merchant,
        platform_id=depositor.platform_id,
        game=game,
        trade_url=depositor.trade_url,
    )
    priced = _priced_items(merchant, depositor.platform_id, game, items)
    held = {item.item_id: quote.asset.amount for item, quote in priced}
    rows = [
        TradeItem(
            public_id=item.item_id,
            catalog_id=quote.item.id if quote.item is not None else "",
            appid=game,
            amount=item.amount,
            price=quote.price,  # the submitted price's value, written as stored (12.50)
            phase=quote.asset.phase,
            details=catalog_details(quote.item),
        )
        for item, quote in priced
    ]
    try:
        trade = _deposit_store(
            merchant=merchant,
            source=source,
            depositor=depositor,
            game=game,
            external_id=external_id,
            is_instant=is_instant,
            rows=rows,
            held=held,
        )
    except IntegrityError as exc:
        if "trade_external_id_per_merchant" in str(exc):
            raise DomainError("EXTERNAL_ID_EXISTS") from exc
        if ASSET_UNIT_LIVE in str(exc) or "trading_tradeitem.asset_unit" in str(exc):
            # The database's own refusal (SQLite names the columns, not the constraint).
            busy = _busy_item_ids(depositor.platform_id, held)
            raise _asset_busy(busy or sorted(held)) from exc
        raise
    handoff_on_commit("trading.deposit_offer", str(trade.id))
    return trade


def self_sell_create(
    *,
    merchant: Merchant,
    trade_url: str,
    items: list[DepositItemIn],
    game: int,
    external_id: str = "",
    is_instant: bool = False,
) -> Trade:
    """``POST /secure/sell``: the merchant sells items of the account behind ``trade_url``."""
    platform_id = trade_url_platform_id(trade_url)
    if platform_id is None:
        raise DomainError("INVALID_TRADEURL")
    return deposit_create(
        merchant=merchant,
        source=Trade.Source.SELF,
        depositor=Depositor(platform_id=platform_id, trade_url=trade_url),
        items=items,
        game=game,
        external_id=external_id,
        is_instant=is_instant,
    )


def _credit_plan(
    merchant: Merchant, source: str, client: Client | None, is_instant: bool, value: Decimal
) -> dict[str, object]:
    """preCredit, pendingCredit and the collateral split, fixed at creation, in cents as they
    are stored (so the created trade reads as it will be read back)."""
    zero = Decimal("0.00")
    none = {"collateral_provider": zero, "collateral_merchant": zero}
    if source == Trade.Source.SELF:
        return {"pre_credit": value, "pending_credit": zero, **none}
    if not is_instant:
        return {"pre_credit": zero, "pending_credit": value, **none}
    available = (
        client_collateral_available(client=client, merchant=merchant, now=clock.now())
        if client is not None
        else zero
    )
    provider = min(value, available).quantize(CENT, rounding=ROUND_FLOOR)
    return {
        "pre_credit": value,
        "pending_credit": zero,
        "collateral_provider": provider,
        "collateral_merchant": value - provider,
    }


def _deposit_store(
    *,
    merchant: Merchant,
    source: str,
    depositor: Depositor,
    game: int,
    external_id: str,
    is_instant: bool,
    rows: list[TradeItem],
    held: dict[str, int],
) -> Trade:
    total = sum((row.price * row.amount for row in rows), Decimal("0.00"))
    if total <= 0:
        raise DomainError("INVALID_AMOUNT")
    now = clock.now()

    def write() -> Trade:
        if source == Trade.Source.CLIENT:
            # One person's deposits are stored one at a time: the guard and the collateral are
            # re-read under the lock. Fixed order: account, identity, then the owner's assets.
            advisory_lock(_guard_key(merchant, depositor.platform_id))
            client = depositor.client
            if client is not None and client.kyc_hash:
                advisory_lock(f"deposit-identity:{merchant.pk}:{client.kyc_hash}")
            deposit_guard_check(merchant=merchant, platform_id=depositor.platform_id)
        # Client deposits and self sells of every merchant take an owner's assets under one
        # lock, re-read here; the database refuses a unit already in a live deposit should
        # anything get past it (deposit_asset_unit_live).
        advisory_lock(f"deposit-assets:{depositor.platform_id}")
        free = deposit_free_units(platform_id=depositor.platform_id, held=held)
        if len(free) < len(held):
            raise _asset_busy(sorted(set(held) - set(free)))
        for row in rows:
            row.asset_owner = depositor.platform_id
            row.asset_unit = free[row.public_id]
        trade = Trade.objects.create(
            merchant=merchant,
            client=depositor.client,
            type=Trade.Type.DEPOSIT,
            source=source,
            game=game,
            external_id=external_id,
            client_platform_id=depositor.platform_id,
            client_trade_url=depositor.trade_url,
            external_client_user_id=depositor.external_client_user_id,
            total_price=total,
            is_instant=is_instant,
            created_at=now,
            updated_at=now,
            **_credit_plan(merchant, source, depositor.client, is_instant, total),
        )
        for position, row in enumerate(rows):
            row.trade = trade
            row.position = position
            row.updated_at = now
        TradeItem.objects.bulk_create(rows)
        trade_emit(trade=trade, items=rows, before=None)
        return trade

    return atomic_retried(write)


def asset_id_of(item: TradeItem) -> str:
    """Inventory item ids are ``<game>_<assetId>``."""
    return item.public_id.split("_", 1)[1]


def deposit_offer_send(*, trade_id: str, confirm: bool = True) -> None:
    """The bot makes the trade offer and (``confirm``) confirms it: initiated -> pending ->
    active. Network calls happen outside transactions; each step re-checks the state under the
    trade's lock, so running this twice changes nothing. A transient platform error leaves the
    trade for the sweep; a refusal fails it."""
    trade = Trade.objects.filter(pk=trade_id, type=Trade.Type.DEPOSIT).first()
    if trade is None or trade.status not in (Status.INITIATED, Status.PENDING):
        return
    platform = get_platform()
    tenant = str(trade.merchant_id)
    try:
        offer_id = trade.offer_ref
        if trade.status == Status.INITIATED:
            items = list(trade.items.all())
            offer = platform.offer_create(
                tenant=tenant,
                key=f"deposit-{trade.id}",
                platform_id=trade.client_platform_id,
                trade_url=trade.client_trade_url,
                game=trade.game,
                assets=[OfferAsset(asset_id_of(item), item.amount) for item in items],
            )
            deposit_step(trade_id=trade_id, step=deposit_offer_created, offer=offer)
            offer_id = offer.offer_id
        if not confirm:
            return
        sent = platform.offer_confirm(tenant=tenant, offer_id=offer_id)
        if sent.sent:
            deposit_step(trade_id=trade_id, step=deposit_offer_sent, offer=sent)
    except OfferRefusedError as exc:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            targets = [i for i in items if i.status in (Status.INITIATED, Status.PENDING)]
            if targets:
                deposit_ended(
                    trade=trade,
                    items=items,
                    to=Status.FAILED,
                    actor="platform",
                    kind="offer_refused",
                    error=exc.reason,
                )
    except PlatformError:
        return


class OfferStep(Protocol):
    def __call__(
        self, *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
    ) -> None: ...


def deposit_step(*, trade_id: str, step: OfferStep, offer: TradeOffer) -> None:
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        step(trade=trade, items=items, offer=offer, actor="platform")


def deposit_offer_created(
    *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
) -> None:
    """The bot made the offer; it awaits the bot's confirmation."""
    if trade.status != Status.INITIATED:
        return
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="offer_created",
        moves=[Move(item, Status.PENDING) for item in items],
        trade_fields={"offer_ref": offer.offer_id, "bot_info": bot_info_json(offer.bot)},
    )


def deposit_offer_sent(
    *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
) -> None:
    """Confirmed and sent: the owner can accept it until it expires."""
    if trade.status != Status.PENDING:
        return
    now = clock.now()
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="offer_sent",
        moves=[Move(item, Status.ACTIVE, {"offer_id": offer.offer_id}) for item in items],
        trade_fields={
            "offer_id": offer.offer_id,
            "bot_info": bot_info_json(offer.bot),
            "active_at": now,
            "offer_expires_at": now + timedelta(minutes=settings.DEPOSIT_OFFER_MINUTES),
        },
    )


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
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="accepted",
        moves=[Move(item, Status.HOLD, {"hold_end_date": hold_end}) for item in items],
        trade_fields={"hold_end_date": hold_end, "offer_expires_at": None},
    )


def deposit_completed(*, trade: Trade, items: list[TradeItem], actor: str) -> None:
    """The hold ended: escrow is released, the merchant's collateral comes back. The assets are
    the bots' now: the owner's inventory as this merchant keeps it is read again."""
    _money(trade, "complete")
    merchant, owner = trade.merchant, trade.client_platform_id
    transaction.on_commit(lambda: inventory_cache_forget(merchant=merchant, platform_id=owner))
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="hold_ended",
        moves=[Move(item, Status.COMPLETED) for item in items],
        trade_fields={"pending_credit": Decimal("0.00")},
    )


def deposit_reversed(*, trade: Trade, items: list[TradeItem], actor: str) -> None:
    """The platform rolled the trade back during the hold: the clawback."""
    _money(trade, "reverse")
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="reversed",
        moves=[Move(item, Status.REVERTED) for item in items],
        trade_fields={"reverted_by": "user", "pending_credit": Decimal("0.00")},
    )


def deposit_ended(
    *, trade: Trade, items: list[TradeItem], to: str, actor: str, kind: str, error: str = ""
) -> None:
    """Declined, expired, canceled or failed before acceptance: no money had moved."""
    fields = {"error": error} if error else {}
    trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind=kind,
        moves=[Move(item, to, dict(fields)) for item in items],
        trade_fields={**fields, "pending_credit": Decimal("0.00"), "offer_expires_at": None},
    )
