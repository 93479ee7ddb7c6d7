"""Deposits (client deposits and self sells) created and stored: the per-client guard, the owner
and the prices checked, then the trade written under the locks that keep one owner's assets in
one live deposit; the bot's offer is handed over after commit."""

from django.db import IntegrityError

from core import clock
from core.db import advisory_lock, constraint_violated, model_constraint
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from merchants.models import Merchant
from merchants.tradeurls import trade_url_platform_id
from trading.accounts.selectors.inventory import deposits_open_check, fleet_check
from trading.deposits.selectors import deposit_free_units
from trading.deposits.services.guard import (
    assets_busy,
    deposit_busy_item_ids,
    deposit_guard_check,
    deposit_guard_key,
    deposit_owner_check,
)
from trading.deposits.services.order import Depositor, DepositOrder
from trading.deposits.services.pricing import deposit_credit_plan, deposit_items_price
from trading.models import Trade, TradeItem
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

# The bot's offer for a stored deposit, sent after the commit that stored it.
DEPOSIT_OFFER = Handoff("trading.deposit_offer")

MAX_DEPOSIT_ITEMS = 250
# The database's refusal that is an answer (besides an externalId used before, ``trade_store``'s):
# a unit already in a live deposit, should anything get past the assets' lock.
ASSET_UNIT_TAKEN = model_constraint(TradeItem, "deposit_asset_unit_live")


def deposit_create(
    *,
    merchant: Merchant,
    source: str,
    depositor: Depositor,
    order: DepositOrder,
) -> Trade:
    """``POST /client/trading/deposit`` and ``POST /secure/sell``. The per-client guard runs
    before anything is fetched; it runs again under a lock when the trade is stored."""
    items, game = order.items, order.game
    external_id, is_instant = order.external_id, order.is_instant
    if not items:
        raise DomainError("MISSING_ITEMS")
    if len(items) > MAX_DEPOSIT_ITEMS:
        raise DomainError("TOO_MANY_ITEMS", f"At most {MAX_DEPOSIT_ITEMS} items.")
    items_listed_once_check(item.item_id for item in items)
    if source == Trade.Source.CLIENT:
        deposit_guard_check(merchant=merchant, platform_id=depositor.platform_id)
    if is_instant and not merchant.instant_deposits_enabled:
        raise DomainError("INSTANT_DEPOSITS_DISABLED")
    external_id_unused_check(merchant=merchant, external_id=external_id)
    deposits_open_check(game=game)
    fleet_check(merchant=merchant)
    deposit_owner_check(
        merchant=merchant,
        platform_id=depositor.platform_id,
        game=game,
        trade_url=depositor.trade_url,
    )
    priced = deposit_items_price(
        merchant=merchant, platform_id=depositor.platform_id, game=game, items=items
    )
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
        if constraint_violated(exc, TradeItem, ASSET_UNIT_TAKEN):
            busy = deposit_busy_item_ids(platform_id=depositor.platform_id, held=held)
            raise assets_busy(busy or sorted(held)) from exc
        raise
    handoff_on_commit(DEPOSIT_OFFER, str(trade.id))
    return trade


def self_sell_create(
    *,
    merchant: Merchant,
    trade_url: str,
    order: DepositOrder,
) -> Trade:
    """``POST /secure/sell``: the merchant sells items of the account behind ``trade_url``."""
    platform_id = trade_url_platform_id(trade_url)
    if platform_id is None:
        raise DomainError("INVALID_TRADEURL")
    return deposit_create(
        merchant=merchant,
        source=Trade.Source.SELF,
        depositor=Depositor(platform_id=platform_id, trade_url=trade_url),
        order=order,
    )


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
    total = trade_total(rows)
    now = clock.now()

    def write() -> Trade:
        if source == Trade.Source.CLIENT:
            # One person's deposits are stored one at a time: the guard and the collateral are
            # re-read under the lock. Fixed order: account, identity, then the owner's assets.
            advisory_lock(deposit_guard_key(merchant=merchant, platform_id=depositor.platform_id))
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
            raise assets_busy(sorted(set(held) - set(free)))
        for row in rows:
            row.asset_owner = depositor.platform_id
            row.asset_unit = free[row.public_id]
        credit = deposit_credit_plan(
            merchant=merchant,
            source=source,
            client=depositor.client,
            is_instant=is_instant,
            value=total,
        )
        trade = trade_draft(
            merchant=merchant,
            type=Trade.Type.DEPOSIT,
            source=source,
            game=game,
            external_id=external_id,
            client=depositor.client,
            platform_id=depositor.platform_id,
            trade_url=depositor.trade_url,
            external_client_user_id=depositor.external_client_user_id,
            rows=rows,
            total=total,
            now=now,
            is_instant=is_instant,
            **credit,
        )
        created = trade_insert(trade=trade, items=rows)
        trade_events_publish(created)
        return trade

    return trade_store(write)
