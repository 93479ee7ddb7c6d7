"""A user's trade state (contract 4.2, the 10 states) from three answers:

- ``ISteamUser/GetPlayerBans`` (Valve's Web API documentation): no player -> UserNotFound;
  ``EconomyBan`` "banned" -> Banned; ``VACBanned`` -> Game730Banned (an anti-cheat ban blocks
  the first game's deposits); ``NumberOfGameBans`` kept (it does not say which game, so
  Game252490Banned is never derived from it);
- ``IEconService/GetTradeHoldDurations`` with the trade URL's token (``steamid_target``,
  ``trade_offer_access_token``; Valve's IEconService documentation, steamapi.xpaw.me):
  ``their_escrow.escrow_end_duration_seconds`` is the hold an offer to this user would get
  (escrow days). Steam answers a token that is not this user's with an empty ``response``
  (no ``my_escrow`` either) -> TradeUrlInvalid, and a user whose profile is private without
  ``their_escrow`` -> InventoryPrivate (a private profile keeps its inventory private);
  refusals: EResult 15 (AccessDenied) -> TradeUrlInvalid, 17 (Banned) or 11 (InvalidState)
  -> UserNotTradeable;
- the inventory endpoint as others see it: HTTP 403 -> InventoryPrivate.
Anything else Steam answers raises PlatformError (UnknownError, not cached); no answer or rate
limiting raises PlatformUnavailableError / PlatformRateLimitedError (PlatformUnavailable)."""

from math import ceil
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.conf import settings

from trading.games import CS_GAME
from trading.platform.base import PlatformError, PlatformUser, TradeUrlState
from trading.platform.steam.client import BotClient
from trading.platform.steam.fleet import bot_any
from trading.platform.steam.http import SteamRefusedError, steam_request
from trading.platform.steam.inventory import (
    TRADABLE_CONTEXT,
    InventoryPrivateError,
    inventory_pages,
    public_page,
)

ACCESS_DENIED = 15
NOT_TRADEABLE_RESULTS = frozenset({11, 17})  # InvalidState, Banned
DAY_SECONDS = 86_400


def trade_url_token(trade_url: str) -> str:
    values = parse_qs(urlsplit(trade_url).query).get("token", [])
    return values[0] if values else ""


def _bans(client: BotClient, steam_id: str) -> dict[str, Any] | None:
    params = {"steamids": steam_id}
    if settings.STEAM_WEB_API_KEY:
        body = steam_request(
            "GET",
            f"{settings.STEAM_WEB_API_URL}/ISteamUser/GetPlayerBans/v1",
            params={**params, "key": settings.STEAM_WEB_API_KEY},
        ).body
        players = body.get("players") if isinstance(body, dict) else None
    else:
        players = client.webapi("GET", "ISteamUser/GetPlayerBans", params).get("players")
    if not isinstance(players, list):
        raise PlatformError("GetPlayerBans answered no players list")
    return next((p for p in players if str(p.get("SteamId")) == steam_id), None)


def _escrow_days(client: BotClient, steam_id: str, token: str) -> int | TradeUrlState:
    try:
        response = client.webapi(
            "GET",
            "IEconService/GetTradeHoldDurations",
            {"steamid_target": steam_id, "trade_offer_access_token": token},
        )
    except SteamRefusedError as exc:
        if exc.eresult == ACCESS_DENIED:
            return TradeUrlState.TRADE_URL_INVALID
        if exc.eresult in NOT_TRADEABLE_RESULTS:
            return TradeUrlState.USER_NOT_TRADEABLE
        raise PlatformError(f"GetTradeHoldDurations: {exc}") from exc
    if not response:
        return TradeUrlState.TRADE_URL_INVALID
    their = response.get("their_escrow")
    if their is None:
        return TradeUrlState.INVENTORY_PRIVATE
    if not isinstance(their, dict):
        raise PlatformError("GetTradeHoldDurations answered an unreadable their_escrow")
    seconds = int(their.get("escrow_end_duration_seconds") or 0)
    return ceil(seconds / DAY_SECONDS)


def _inventory_private(steam_id: str) -> bool:
    try:
        next(inventory_pages(public_page, steam_id, CS_GAME, TRADABLE_CONTEXT, count=1), None)
    except InventoryPrivateError:
        return True
    return False


def steam_user(platform_id: str, trade_url: str) -> PlatformUser:
    client = BotClient(bot_any())
    bans = _bans(client, platform_id)
    if bans is None:
        return PlatformUser(platform_id=platform_id, state=TradeUrlState.USER_NOT_FOUND)
    facts: dict[str, Any] = {
        "anti_cheat_banned": bool(bans.get("VACBanned")),
        "game_bans": int(bans.get("NumberOfGameBans") or 0),
        "economy_ban": str(bans.get("EconomyBan") or "none"),
    }
    if facts["economy_ban"] == "banned":
        return PlatformUser(platform_id=platform_id, state=TradeUrlState.BANNED, **facts)
    token = trade_url_token(trade_url)
    if token:
        escrow = _escrow_days(client, platform_id, token)
        if isinstance(escrow, TradeUrlState):
            return PlatformUser(platform_id=platform_id, state=escrow, **facts)
        facts["escrow_days"] = escrow
    if _inventory_private(platform_id):
        return PlatformUser(platform_id=platform_id, state=TradeUrlState.INVENTORY_PRIVATE, **facts)
    state = TradeUrlState.GAME_730_BANNED if facts["anti_cheat_banned"] else TradeUrlState.NORMAL
    return PlatformUser(platform_id=platform_id, state=state, **facts)
