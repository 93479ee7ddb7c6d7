"""The Web API methods the adapter calls as a bot (``access_token``) or with a key:
``IEconService`` and ``ISteamUser/GetPlayerBans``.

Sources: Valve's Steam Web API documentation (partner.steamgames.com/doc/webapi/IEconService,
ISteamUser; the fields as steamapi.xpaw.me lists them); DoctorMcKay/node-steam-tradeoffer-manager
(lib/webapi.js: the outcome in ``x-eresult``, an expired token a non-200 answer saying "Access
is denied"; lib/polling.js: ``cursor``/``next_cursor``, ``time_historical_cutoff``;
resources/ETradeOfferState.js, ETradeStatus.js); juliarose/steam-tradeoffer-manager issue 8
(trade status 12 with ``rollback_trade``)."""

from typing import Any

from tests.steam.recorded.auth import ok
from tests.steam.recorded.community import description
from tests.steam.recorded.world import OFFER_LIFETIME, Offer, RecordedSteam, instance_of

DENIED_PAGE = (
    "<html><head><title>Unauthorized</title></head><body><h1>Unauthorized</h1>"
    "Access is denied. Retrying will not help. Please verify your <pre>key=</pre> parameter."
    "</body></html>"
)


def denied():
    """An access token Steam no longer takes: HTTP 401, an HTML page (webapi.js looks for
    "Access is denied" in a non-200 answer; bitlbee/bitlbee-steam issue 1: 401 after a day)."""
    return 401, DENIED_PAGE, {"Content-Type": "text/html"}


def offer_json(offer: Offer, caller: str) -> dict[str, Any]:
    """A CEcon_TradeOffer as GetTradeOffers lists it (Valve's IEconService documentation)."""
    ours = offer.sender == caller
    other = offer.partner if ours else offer.sender
    return {
        "tradeofferid": offer.id,
        "accountid_other": int(other) & 0xFFFFFFFF,
        "message": offer.message,
        "expiration_time": offer.created + OFFER_LIFETIME,
        "trade_offer_state": offer.state,
        "items_to_give": offer.give if ours else offer.receive,
        "items_to_receive": offer.receive if ours else offer.give,
        "is_our_offer": ours,
        "time_created": offer.created,
        "time_updated": offer.updated,
        **({"tradeid": offer.tradeid} if offer.tradeid else {}),
        "from_real_time_trade": False,
        "escrow_end_date": offer.escrow_end,
        "confirmation_method": 2,
    }


def _offer_descriptions(steam: RecordedSteam, offers: list[Offer]) -> list[dict[str, Any]]:
    """The descriptions of the offers' items (``get_descriptions=1``), for those still held."""
    described = {}
    for offer in offers:
        for item in offer.give + offer.receive:
            asset = steam.find_asset(str(item["assetid"]))
            if asset is not None:
                key = (int(item["appid"]), asset.classid, instance_of(asset))
                described[key] = description(int(item["appid"]), asset, protected=False)
    return list(described.values())


def _offers(steam: RecordedSteam, caller: str, p: dict[str, str]):
    """lib/polling.js: with ``active_only``, offers still active, and the others only when
    updated since ``time_historical_cutoff``; pages by ``cursor``, the next one's in
    ``next_cursor`` (absent on the last page). Offers awaiting the sender's confirmation
    (state 9) are not shown to the partner."""
    cutoff = int(p.get("time_historical_cutoff", "0"))
    active_only = p.get("active_only") == "1"

    def wanted(o: Offer) -> bool:
        return not active_only or o.state in (2, 9) or o.updated >= cutoff

    sent = (
        [o for o in steam.offers.values() if o.sender == caller and wanted(o)]
        if p.get("get_sent_offers") == "1"
        else []
    )
    received = (
        [o for o in steam.offers.values() if o.partner == caller and wanted(o) and o.state != 9]
        if p.get("get_received_offers") == "1"
        else []
    )
    every = [("s", o) for o in sorted(sent, key=lambda o: o.id)] + [
        ("r", o) for o in sorted(received, key=lambda o: o.id)
    ]
    start = int(p.get("cursor") or 0)
    page = every[start : start + steam.page_size]
    response: dict[str, Any] = {
        "trade_offers_sent": [offer_json(o, caller) for side, o in page if side == "s"],
        "trade_offers_received": [offer_json(o, caller) for side, o in page if side == "r"],
    }
    if start + steam.page_size < len(every):
        response["next_cursor"] = start + steam.page_size
    if p.get("get_descriptions") == "1":
        response["descriptions"] = _offer_descriptions(steam, [o for _, o in page])
    return ok(response)


def _hold_durations(steam: RecordedSteam, p: dict[str, str]):
    """GetTradeHoldDurations (Valve's IEconService documentation: ``my_escrow``,
    ``their_escrow``, ``both_escrow``, each ``escrow_end_duration_seconds``). A token that is
    not the target's: an empty ``response`` with an OK header; a target whose profile is
    private: ``their_escrow`` (and so ``both_escrow``) left out (issue 38 saw Steam answer so;
    the documentation is silent, so the answer gives no EResult to go by: the stricter one)."""
    user = steam.users.get(p.get("steamid_target", ""))
    if user is None or p.get("trade_offer_access_token") != user.token:
        return ok({})
    mine = {"escrow_end_duration_seconds": 0}
    if user.private:
        return ok({"my_escrow": mine})
    theirs = {"escrow_end_duration_seconds": user.escrow_days * 86_400}
    return ok({"my_escrow": mine, "their_escrow": theirs, "both_escrow": theirs})


def r_econ(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    name = path.split("/")[2]
    with steam.lock:
        caller = steam.access_holder(p.get("access_token", ""))
        if caller is None:
            return denied()
        if name == "GetTradeOffers":
            return _offers(steam, caller, p)
        if name == "GetTradeOffer":
            offer = steam.offers.get(p.get("tradeofferid", ""))
            if offer is None or caller not in (offer.sender, offer.partner):
                # lib/index.js ``getOffer``: no ``offer`` in the response is "No matching offer
                # found"; sources name no EResult for it, so none but OK is given.
                return ok({})
            return ok({"offer": offer_json(offer, caller)})
        if name == "GetTradeStatus":
            trade = steam.trades.get(p.get("tradeid", ""))
            if trade is None or caller not in (trade.bot, trade.other):
                return ok({"trades": []})
            body = {
                "tradeid": trade.id,
                "steamid_other": trade.other,
                "time_init": trade.time_init,
                "status": trade.status,
                "assets_received": trade.received,
                "assets_given": trade.given,
                **({"rollback_trade": trade.rollback_trade} if trade.rollback_trade else {}),
            }
            return ok({"trades": [body]})
        if name == "GetTradeHoldDurations":
            return _hold_durations(steam, p)
    return 404, None, {}


def r_bans(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    """ISteamUser/GetPlayerBans (Valve's documentation): ``players``, one per known Steam id,
    with CommunityBanned, VACBanned, NumberOfVACBans, DaysSinceLastBan, NumberOfGameBans,
    EconomyBan; unknown ids are left out."""
    with steam.lock:
        if steam.access_holder(p.get("access_token", "")) is None and not p.get("key"):
            return denied()
        players = []
        for steam_id in p.get("steamids", "").split(","):
            user = steam.users.get(steam_id)
            if user is not None:
                players.append(
                    {
                        "SteamId": steam_id,
                        "CommunityBanned": False,
                        "VACBanned": user.vac,
                        "NumberOfVACBans": int(user.vac),
                        "DaysSinceLastBan": 0,
                        "NumberOfGameBans": user.game_bans,
                        "EconomyBan": user.economy,
                    }
                )
        return 200, {"players": players}, {}
