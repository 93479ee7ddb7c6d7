"""The community pages the adapter uses: inventories, trade offers (send, cancel, decline,
accept) and the mobile confirmations.

Sources: DoctorMcKay/node-steamcommunity (components/users.js ``getUserInventoryContents``,
components/confirmations.js, components/http.js); DoctorMcKay/node-steam-tradeoffer-manager
(lib/classes/TradeOffer.js ``send``/``accept``, lib/helpers.js: ``strError`` ending in the
EResult); somespecialone/aiosteampy (client/components/inventory.py) and its issue 95, bukson/
steampy issue 453, juliarose/steam-tradeoffer-manager issues 5 and 6 (CS2's protected context
16, readable by its logged-in owner only); Allyans3/steam-market-api-v2 issue 27 (CS2 items of
context 2 shown to their owner only); node-steamcommunity issue 355 and steampy issue 445 (a
``count`` above 1,000: HTTP 400, ``null``)."""

import json
import secrets
import time
from typing import Any

from tests.steam.recorded.world import PROTECTED, Asset, Offer, RecordedSteam, conf_key, instance_of

MAX_COUNT = 1000
SEND_ERROR = "There was an error sending your trade offer.  Please try again later. ({})"
# Mobile confirmations answer 429 to anything but the mobile app since July 2026
# (node-steamcommunity issue 371, fixed by sending okhttp's user agent: commit f7fe587).
MOBILE_AGENT = "okhttp/"


def session_holder(steam: RecordedSteam, request: Any, params: dict[str, str], form: bool) -> str:
    """Whose live session the cookies carry ("" for none): ``steamLoginSecure`` is
    ``<steamid>||<access token>`` (node-steam-session ``getWebCookies``); a form post must send
    the ``sessionid`` cookie's value back as a field too."""
    steam_id, _, token = request.cookies.get("steamLoginSecure", "").partition("||")
    if not steam_id or steam.access_holder(token) != steam_id:
        return ""
    if form and params.get("sessionid") != request.cookies.get("sessionid"):
        return ""
    return steam_id


def description(app: int, asset: Asset, *, protected: bool) -> dict[str, Any]:
    stickers = "".join(
        f'<img width=64 height=48 src="https://cdn.test/{n}.png" title="Sticker: {name}">'
        for n, name in enumerate(asset.stickers)
    )
    return {
        "appid": app,
        "classid": asset.classid,
        "instanceid": instance_of(asset),
        "tradable": int(asset.tradable and not protected),
        "marketable": 1,
        "name": asset.name,
        "market_hash_name": asset.name,
        "market_tradable_restriction": 7,
        "tags": [
            {"category": "Type", "internal_name": "CSGO_Type_Rifle", "localized_tag_name": "Rifle"}
        ],
        "descriptions": (
            [
                {
                    "type": "html",
                    "value": f'<br><div id="sticker_info">{stickers}</div>',
                    "name": "sticker_info",
                }
            ]
            if stickers
            else []
        ),
    }


def r_inventory(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    """users.js: 403 with a ``null`` body for a private profile or inventory, never to its
    logged-in owner; the CS2 protected context 16 to its owner only (anyone else is refused
    the same way: sources name no other answer, and this one is the strictest). A session
    Steam no longer takes is read as no session at all (an anonymous visitor: sources name
    no other answer). Items shown to their owner only are left out for others but counted in
    ``total_inventory_count`` (node-steamcommunity commit 67774f8)."""
    _, _, steam_id, app, context = path.split("/")[:5]
    count = int(p.get("count", "1000"))
    if count > MAX_COUNT:
        return 400, None, {}  # body "null", as since May 2025
    with steam.lock:
        user = steam.users.get(steam_id)
        owner = session_holder(steam, request, p, form=False) == steam_id
        if user is None or (not owner and (user.private or context == PROTECTED)):
            return 403, None, {}
        held = list(user.inventory.get((int(app), context), []))
    shown = held if owner else [a for a in held if not a.owner_only]
    start = p.get("start_assetid")
    index = next((n + 1 for n, a in enumerate(shown) if a.assetid == start), 0) if start else 0
    page = shown[index : index + count]
    body: dict[str, Any] = {"success": 1, "total_inventory_count": len(held), "rwgrsn": -2}
    if page:
        body["assets"] = [
            {
                "appid": int(app),
                "contextid": context,
                "assetid": a.assetid,
                "classid": a.classid,
                "instanceid": instance_of(a),
                "amount": str(a.amount),
            }
            for a in page
        ]
        body["descriptions"] = [
            description(int(app), a, protected=context == PROTECTED) for a in page
        ]
        body["asset_properties"] = [_properties(int(app), context, a) for a in page]
    if index + count < len(shown):
        body["more_items"] = 1
        body["last_assetid"] = page[-1].assetid
    return 200, body, {}


def _properties(app: int, context: str, asset: Asset) -> dict[str, Any]:
    """The paint seed (property 1) and float (property 2), as node-steamcommunity (commit
    bc8893f, ``asset_properties``) and aiosteampy issue 95 show them."""
    properties: list[dict[str, Any]] = []
    if asset.seed is not None:
        properties.append(
            {"propertyid": 1, "int_value": str(asset.seed), "name": "Pattern Template"}
        )
    if asset.wear:
        properties.append({"propertyid": 2, "float_value": asset.wear, "name": "Wear Rating"})
    return {
        "appid": app,
        "contextid": context,
        "assetid": asset.assetid,
        "asset_properties": properties,
    }


def _classed(steam: RecordedSteam, item: dict[str, Any]) -> dict[str, Any]:
    """An offer's item as Steam lists it: with its class and instance."""
    asset = steam.find_asset(str(item["assetid"]))
    if asset is None:
        return item
    return {**item, "classid": asset.classid, "instanceid": instance_of(asset)}


def _login_redirect(steam: RecordedSteam):
    """components/http.js: a community page without a live session redirects to /login."""
    return 302, None, {"Location": f"{steam.url}/login/home/?goto=tradeoffer"}


def r_send(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    """TradeOffer.js ``send``: the form's partner and token; an item not where the offer says
    (a CS2 item in context 16 is not in context 2) is EResult 26 (Revoked), a wrong token 15,
    both as ``strError`` with HTTP 500 (helpers.js ``makeAnError``); else the offer id and
    ``needs_mobile_confirmation``."""
    with steam.lock:
        bot = session_holder(steam, request, p, form=True)
        if not bot:
            return _login_redirect(steam)
        partner = steam.users.get(p.get("partner", ""))
        offer_data = json.loads(p.get("json_tradeoffer", "{}"))
        token = json.loads(p.get("trade_offer_create_params", "{}")).get("trade_offer_access_token")
        if partner is None or token != partner.token:
            return 500, {"strError": SEND_ERROR.format(15)}, {}
        for side, owner in (("them", partner.steam_id), ("me", bot)):
            for asset in offer_data[side]["assets"]:
                held = steam.users[owner].inventory.get(
                    (int(asset["appid"]), str(asset["contextid"])), []
                )
                if not any(a.assetid == str(asset["assetid"]) for a in held):
                    return 500, {"strError": SEND_ERROR.format(26)}, {}
        now = int(steam.now())
        offer = Offer(
            steam.new_id(),
            bot,
            partner.steam_id,
            p.get("tradeoffermessage", ""),
            [_classed(steam, a) for a in offer_data["me"]["assets"]],
            [_classed(steam, a) for a in offer_data["them"]["assets"]],
            9,
            now,
            now,
        )
        steam.offers[offer.id] = offer
        conf_id = steam.new_id()
        steam.confirmations[conf_id] = (bot, offer.id, secrets.token_hex(8))
        release = steam.send_release
    steam.send_started.set()
    if release is not None:
        release.wait(30)  # the worker waiting here is the one a test kills
    return (
        200,
        {
            "tradeofferid": offer.id,
            "needs_mobile_confirmation": True,
            "needs_email_confirmation": False,
        },
        {},
    )


def r_offer_action(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    """TradeOffer.js ``cancel`` (the sender), ``decline`` and ``accept`` (the partner; the form's
    ``partner`` must be the sender). An offer no longer open: EResult 11 (InvalidState)."""
    _, _, offer_id, action = path.split("/")[:4]
    with steam.lock:
        caller = session_holder(steam, request, p, form=True)
        if not caller:
            return _login_redirect(steam)
        offer = steam.offers.get(offer_id)
        if offer is None or offer.state not in (2, 9):
            return 500, {"strError": "There was an error. (11)"}, {}
        mine = offer.sender == caller
        if (action == "cancel" and not mine) or (action in ("decline", "accept") and mine):
            return 500, {"strError": "There was an error. (15)"}, {}
        if action == "accept":
            if offer.state != 2 or p.get("partner") != offer.sender:
                return 500, {"strError": "There was an error accepting this trade offer. (8)"}, {}
            trade = steam.accept(offer.id)
            steam.accepted_by_partner.append(offer.id)
            return 200, {"tradeid": trade.id}, {}
        steam._touch(offer, 6 if action == "cancel" else 7)
        return 200, {"tradeofferid": offer.id}, {}


def r_mobileconf(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    """confirmations.js: ``getlist`` and ``ajaxop`` with the device id, the Steam id and a
    confirmation key of the time and tag; a session not taken: ``needauth``; a wrong key:
    "Invalid authenticator"; ``conf`` entries with ``id``, ``nonce``, ``creator_id`` (the
    offer id) and ``type`` 2 (a trade offer)."""
    name = path.split("/")[2]
    if not request.headers.get("user-agent", "").startswith(MOBILE_AGENT):
        return 429, None, {}
    with steam.lock:
        caller = session_holder(steam, request, p, form=False)
        bot = steam.bots.get(p.get("a", ""))
        if not caller or bot is None or caller != bot.steam_id:
            return 200, {"success": False, "needauth": True}, {}
        at = int(p.get("t", "0"))
        # Keys are made and checked on the machine's clock (see auth.machine_clock).
        if (
            p.get("k") != conf_key(bot.identity_secret, at, p.get("tag", ""))
            or abs(at - time.time()) > 300
        ):
            return 200, {"success": False, "message": "Invalid authenticator"}, {}
        if name == "getlist":
            confs = [
                {
                    "type": 2,
                    "type_name": "Trade Offer",
                    "id": cid,
                    "creator_id": offer_id,
                    "nonce": nonce,
                    "creation_time": int(steam.now()),
                    "headline": "",
                    "summary": [],
                }
                for cid, (owner, offer_id, nonce) in steam.confirmations.items()
                if owner == bot.steam_id and steam.offers[offer_id].state == 9
            ]
            return 200, {"success": True, "conf": confs}, {}
        if name == "ajaxop":
            entry = steam.confirmations.get(p.get("cid", ""))
            if entry is None or entry[2] != p.get("ck") or p.get("op") not in ("allow", "cancel"):
                return 200, {"success": False}, {}
            offer = steam.offers[entry[1]]
            steam._touch(offer, 2 if p["op"] == "allow" else 10)
            return 200, {"success": True}, {}
    return 404, None, {}
