"""Trade offers a bot makes: sent once per key, confirmed on the mobile confirmation
endpoints, cancelled at the bot's own deadline.

Sending (DoctorMcKay/node-steam-tradeoffer-manager, lib/classes/TradeOffer.js ``send``):
``POST /tradeoffer/new/send`` with ``sessionid``, ``serverid=1``, ``partner`` (Steam id),
``tradeoffermessage``, ``json_tradeoffer`` (``{"newversion": true, "version": n, "me": {assets
given}, "them": {assets asked}}``), ``captcha`` and ``trade_offer_create_params`` (the trade
URL's ``trade_offer_access_token``), with the offer page as Referer; the answer is
``{"tradeofferid", "needs_mobile_confirmation", ...}`` or ``{"strError": "... (N)"}``.
Cancelling: ``POST /tradeoffer/{id}/cancel`` (and ``/decline`` for offers received; ``/accept``
for a supplier's delivery to the bot).

Confirming (DoctorMcKay/node-steamcommunity, components/confirmations.js): ``GET
/mobileconf/getlist`` with ``p`` (device id), ``a`` (Steam id), ``k`` (confirmation key of
``t`` and the tag), ``t``, ``m=react``, ``tag`` -> ``{"success", "conf": [{id, nonce,
creator_id, type}]}``; the offer's confirmation is the one whose ``creator_id`` is the offer id;
``GET /mobileconf/ajaxop`` with ``op=allow``, ``cid`` (its id), ``ck`` (its nonce) ->
``{"success": true}``. Both with the mobile app's user agent: since July 2026 Steam answers 429
to any other (node-steamcommunity issue 371, fixed there by commit f7fe587 sending okhttp's).

Never twice: the offer's row exists (with its key) before anything is sent, a lease lets one
worker send at a time, ``send_attempts`` is counted before the request, and an attempt after
one that may have reached Steam first looks for the offer among the bot's sent offers by the
reference in its message (as a crashed worker would have left it)."""

import hashlib
import json
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.db.models import Q

from core import clock
from core.sealed import unseal
from trading.models import SteamBot, SteamOffer
from trading.platform.base import (
    OfferAsset,
    OfferRefusedError,
    PlatformError,
    PlatformUnavailableError,
    TradeOffer,
)
from trading.platform.steam.client import BotClient
from trading.platform.steam.fleet import bot_info
from trading.platform.steam.guard import confirmation_key, device_id
from trading.platform.steam.http import SteamRefusedError
from trading.platform.steam.users import trade_url_token

SEND_LEASE = timedelta(seconds=60)
CONTEXT = "2"  # the tradable context of both games
ACTIVE = 2
NEEDS_CONFIRMATION = 9
TRADE_OFFER_CONFIRMATION = 2  # EConfirmationType.Trade
MOBILE_APP_AGENT = {"User-Agent": "okhttp/4.9.2"}  # node-steamcommunity, confirmations.js
# How a refused send ends the trade (EResult in the strError, or its words).
REFUSALS = {
    15: "USER_NOT_TRADEABLE",  # AccessDenied: the token is stale, or the user cannot trade
    26: "ITEMS_UNAVAILABLE",  # Revoked: an item is no longer where the offer says
    8: "ITEMS_UNAVAILABLE",  # InvalidParam: no such asset
    17: "USER_NOT_TRADEABLE",  # Banned
}


def offer_reference(key: str) -> str:
    """What the offer's message carries to be found again (the key itself stays ours)."""
    return "ref " + hashlib.sha256(key.encode()).hexdigest()[:20]


def offer_row(
    *,
    kind: str,
    key: str,
    bot: SteamBot,
    partner: str,
    trade_url: str,
    game: int,
    assets: list[OfferAsset],
    minutes: int,
) -> SteamOffer:
    """The offer's row, made once per key (the bot chosen then stays its bot)."""
    now = clock.now()
    existing = SteamOffer.objects.select_related("bot").filter(key=key).first()
    if existing is not None:
        return existing
    try:
        return SteamOffer.objects.create(
            key=key,
            bot=bot,
            kind=kind,
            partner_steam_id=partner,
            partner_token=trade_url_token(trade_url),
            game=game,
            assets=[
                {"assetid": a.asset_id, "contextid": CONTEXT, "amount": a.amount} for a in assets
            ],
            cancel_after=now + timedelta(minutes=minutes),
            created_at=now,
            updated_at=now,
        )
    except IntegrityError:
        return SteamOffer.objects.select_related("bot").get(key=key)


def _trade_offer(row: SteamOffer) -> TradeOffer:
    return TradeOffer(
        offer_id=row.offer_id, bot=bot_info(row.bot), sent=row.confirmed_at is not None
    )


def _lease(row: SteamOffer) -> bool:
    """One worker sends at a time, for SEND_LEASE of real time (the sandbox clock never ends a
    lease early)."""
    now = clock.real_now()
    taken = (
        SteamOffer.objects.filter(pk=row.pk, offer_id="")
        .filter(Q(send_lease_until__isnull=True) | Q(send_lease_until__lt=now))
        .update(send_lease_until=now + SEND_LEASE)
    )
    return taken == 1


def _record(row: SteamOffer, **fields: Any) -> None:
    fields["updated_at"] = clock.now()
    for name, value in fields.items():
        setattr(row, name, value)
    SteamOffer.objects.filter(pk=row.pk).update(**fields)


def offer_send(row: SteamOffer) -> TradeOffer:
    """Send the row's offer unless it was sent; its Steam id is stored before any
    confirmation. Raises OfferRefusedError or PlatformError."""
    if row.offer_id:
        return _trade_offer(row)
    if not _lease(row):
        raise PlatformUnavailableError(f"offer {row.key} is being sent by another worker")
    client = BotClient(row.bot)
    try:
        if row.send_attempts > 0:
            found = _sent_offer_find(client, row)
            if found:
                _record(row, offer_id=found, send_lease_until=None)
                return _trade_offer(row)
        _record(row, send_attempts=row.send_attempts + 1)
        answer = client.community(
            "POST",
            "/tradeoffer/new/send",
            form=_send_form(row),
            referer=f"/tradeoffer/new/?partner={int(row.partner_steam_id) & 0xFFFFFFFF}"
            + (f"&token={row.partner_token}" if row.partner_token else ""),
            retry=False,  # a lost answer may hide a sent offer: the next attempt looks first
        )
    except SteamRefusedError as exc:
        _record(row, send_lease_until=None)
        reason = REFUSALS.get(exc.eresult or 0, "PLATFORM_ERROR")
        if "trade ban" in str(exc):
            reason = "USER_NOT_TRADEABLE"
        raise OfferRefusedError(reason, str(exc)) from exc
    except PlatformError:
        _record(row, send_lease_until=None)
        raise
    body = answer.body if isinstance(answer.body, dict) else {}
    offer_id = str(body.get("tradeofferid") or "")
    if not offer_id:
        _record(row, send_lease_until=None)
        raise PlatformError(f"Steam sent no offer id for {row.key}")
    confirmed = None if body.get("needs_mobile_confirmation") else clock.now()
    _record(row, offer_id=offer_id, send_lease_until=None, confirmed_at=confirmed)
    return _trade_offer(row)


def _send_form(row: SteamOffer) -> dict[str, Any]:
    assets = [
        {
            "appid": row.game,
            "contextid": a["contextid"],
            "amount": a["amount"],
            "assetid": a["assetid"],
        }
        for a in row.assets
    ]
    giving = row.kind == SteamOffer.Kind.DELIVERY
    offer = {
        "newversion": True,
        "version": len(assets) + 1,
        "me": {"assets": assets if giving else [], "currency": [], "ready": False},
        "them": {"assets": [] if giving else assets, "currency": [], "ready": False},
    }
    params = {"trade_offer_access_token": row.partner_token} if row.partner_token else {}
    return {
        "serverid": 1,
        "partner": row.partner_steam_id,
        "tradeoffermessage": offer_reference(row.key),
        "json_tradeoffer": json.dumps(offer),
        "captcha": "",
        "trade_offer_create_params": json.dumps(params),
    }


def _sent_offer_find(client: BotClient, row: SteamOffer) -> str:
    """The id of an offer the bot sent for this row before (a send whose answer was lost)."""
    reference = offer_reference(row.key)
    cursor: int | str = 0
    since = int((row.created_at - timedelta(minutes=5)).timestamp())
    while True:
        response = client.webapi(
            "GET",
            "IEconService/GetTradeOffers",
            {
                "get_sent_offers": 1,
                "get_received_offers": 0,
                "active_only": 1,
                "time_historical_cutoff": since,
                "cursor": cursor,
            },
        )
        for offer in response.get("trade_offers_sent") or []:
            if reference in str(offer.get("message", "")):
                return str(offer["tradeofferid"])
        cursor = response.get("next_cursor") or 0
        if not cursor:
            return ""


def offer_confirm(row: SteamOffer) -> TradeOffer:
    """Confirm the row's offer with the bot's identity secret (idempotent)."""
    if row.confirmed_at is not None:
        return _trade_offer(row)
    client = BotClient(row.bot)
    state = _offer_state(client, row.offer_id)
    if state == ACTIVE:
        _record(row, confirmed_at=clock.now())
        return _trade_offer(row)
    if state != NEEDS_CONFIRMATION:
        # Declined, cancelled or otherwise ended before confirmation: the poller reports it.
        return _trade_offer(row)
    identity_secret = unseal(row.bot.identity_secret_sealed)
    if not identity_secret:
        raise PlatformUnavailableError(f"bot {row.bot.account_name} has no identity secret")
    listed = client.community(
        "GET",
        "/mobileconf/getlist",
        params=_conf_params(row.bot, identity_secret, "list"),
        headers=MOBILE_APP_AGENT,
    ).body
    confirmations = listed.get("conf") if isinstance(listed, dict) else None
    match = next((c for c in confirmations or [] if str(c.get("creator_id")) == row.offer_id), None)
    if match is None:
        raise PlatformError(f"no confirmation yet for offer {row.offer_id}")
    answered = client.community(
        "GET",
        "/mobileconf/ajaxop",
        params={
            **_conf_params(row.bot, identity_secret, "accept"),
            "op": "allow",
            "cid": match["id"],
            "ck": match["nonce"],
        },
        headers=MOBILE_APP_AGENT,
    ).body
    if not (isinstance(answered, dict) and answered.get("success")):
        raise PlatformError(f"the confirmation of offer {row.offer_id} was not accepted")
    _record(row, confirmed_at=clock.now())
    return _trade_offer(row)


def _conf_params(bot: SteamBot, identity_secret: str, tag: str) -> dict[str, Any]:
    # Steam checks the key against its own (real) clock, not the service clock.
    at = int(time.time())
    return {
        "p": device_id(bot.steam_id),
        "a": bot.steam_id,
        "k": confirmation_key(identity_secret, at, tag),
        "t": at,
        "m": "react",
        "tag": tag,
    }


def _offer_state(client: BotClient, offer_id: str) -> int:
    response = client.webapi("GET", "IEconService/GetTradeOffer", {"tradeofferid": offer_id})
    offer = response.get("offer")
    if not isinstance(offer, dict):
        raise PlatformError(f"GetTradeOffer answered no offer {offer_id}")
    return int(offer.get("trade_offer_state") or 0)


def offer_cancel(client: BotClient, offer_id: str) -> None:
    client.community("POST", f"/tradeoffer/{offer_id}/cancel", form={})


def offer_decline(client: BotClient, offer_id: str) -> None:
    client.community("POST", f"/tradeoffer/{offer_id}/decline", form={})


STEAM_ID_BASE = 76561197960265728  # a individual account's 64-bit id is this + its account id


def offer_accept(client: BotClient, offer: dict[str, Any]) -> None:
    """Accept an offer made to the bot (node-steam-tradeoffer-manager, TradeOffer.js
    ``accept``: ``POST /tradeoffer/{id}/accept`` with ``serverid``, ``tradeofferid``, the
    partner's Steam id and ``captcha``, the offer's page as Referer). An offer that gives the
    bot items and asks nothing needs no mobile confirmation."""
    offer_id = str(offer["tradeofferid"])
    client.community(
        "POST",
        f"/tradeoffer/{offer_id}/accept",
        form={
            "serverid": 1,
            "tradeofferid": offer_id,
            "partner": str(STEAM_ID_BASE + int(offer.get("accountid_other") or 0)),
            "captcha": "",
        },
        referer=f"/tradeoffer/{offer_id}/",
        retry=False,  # accepted twice is refused, not harmful: the next poll sees it
    )


def offer_minutes(kind: str) -> int:
    if kind == SteamOffer.Kind.DEPOSIT:
        # A minute before the domain's own deadline, so the platform's answer comes first.
        return max(1, settings.DEPOSIT_OFFER_MINUTES - 1)
    return int(settings.STEAM_DELIVERY_OFFER_MINUTES)
