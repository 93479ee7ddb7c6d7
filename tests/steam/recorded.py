"""A recorded Steam: a local HTTP server answering the Web API (IEconService, ISteamUser,
IAuthenticationService) and the community endpoints (inventories, trade offers, mobile
confirmations) with the shapes, states and errors Steam's documentation and its widely used
open-source clients show. Tests drive the other side (a user accepts, declines, counters, lets
an offer expire; escrow; trade protection and its reversal; sessions expiring; 429 storms).

Sources (facts, not code):
- Valve, Steam Web API documentation: IEconService (GetTradeOffers, GetTradeOffer,
  GetTradeStatus, GetTradeHoldDurations), ISteamUser/GetPlayerBans; ETradeOfferState 1-11.
- DoctorMcKay/node-steam-tradeoffer-manager: lib/classes/TradeOffer.js (the send form and its
  answers), lib/helpers.js (strError "... (N)"), lib/webapi.js (x-eresult), lib/polling.js
  (cursor, time_historical_cutoff), resources/ETradeStatus.js.
- DoctorMcKay/node-steamcommunity: components/users.js (inventory pages of 1,000, more_items,
  last_assetid, 403 + null for a private inventory), components/confirmations.js (getlist,
  ajaxop, creator_id, needauth), components/http.js (a redirect to /login: session expired).
- node-steamcommunity issue 355, bukson/steampy issue 445 (count above 1,000: HTTP 400, null).
- juliarose/steam-tradeoffer-manager issues 5 and 8 (CS2 trade protection: received items in
  context 16; trade status 12 with ``rollback_trade``); csfloat/extension PR 337.
- bukson/steampy login.py, DoctorMcKay/node-steam-session (IAuthenticationService flow).
"""

import base64
import hashlib
import hmac
import itertools
import json
import secrets
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography.hazmat.primitives.asymmetric import padding, rsa

TOKEN = "Ab3_x-Z9"  # the token of every user's trade URL in tests.factories
MAX_COUNT = 1000
SEND_ERROR = "There was an error sending your trade offer.  Please try again later. ({})"
ALPHABET = "23456789BCDFGHJKMNPQRTVWXY"


def b64_secret(seed: str) -> str:
    return base64.b64encode(hashlib.sha1(seed.encode()).digest()).decode()


def steam_code(shared_secret: str, at: int) -> str:
    mac = hmac.new(base64.b64decode(shared_secret), struct.pack(">Q", at // 30), "sha1").digest()
    start = mac[19] & 0xF
    full = int.from_bytes(mac[start : start + 4], "big") & 0x7FFFFFFF
    out = ""
    for _ in range(5):
        out += ALPHABET[full % 26]
        full //= 26
    return out


def conf_key(identity_secret: str, at: int, tag: str) -> str:
    raw = at.to_bytes(8, "big") + tag.encode()
    return base64.b64encode(
        hmac.new(base64.b64decode(identity_secret), raw, "sha1").digest()
    ).decode()


@dataclass
class Asset:
    assetid: str
    name: str
    classid: str = "310776"
    amount: int = 1
    tradable: bool = True
    wear: str | None = None
    seed: int | None = None
    stickers: list[str] = field(default_factory=list)


@dataclass
class User:
    steam_id: str
    token: str = TOKEN
    private: bool = False
    vac: bool = False
    economy: str = "none"
    game_bans: int = 0
    escrow_days: int = 0
    # (appid, contextid) -> assets
    inventory: dict[tuple[int, str], list[Asset]] = field(default_factory=dict)


@dataclass
class Bot:
    steam_id: str
    account_name: str
    password: str
    shared_secret: str
    identity_secret: str
    refresh_tokens: set[str] = field(default_factory=set)


@dataclass
class Offer:
    id: str
    sender: str
    partner: str
    message: str
    give: list[dict[str, Any]]  # the sender's assets
    receive: list[dict[str, Any]]  # the partner's assets
    state: int
    created: int
    updated: int
    tradeid: str = ""
    escrow_end: int = 0
    countered: str = ""


@dataclass
class Trade:
    id: str
    bot: str
    other: str
    status: int
    received: list[dict[str, Any]]  # from the bot's side
    given: list[dict[str, Any]]
    rollback_trade: str = ""


class RecordedSteam:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.bots: dict[str, Bot] = {}
        self.access: dict[str, str] = {}  # token -> steam id
        self.offers: dict[str, Offer] = {}
        self.trades: dict[str, Trade] = {}
        self.confirmations: dict[str, tuple[str, str, str]] = {}  # id -> (bot, offer, nonce)
        self.logins: dict[str, dict[str, Any]] = {}  # client id -> state
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.rate_limit_next = 0  # the next N requests answer 429
        self.unavailable_next = 0  # the next N requests answer 502 (EResult 20)
        self.page_size = 100  # GetTradeOffers offers per page (cursor)
        self.send_started = threading.Event()
        self.send_release: threading.Event | None = None  # holds /send's answer when set
        # When set, GetTradeOffers calls wait here until that many have arrived (two pollers
        # made to overlap for certain).
        self.offer_polls_together: threading.Barrier | None = None
        self.polls_met = 0  # GetTradeOffers calls that met the others there
        self.accepted_by_partner: list[str] = []  # offers a bot accepted (``/accept``)
        self.ids = itertools.count(6_000_000_001)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        self.url = ""

    # ---- the world, as tests set it up ---------------------------------------------------------

    def user(self, steam_id: str, **fields: Any) -> User:
        with self.lock:
            user = self.users.get(steam_id) or User(steam_id=steam_id)
            for name, value in fields.items():
                setattr(user, name, value)
            self.users[steam_id] = user
            return user

    def bot(self, steam_id: str, account_name: str) -> Bot:
        bot = Bot(
            steam_id=steam_id,
            account_name=account_name,
            password=f"pw-{account_name}",
            shared_secret=b64_secret(f"shared {account_name}"),
            identity_secret=b64_secret(f"identity {account_name}"),
        )
        bot.refresh_tokens.add(f"rt-{account_name}")
        with self.lock:
            self.bots[steam_id] = bot
            self.user(steam_id)
        return bot

    def new_id(self) -> str:
        return str(next(self.ids))

    def expire_sessions(self) -> None:
        """Every access token stops working (refresh tokens still do)."""
        with self.lock:
            self.access.clear()

    def revoke_refresh_tokens(self, steam_id: str) -> None:
        with self.lock:
            self.bots[steam_id].refresh_tokens.clear()

    def calls_to(self, path_part: str) -> list[tuple[str, str, dict[str, Any]]]:
        return [c for c in self.calls if path_part in c[1]]

    # ---- the partner's side ---------------------------------------------------------------------

    def _touch(self, offer: Offer, state: int) -> None:
        offer.state = state
        offer.updated = int(time.time())

    def accept(self, offer_id: str, *, escrow_days: int = 0) -> Trade:
        """The partner accepts: the items move (new asset ids; CS2 items the bot receives land
        in the protected context 16), or wait in escrow."""
        with self.lock:
            offer = self.offers[offer_id]
            assert offer.state == 2, offer.state
            trade = Trade(self.new_id(), offer.sender, offer.partner, 3, [], [])
            trade.received = self._move(offer.receive, offer.partner, offer.sender, protected=True)
            trade.given = self._move(offer.give, offer.sender, offer.partner, protected=True)
            if escrow_days:
                trade.status = 10
                offer.escrow_end = int(time.time()) + escrow_days * 86400
            self.trades[trade.id] = trade
            offer.tradeid = trade.id
            self._touch(offer, 11 if escrow_days else 3)
            return trade

    def _move(self, assets: list[dict[str, Any]], source: str, target: str, *, protected: bool):
        moved = []
        for wanted in assets:
            app, context = int(wanted["appid"]), str(wanted["contextid"])
            held = self.users[source].inventory.get((app, context), [])
            asset = next(a for a in held if a.assetid == str(wanted["assetid"]))
            held.remove(asset)
            new_context = "16" if protected and app == 730 else "2"
            new = Asset(**{**asset.__dict__, "assetid": self.new_id()})
            self.users[target].inventory.setdefault((app, new_context), []).append(new)
            moved.append(
                {
                    "appid": app,
                    "contextid": context,
                    "assetid": asset.assetid,
                    "amount": str(asset.amount),
                    "classid": asset.classid,
                    "instanceid": "0",
                    "new_assetid": new.assetid,
                    "new_contextid": new_context,
                }
            )
        return moved

    def reverse(self, offer_id: str) -> Trade:
        """Trade protection: the sender of the items reverses the trade; they go back under new
        asset ids (a rollback trade), the original trade's status becomes 12."""
        with self.lock:
            trade = self.trades[self.offers[offer_id].tradeid]
            back = Trade(self.new_id(), trade.bot, trade.other, 3, [], [])
            back.received = self._move(
                [
                    {**a, "assetid": a["new_assetid"], "contextid": a["new_contextid"]}
                    for a in trade.given
                ],
                trade.other,
                trade.bot,
                protected=False,
            )
            back.given = self._move(
                [
                    {**a, "assetid": a["new_assetid"], "contextid": a["new_contextid"]}
                    for a in trade.received
                ],
                trade.bot,
                trade.other,
                protected=False,
            )
            self.trades[back.id] = back
            trade.status = 12
            trade.rollback_trade = back.id
            return back

    def decline(self, offer_id: str) -> None:
        with self.lock:
            self._touch(self.offers[offer_id], 7)

    def expire(self, offer_id: str) -> None:
        with self.lock:
            self._touch(self.offers[offer_id], 5)

    def counter(self, offer_id: str) -> Offer:
        with self.lock:
            original = self.offers[offer_id]
            self._touch(original, 4)
            now = int(time.time())
            counter = Offer(
                self.new_id(),
                original.partner,
                original.sender,
                "",
                original.receive[:1],
                [],
                2,
                now,
                now,
                countered=original.id,
            )
            self.offers[counter.id] = counter
            return counter

    def remove_items(self, offer_id: str) -> None:
        with self.lock:
            self._touch(self.offers[offer_id], 8)

    def sent_by(self, steam_id: str) -> list[Offer]:
        return [o for o in self.offers.values() if o.sender == steam_id]

    def gift(self, sender: str, partner: str, assets: list[Asset], *, app: int = 730) -> Offer:
        """``sender`` (a supplier's bot) offers ``partner`` these items for nothing: how a
        supplier that delivers to our account hands items over."""
        with self.lock:
            self.user(sender).inventory.setdefault((app, "2"), []).extend(assets)
            now = int(time.time())
            offer = Offer(
                self.new_id(),
                sender,
                partner,
                "",
                [
                    {
                        "appid": app,
                        "contextid": "2",
                        "assetid": a.assetid,
                        "amount": str(a.amount),
                        "classid": a.classid,
                        "instanceid": _instance(a),
                    }
                    for a in assets
                ],
                [],
                2,
                now,
                now,
            )
            self.offers[offer.id] = offer
            return offer

    def protection_ends(self, steam_id: str, app: int = 730) -> None:
        """Trade protection is over: the user's protected items are tradable again."""
        with self.lock:
            inventory = self.users[steam_id].inventory
            inventory.setdefault((app, "2"), []).extend(inventory.pop((app, "16"), []))

    def find_asset(self, assetid: str) -> Asset | None:
        for user in self.users.values():
            for held in user.inventory.values():
                for asset in held:
                    if asset.assetid == assetid:
                        return asset
        return None

    # ---- serving ------------------------------------------------------------------------------

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        form: dict[str, str],
        cookies: dict[str, str],
    ):
        """-> (status, body, headers)"""
        with self.lock:
            self.calls.append((method, path, {**query, **form}))
            if self.rate_limit_next > 0:
                self.rate_limit_next -= 1
                return 429, None, {"Retry-After": "0"}
            if self.unavailable_next > 0:
                self.unavailable_next -= 1
                return 502, None, {"x-eresult": "20"}
            together = self.offer_polls_together if "GetTradeOffers" in path else None
        if together is not None:
            together.wait(30)  # raises (a 500 for the caller) if the others never come
            with self.lock:
                self.polls_met += 1
        for prefix, route in ROUTES:
            if path.startswith(prefix):
                return route(self, method, path, {**query, **form}, cookies)
        return 404, None, {}

    # -- auth
    def _caller(self, params: dict[str, str]) -> str | None:
        return self.access.get(params.get("access_token", ""))

    def _session(
        self, cookies: dict[str, str], params: dict[str, str], form_post: bool
    ) -> str | None:
        raw = cookies.get("steamLoginSecure", "")
        steam_id, _, token = raw.partition("||")
        if self.access.get(token) != steam_id:
            return None
        if form_post and params.get("sessionid") != cookies.get("sessionid"):
            return None
        return steam_id

    def _token(self, steam_id: str) -> str:
        import jwt

        token = jwt.encode(
            {"sub": steam_id, "exp": int(time.time()) + 86400, "n": secrets.token_hex(4)},
            "recorded-steam-token-signing-key-32b",
            algorithm="HS256",
        )
        self.access[token] = steam_id
        return token


def _ok(response: dict[str, Any] | None = None, eresult: int = 1):
    return 200, {"response": response or {}}, {"x-eresult": str(eresult)}


def r_auth(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    name = path.split("/")[2]
    with steam.lock:
        if name == "GetPasswordRSAPublicKey":
            numbers = steam.key.public_key().public_numbers()
            return _ok(
                {
                    "publickey_mod": f"{numbers.n:x}",
                    "publickey_exp": f"{numbers.e:x}",
                    "timestamp": "123456",
                }
            )
        if name == "BeginAuthSessionViaCredentials":
            bot = next(
                (b for b in steam.bots.values() if b.account_name == p.get("account_name")), None
            )
            try:
                password = steam.key.decrypt(
                    base64.b64decode(p.get("encrypted_password", "")), padding.PKCS1v15()
                ).decode()
            except ValueError:
                password = ""
            if bot is None or password != bot.password:
                return _ok(eresult=5)  # InvalidPassword
            client_id = steam.new_id()
            steam.logins[client_id] = {
                "bot": bot,
                "request_id": secrets.token_hex(8),
                "code": False,
            }
            return _ok(
                {
                    "client_id": client_id,
                    "request_id": steam.logins[client_id]["request_id"],
                    "interval": 5,
                    "allowed_confirmations": [{"confirmation_type": 3}],
                    "steamid": bot.steam_id,
                }
            )
        if name == "UpdateAuthSessionWithSteamGuardCode":
            login = steam.logins.get(p.get("client_id", ""))
            now = int(time.time())
            codes = (
                {steam_code(login["bot"].shared_secret, now + d) for d in (-30, 0, 30)}
                if login
                else set()
            )
            if login is None or p.get("code") not in codes or p.get("code_type") != "3":
                return _ok(eresult=88)  # TwoFactorCodeMismatch
            login["code"] = True
            return _ok()
        if name == "PollAuthSessionStatus":
            login = steam.logins.get(p.get("client_id", ""))
            if login is None or login["request_id"] != p.get("request_id"):
                return _ok(eresult=9)
            if not login["code"]:
                return _ok({})  # still waiting for the guard code
            bot = login["bot"]
            refresh = f"rt-{secrets.token_hex(6)}"
            bot.refresh_tokens.add(refresh)
            return _ok(
                {
                    "refresh_token": refresh,
                    "access_token": steam._token(bot.steam_id),
                    "account_name": bot.account_name,
                }
            )
        if name == "GenerateAccessTokenForApp":
            bot = steam.bots.get(p.get("steamid", ""))
            if bot is None or p.get("refresh_token") not in bot.refresh_tokens:
                return _ok(eresult=15)  # AccessDenied
            return _ok({"access_token": steam._token(bot.steam_id)})
    return 404, None, {}


def _offer_json(offer: Offer, caller: str) -> dict[str, Any]:
    ours = offer.sender == caller
    other = offer.partner if ours else offer.sender
    return {
        "tradeofferid": offer.id,
        "accountid_other": int(other) & 0xFFFFFFFF,
        "message": offer.message,
        "expiration_time": offer.created + 14 * 86400,
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
                key = (int(item["appid"]), asset.classid, _instance(asset))
                described[key] = _description(int(item["appid"]), asset)
    return list(described.values())


def r_econ(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    name = path.split("/")[2]
    with steam.lock:
        caller = steam._caller(p)
        if caller is None:
            return 401, None, {}  # an access token Steam no longer accepts
        if name == "GetTradeOffers":
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
                [
                    o
                    for o in steam.offers.values()
                    if o.partner == caller and wanted(o) and o.state != 9
                ]
                if p.get("get_received_offers") == "1"
                else []
            )
            every = [("s", o) for o in sorted(sent, key=lambda o: o.id)] + [
                ("r", o) for o in sorted(received, key=lambda o: o.id)
            ]
            start = int(p.get("cursor") or 0)
            page = every[start : start + steam.page_size]
            response: dict[str, Any] = {
                "trade_offers_sent": [_offer_json(o, caller) for side, o in page if side == "s"],
                "trade_offers_received": [
                    _offer_json(o, caller) for side, o in page if side == "r"
                ],
            }
            if start + steam.page_size < len(every):
                response["next_cursor"] = start + steam.page_size
            if p.get("get_descriptions") == "1":
                response["descriptions"] = _offer_descriptions(steam, [o for _, o in page])
            return _ok(response)
        if name == "GetTradeOffer":
            offer = steam.offers.get(p.get("tradeofferid", ""))
            if offer is None or caller not in (offer.sender, offer.partner):
                return _ok(eresult=9)  # FileNotFound
            return _ok({"offer": _offer_json(offer, caller)})
        if name == "GetTradeStatus":
            trade = steam.trades.get(p.get("tradeid", ""))
            if trade is None or caller not in (trade.bot, trade.other):
                return _ok({"trades": []})
            body = {
                "tradeid": trade.id,
                "steamid_other": trade.other,
                "time_init": int(time.time()),
                "status": trade.status,
                "assets_received": trade.received,
                "assets_given": trade.given,
                **({"rollback_trade": trade.rollback_trade} if trade.rollback_trade else {}),
            }
            return _ok({"trades": [body]})
        if name == "GetTradeHoldDurations":
            user = steam.users.get(p.get("steamid_target", ""))
            if user is None or p.get("trade_offer_access_token") != user.token:
                return _ok(eresult=15)  # AccessDenied: the token is not this user's
            seconds = user.escrow_days * 86400
            return _ok(
                {
                    "my_escrow": {"escrow_end_duration_seconds": 0},
                    "their_escrow": {"escrow_end_duration_seconds": seconds},
                    "both_escrow": {"escrow_end_duration_seconds": seconds},
                }
            )
    return 404, None, {}


def r_bans(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    with steam.lock:
        if steam._caller(p) is None and not p.get("key"):
            return 401, None, {}
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


def r_inventory(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    _, _, steam_id, app, context = path.split("/")[:5]
    count = int(p.get("count", "1000"))
    if count > MAX_COUNT:
        return 400, None, {}  # body "null", as since May 2025
    with steam.lock:
        user = steam.users.get(steam_id)
        if user is None or user.private:
            return 403, None, {}
        held = list(user.inventory.get((int(app), context), []))
    start = p.get("start_assetid")
    index = next((n + 1 for n, a in enumerate(held) if a.assetid == start), 0) if start else 0
    page = held[index : index + count]
    body: dict[str, Any] = {"success": 1, "total_inventory_count": len(held), "rwgrsn": -2}
    if page:
        body["assets"] = [
            {
                "appid": int(app),
                "contextid": context,
                "assetid": a.assetid,
                "classid": a.classid,
                "instanceid": _instance(a),
                "amount": str(a.amount),
            }
            for a in page
        ]
        body["descriptions"] = [_description(int(app), a) for a in page]
        body["asset_properties"] = [
            {
                "appid": int(app),
                "contextid": context,
                "assetid": a.assetid,
                "asset_properties": [
                    *(
                        [{"propertyid": 1, "int_value": str(a.seed), "name": "Pattern Template"}]
                        if a.seed is not None
                        else []
                    ),
                    *(
                        [{"propertyid": 2, "float_value": a.wear, "name": "Wear Rating"}]
                        if a.wear
                        else []
                    ),
                ],
            }
            for a in page
        ]
    if index + count < len(held):
        body["more_items"] = 1
        body["last_assetid"] = page[-1].assetid
    return 200, body, {}


def _instance(asset: Asset) -> str:
    """Assets that look different (stickers) have their own instance of the class."""
    if not asset.stickers:
        return "0"
    return str(int(hashlib.sha1("|".join(asset.stickers).encode()).hexdigest()[:8], 16))


def _description(app: int, asset: Asset) -> dict[str, Any]:
    stickers = "".join(
        f'<img width=64 height=48 src="https://cdn.test/{n}.png" title="Sticker: {name}">'
        for n, name in enumerate(asset.stickers)
    )
    return {
        "appid": app,
        "classid": asset.classid,
        "instanceid": _instance(asset),
        "tradable": int(asset.tradable),
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


def _classed(steam: RecordedSteam, item: dict[str, Any]) -> dict[str, Any]:
    """An offer's item as Steam lists it: with its class and instance."""
    asset = steam.find_asset(str(item["assetid"]))
    if asset is None:
        return item
    return {**item, "classid": asset.classid, "instanceid": _instance(asset)}


def r_send(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    with steam.lock:
        bot = steam._session(cookies, p, form_post=True)
        if bot is None:
            return 302, None, {"Location": f"{steam.url}/login/home/?goto=tradeoffer"}
        partner = steam.users.get(p.get("partner", ""))
        offer_data = json.loads(p.get("json_tradeoffer", "{}"))
        token = json.loads(p.get("trade_offer_create_params", "{}")).get("trade_offer_access_token")
        if partner is None or token != partner.token:
            return (
                500,
                {"strError": SEND_ERROR.format(15)},
                {},
            )
        for side, owner in (("them", partner.steam_id), ("me", bot)):
            for asset in offer_data[side]["assets"]:
                held = steam.users[owner].inventory.get(
                    (int(asset["appid"]), str(asset["contextid"])), []
                )
                if not any(a.assetid == str(asset["assetid"]) for a in held):
                    return (
                        500,
                        {"strError": SEND_ERROR.format(26)},
                        {},
                    )
        now = int(time.time())
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


def r_offer_action(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    _, _, offer_id, action = path.split("/")[:4]
    with steam.lock:
        caller = steam._session(cookies, p, form_post=True)
        if caller is None:
            return 302, None, {"Location": f"{steam.url}/login/home/"}
        offer = steam.offers.get(offer_id)
        if offer is None or offer.state not in (2, 9):
            return 500, {"strError": "There was an error. (11)"}, {}
        mine = offer.sender == caller
        if (action == "cancel" and not mine) or (action in ("decline", "accept") and mine):
            return 500, {"strError": "There was an error. (15)"}, {}
        if action == "accept":
            # TradeOffer.js ``accept``: the partner's Steam id must be the sender's.
            if offer.state != 2 or p.get("partner") != offer.sender:
                return 500, {"strError": "There was an error accepting this trade offer. (8)"}, {}
            trade = steam.accept(offer.id)
            steam.accepted_by_partner.append(offer.id)
            return 200, {"tradeid": trade.id}, {}
        steam._touch(offer, 6 if action == "cancel" else 7)
        return 200, {"tradeofferid": offer.id}, {}


def r_mobileconf(steam: RecordedSteam, method: str, path: str, p: dict[str, str], cookies):
    name = path.split("/")[2]
    with steam.lock:
        caller = steam._session(cookies, p, form_post=False)
        bot = steam.bots.get(p.get("a", ""))
        if caller is None or bot is None or caller != bot.steam_id:
            return 200, {"success": False, "needauth": True}, {}
        at = int(p.get("t", "0"))
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
                    "creation_time": int(time.time()),
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


ROUTES = (
    ("/IAuthenticationService/", r_auth),
    ("/IEconService/", r_econ),
    ("/ISteamUser/GetPlayerBans", r_bans),
    ("/inventory/", r_inventory),
    ("/tradeoffer/new/send", r_send),
    ("/tradeoffer/", r_offer_action),
    ("/mobileconf/", r_mobileconf),
)


class _Handler(BaseHTTPRequestHandler):
    steam: RecordedSteam

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""
        form = {k: v[-1] for k, v in parse_qs(raw).items()}
        cookies = {}
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name:
                cookies[name] = value
        status, body, headers = self.steam.handle(method, url.path, query, form, cookies)
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller went away (a killed worker)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


@contextmanager
def recorded_steam() -> Iterator[RecordedSteam]:
    steam = RecordedSteam()
    handler = type("Handler", (_Handler,), {"steam": steam})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    steam.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield steam
    finally:
        if steam.send_release is not None:
            steam.send_release.set()
        server.shutdown()
        server.server_close()
