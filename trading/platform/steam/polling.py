"""Polling a bot's offers (``IEconService/GetTradeOffers``) and the trades they made
(``IEconService/GetTradeStatus``) into the changes the domain has not been told of.

Shapes and states (Valve's Steam Web API documentation of IEconService; DoctorMcKay/
node-steam-tradeoffer-manager, lib/polling.js and resources/ETradeOfferState.js,
ETradeStatus.js):
- ``GetTradeOffers`` with ``get_sent_offers``, ``get_received_offers``, ``active_only=1`` and
  ``time_historical_cutoff`` (offers no longer active but updated since then come too), paged by
  ``cursor`` / ``next_cursor``; the cutoff is taken 30 minutes before the last change seen, as
  tradeoffer-manager does, because Steam sometimes backdates an offer's update;
- ETradeOfferState: 1 Invalid, 2 Active, 3 Accepted, 4 Countered, 5 Expired, 6 Canceled,
  7 Declined, 8 InvalidItems, 9 CreatedNeedsConfirmation, 10 CanceledBySecondFactor, 11 InEscrow;
- ETradeStatus: 3 Complete, 4 Failed, 5-7 support rollbacks, 10 InEscrow, 11 EscrowRollback,
  12 TradeProtectionRollback (CS2 trade protection, July 2025; undocumented by Valve, reported in
  juliarose/steam-tradeoffer-manager issue 8 with the ``rollback_trade`` field naming the trade
  that sent the items back under new asset ids). An accepted offer keeps state 3 when its trade
  is reversed, so accepted trades are asked about until their protection ends.
"""

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Q

from core import clock
from trading.games import GAMES
from trading.models import BotDelivery, SteamBot, SteamOffer
from trading.platform.base import OfferEvent, OfferUpdate, PlatformError
from trading.platform.steam.client import BotClient
from trading.platform.steam.fleet import bot_info
from trading.platform.steam.http import SteamRefusedError
from trading.platform.steam.inventory import inventory_total
from trading.platform.steam.offers import (
    offer_accept,
    offer_cancel,
    offer_confirm,
    offer_decline,
)

logger = logging.getLogger(__name__)

BACKDATE_MARGIN = 1800
FIRST_POLL_SPAN = timedelta(days=1)
POLL_LEASE = timedelta(seconds=30)
# Trade protection lasts 7 days; asked about for a day more, every few minutes.
REVERSIBLE_FOR = timedelta(days=8)
STATUS_CHECK_EVERY = timedelta(minutes=5)
STATUS_CHECKS_PER_POLL = 50
INVENTORY_COUNT_EVERY = timedelta(minutes=10)

ACTIVE, ACCEPTED, CANCELED, NEEDS_CONFIRMATION, IN_ESCROW = 2, 3, 6, 9, 11
STATE_EVENTS = {
    1: OfferEvent.FAILED,
    2: OfferEvent.SENT,
    3: OfferEvent.ACCEPTED,
    4: OfferEvent.COUNTERED,
    5: OfferEvent.EXPIRED,
    6: OfferEvent.CANCELED,
    7: OfferEvent.DECLINED,
    8: OfferEvent.INVALID_ITEMS,
    10: OfferEvent.FAILED,
    11: OfferEvent.ESCROW,
}
# Trade statuses after which the items are back where they came from.
REVERSED_STATUSES = frozenset({4, 5, 6, 7, 11, 12})
SETTLED_STATUSES = REVERSED_STATUSES | {8, 9}


@dataclass
class _Seen:
    offer: dict[str, Any]
    row: SteamOffer


def bot_poll_lease(bot: SteamBot) -> bool:
    """One worker polls a bot at a time, for POLL_LEASE of real time."""
    now = clock.real_now()
    taken = (
        SteamBot.objects.filter(pk=bot.pk)
        .filter(Q(poll_lease_until__isnull=True) | Q(poll_lease_until__lt=now))
        .update(poll_lease_until=now + POLL_LEASE)
    )
    return taken == 1


def bot_offer_updates(bot: SteamBot) -> list[OfferUpdate]:
    """The bot's offer changes not yet applied. Network calls; no transaction."""
    if not bot_poll_lease(bot):
        return []
    client = BotClient(bot)
    now = clock.now()
    # A time Steam compares with its own clock: real time.
    first = _unix(clock.real_now() - FIRST_POLL_SPAN)
    since = bot.poll_since - BACKDATE_MARGIN if bot.poll_since else first
    sent, received, described = _offers(client, since)
    _received_answer(client, bot, received, described)
    rows = {
        row.offer_id: row
        for row in SteamOffer.objects.select_related("bot").filter(
            bot=bot, offer_id__in=[str(o["tradeofferid"]) for o in sent]
        )
    }
    updates: list[OfferUpdate] = []
    pending: list[int] = []
    for offer in sent:
        row = rows.get(str(offer["tradeofferid"]))
        if row is None:
            continue  # not an offer of this service
        update = _offer_update(client, _Seen(offer, row), now)
        if update is not None:
            updates.append(update)
            pending.append(int(offer.get("time_updated") or since))
    updates.extend(_reversals(client, bot, now))
    latest = max([int(o.get("time_updated") or 0) for o in sent] + [bot.poll_since])
    fields: dict[str, Any] = {
        "last_poll_at": now,
        "poll_since": min(pending or [latest]),
        "poll_lease_until": None,
    }
    if bot.inventory_counted_at is None or now - bot.inventory_counted_at > INVENTORY_COUNT_EVERY:
        fields.update(_inventory_count(client, now))
    SteamBot.objects.filter(pk=bot.pk).update(**fields)
    return updates


def _inventory_count(client: BotClient, now: datetime) -> dict[str, Any]:
    """The bot's item count for routing, or nothing when Steam would not tell now (tried
    again next poll): the offer changes found by this poll are not lost to it."""
    try:
        count = sum(inventory_total(client, game) for game in client.bot.games)
    except PlatformError as exc:
        logger.warning("inventory of %s not counted: %s", client.bot.steam_id, exc)
        return {}
    return {"inventory_count": count, "inventory_counted_at": now}


Described = dict[tuple[str, str, str], str]  # (appid, classid, instanceid) -> market hash name


def _offers(
    client: BotClient, since: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Described]:
    sent: list[dict[str, Any]] = []
    received: list[dict[str, Any]] = []
    described: Described = {}
    cursor: Any = 0
    while True:
        response = client.webapi(
            "GET",
            "IEconService/GetTradeOffers",
            {
                "get_sent_offers": 1,
                "get_received_offers": 1,
                "get_descriptions": 1,
                "language": "english",
                "active_only": 1,
                "time_historical_cutoff": max(since, 1),
                "cursor": cursor,
            },
        )
        sent.extend(response.get("trade_offers_sent") or [])
        received.extend(response.get("trade_offers_received") or [])
        for entry in response.get("descriptions") or []:
            described[_class_of(entry)] = str(entry.get("market_hash_name") or "")
        cursor = response.get("next_cursor") or 0
        if not cursor:
            return sent, received, described


def _class_of(entry: dict[str, Any]) -> tuple[str, str, str]:
    return (
        str(entry.get("appid", "")),
        str(entry.get("classid", "")),
        str(entry.get("instanceid") or "0"),
    )


def _received_answer(
    client: BotClient, bot: SteamBot, received: list[dict[str, Any]], described: Described
) -> None:
    """The bots take nothing unasked (counter-offers included), except a supplier's delivery
    the bot expects: an offer that asks nothing of us and gives only items the bot waits for
    (``BotDelivery`` rows whose item has not arrived), by name."""
    expected = Counter(
        (str(game), name)
        for game, name in BotDelivery.objects.filter(
            bot_platform_id=bot.steam_id, state=BotDelivery.State.WAITING, asset_id=""
        ).values_list("game", "market_hash_name")
    )
    for offer in received:
        if int(offer.get("trade_offer_state") or 0) != ACTIVE:
            continue
        gives = Counter(
            (str(item.get("appid", "")), described.get(_class_of(item), ""))
            for item in offer.get("items_to_receive") or []
        )
        asks = offer.get("items_to_give") or []
        try:
            if gives and not asks and all(expected[k] >= n for k, n in gives.items()):
                offer_accept(client, offer)
                expected -= gives
            else:
                offer_decline(client, str(offer["tradeofferid"]))
        except SteamRefusedError as exc:  # changed meanwhile: the next poll sees it as it is
            logger.warning("received offer %s not answered: %s", offer["tradeofferid"], exc)


def _offer_update(client: BotClient, seen: _Seen, now: datetime) -> OfferUpdate | None:
    offer, row = seen.offer, seen.row
    state = int(offer.get("trade_offer_state") or 0)
    if state == ACTIVE and row.cancel_after is not None and row.cancel_after <= now:
        offer_cancel(client, row.offer_id)  # its deadline: the next poll sees it cancelled
        return None
    trade_id = str(offer.get("tradeid") or "")
    if trade_id and trade_id != row.trade_id:
        SteamOffer.objects.filter(pk=row.pk).update(trade_id=trade_id, updated_at=now)
        row.trade_id = trade_id
    if state == NEEDS_CONFIRMATION and row.confirmed_at is None:
        _confirm_quietly(row)  # a confirmation an earlier run could not make
        return None
    if state == row.state or state not in STATE_EVENTS:
        return None
    if state in (ACCEPTED, IN_ESCROW) and row.state in (ACCEPTED, IN_ESCROW):
        return None  # the escrow ended: the domain already holds the items
    event = STATE_EVENTS[state]
    if state == CANCELED and row.cancel_after is not None and row.cancel_after <= now:
        event = OfferEvent.EXPIRED  # the bot withdrew it at its deadline
    escrow_end = int(offer.get("escrow_end_date") or 0)
    return OfferUpdate(
        key=row.key,
        offer_id=row.offer_id,
        event=event,
        bot=bot_info(row.bot),
        state=state,
        hold_until=datetime.fromtimestamp(escrow_end, tz=UTC) if escrow_end else None,
    )


def _confirm_quietly(row: SteamOffer) -> None:
    try:
        offer_confirm(row)
    except PlatformError as exc:
        logger.warning("offer %s still unconfirmed: %s", row.offer_id, exc)


def _reversals(client: BotClient, bot: SteamBot, now: datetime) -> list[OfferUpdate]:
    """Accepted trades still within trade protection, asked about every few minutes."""
    due = (
        SteamOffer.objects.select_related("bot")
        .filter(bot=bot, state__in=(ACCEPTED, IN_ESCROW), created_at__gte=now - REVERSIBLE_FOR)
        .exclude(trade_id="")
        .exclude(trade_status__in=SETTLED_STATUSES)
        .filter(
            Q(status_checked_at__isnull=True) | Q(status_checked_at__lte=now - STATUS_CHECK_EVERY)
        )
        .order_by("status_checked_at")[:STATUS_CHECKS_PER_POLL]
    )
    updates = []
    for row in due:
        trade = _trade(client, row.trade_id)
        fields: dict[str, Any] = {"status_checked_at": now, "updated_at": now}
        status = int(trade.get("status") or 0) if trade else None
        if trade and not row.moved_assets:
            fields["moved_assets"] = _moved(trade)
        if status in REVERSED_STATUSES:
            rollback = str(trade.get("rollback_trade") or "") if trade else ""
            returned = _trade(client, rollback) if rollback else None
            if returned:
                fields["moved_assets"] = [
                    *fields.get("moved_assets", row.moved_assets),
                    *_moved(returned),
                ]
            updates.append(
                OfferUpdate(
                    key=row.key,
                    offer_id=row.offer_id,
                    event=OfferEvent.REVERSED,
                    bot=bot_info(row.bot),
                    state=row.state or ACCEPTED,
                    trade_status=status,
                )
            )
        SteamOffer.objects.filter(pk=row.pk).update(**fields)
    return updates


def _trade(client: BotClient, trade_id: str) -> dict[str, Any] | None:
    response = client.webapi(
        "GET", "IEconService/GetTradeStatus", {"tradeid": trade_id, "get_descriptions": 0}
    )
    trades = response.get("trades") or []
    return trades[0] if trades else None


def _moved(trade: dict[str, Any]) -> list[dict[str, Any]]:
    """Each asset the trade moved, with the id it has now."""
    moved = []
    for side in ("assets_received", "assets_given"):
        for asset in trade.get(side) or []:
            moved.append(
                {
                    "trade": str(trade.get("tradeid", "")),
                    "side": side.removeprefix("assets_"),
                    "assetid": str(asset.get("assetid", "")),
                    "new_assetid": str(asset.get("new_assetid", "")),
                    "new_contextid": str(asset.get("new_contextid", "")),
                }
            )
    return moved


def offer_update_seen(update: OfferUpdate) -> None:
    fields: dict[str, Any] = {"state": update.state, "updated_at": clock.now()}
    if update.trade_status is not None:
        fields["trade_status"] = update.trade_status
    if update.hold_until is not None:
        fields["escrow_end_at"] = update.hold_until
    SteamOffer.objects.filter(key=update.key).update(**fields)


def _unix(at: datetime) -> int:
    return int(at.timestamp())


def pollable_bots() -> list[str]:
    """Every enabled bot but the trade banned (a poll also logs a bot in again)."""
    games = set(GAMES)
    return [
        str(bot_id)
        for bot_id, bot_games in SteamBot.objects.filter(enabled=True)
        .exclude(state=SteamBot.State.TRADE_BANNED)
        .values_list("id", "games")
        if games & set(bot_games or [])
    ]
