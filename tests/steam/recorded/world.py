"""The recorded Steam's world: users and their inventories, our bots' accounts, offers, trades,
tokens, and a clock of its own that tests move as they move the service clock (a day for
sessions to expire, a week for trade protection to end). What the partner or Steam itself does
(accept, decline, counter, expire, reverse under trade protection, end a hold) is done here;
the routes in the sibling modules answer the adapter's requests from this state."""

import base64
import hashlib
import hmac
import itertools
import secrets
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

TOKEN = "Ab3_x-Z9"  # the token of every user's trade URL in tests.factories
ALPHABET = "23456789BCDFGHJKMNPQRTVWXY"
DAY = 86_400
# Valve's IEconService documentation: an offer not acted on expires (``expiration_time``).
OFFER_LIFETIME = 14 * DAY
# CS2 trade protection (July 2025): a trade's items may be taken back for 7 days (juliarose/
# steam-tradeoffer-manager issues 5 and 8; csfloat/extension PR 337).
PROTECTION = 7 * DAY
CS2 = 730
TRADABLE, PROTECTED = "2", "16"
# EAuthTokenPlatformType (node-steam-session, src/enums-steam/EAuthTokenPlatformType.ts) and the
# audiences of the tokens issued for each (its doc comment); refresh tokens also carry "derive"
# (LoginSession.ts, ``refreshToken`` setter).
STEAM_CLIENT, WEB_BROWSER, MOBILE_APP = 1, 2, 3
AUDIENCES = {STEAM_CLIENT: ["web", "client"], WEB_BROWSER: ["web"], MOBILE_APP: ["web", "mobile"]}
# Sources silent on lifetimes: an access token lasts a day (bitlbee/bitlbee-steam issue 1: the
# Web API answers 401 "after roughly 24 hours"); a refresh token, 200 days.
ACCESS_LIFETIME = DAY
REFRESH_LIFETIME = 200 * DAY
SIGNING_KEY = "recorded-steam-token-signing-key-32b"


def b64_secret(seed: str) -> str:
    return base64.b64encode(hashlib.sha1(seed.encode()).digest()).decode()


def steam_code(shared_secret: str, at: int) -> str:
    """DoctorMcKay/node-steam-totp ``generateAuthCode``."""
    mac = hmac.new(base64.b64decode(shared_secret), struct.pack(">Q", at // 30), "sha1").digest()
    start = mac[19] & 0xF
    full = int.from_bytes(mac[start : start + 4], "big") & 0x7FFFFFFF
    out = ""
    for _ in range(5):
        out += ALPHABET[full % 26]
        full //= 26
    return out


def conf_key(identity_secret: str, at: int, tag: str) -> str:
    """node-steam-totp ``getConfirmationKey``."""
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
    # Shown to its owner only (a CS2 item bought or traded lately: Allyans3/steam-market-api-v2
    # issue 27), counted in ``total_inventory_count`` all the same.
    owner_only: bool = False
    protected_until: float | None = None  # in context 16 until then


@dataclass
class User:
    steam_id: str
    token: str = TOKEN
    private: bool = False  # the profile (and so the inventory) is private
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
    refresh_tokens: dict[str, int] = field(default_factory=dict)  # live token -> platform type


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
    time_init: int = 0
    rollback_trade: str = ""


class RecordedSteam:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.offset = 0.0  # seconds the world's clock is ahead of the machine's
        self.users: dict[str, User] = {}
        self.bots: dict[str, Bot] = {}
        self.access: dict[str, tuple[str, float]] = {}  # token -> (steam id, expiry)
        self.offers: dict[str, Offer] = {}
        self.trades: dict[str, Trade] = {}
        self.confirmations: dict[str, tuple[str, str, str]] = {}  # id -> (bot, offer, nonce)
        self.logins: dict[str, dict[str, Any]] = {}  # client id -> state
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.rate_limit_next = 0  # the next N requests answer 429
        self.unavailable_next = 0  # the next N requests answer 502 (EResult 20)
        self.unavailable_paths: dict[str, int] = {}  # the next N requests of paths with this
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

    # ---- the clock -----------------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        """Time passes at Steam: tokens expire, holds and trade protection end, offers expire."""
        with self.lock:
            self.offset += seconds
            self.settle()

    def settle(self) -> None:
        """What Steam does by itself once its time comes (run before every answer)."""
        now = self.now()
        for offer in self.offers.values():
            if offer.state in (2, 9) and now >= offer.created + OFFER_LIFETIME:
                self._touch(offer, 5)  # Expired
            if offer.state == 11 and now >= offer.escrow_end:
                self._touch(offer, 3)  # the hold ended: the trade went through
                self.trades[offer.tradeid].status = 3
        for user in self.users.values():
            protected = user.inventory.get((CS2, PROTECTED), [])
            for asset in [a for a in protected if a.protected_until and a.protected_until <= now]:
                # Sources silent on the asset id after protection: a new one (the stricter
                # answer; nothing may rely on it staying).
                protected.remove(asset)
                freed = Asset(**{**asset.__dict__, "assetid": self.new_id()})
                freed.protected_until = None
                user.inventory.setdefault((CS2, TRADABLE), []).append(freed)

    # ---- the world, as tests set it up ---------------------------------------------------------

    def user(self, steam_id: str, **fields: Any) -> User:
        with self.lock:
            user = self.users.get(steam_id) or User(steam_id=steam_id)
            for name, value in fields.items():
                setattr(user, name, value)
            self.users[steam_id] = user
            return user

    def bot(self, steam_id: str, account_name: str, *, platform: int = MOBILE_APP) -> Bot:
        """Our bot's account with a refresh token of ``platform``, as staff would enter it."""
        bot = Bot(
            steam_id=steam_id,
            account_name=account_name,
            password=f"pw-{account_name}",
            shared_secret=b64_secret(f"shared {account_name}"),
            identity_secret=b64_secret(f"identity {account_name}"),
        )
        with self.lock:
            self.bots[steam_id] = bot
            self.user(steam_id)
            self.refresh_token_issue(bot, platform)
        return bot

    def new_id(self) -> str:
        return str(next(self.ids))

    def refresh_token_issue(self, bot: Bot, platform: int) -> str:
        now = int(self.now())
        claims = {
            "iss": "steam",
            "sub": bot.steam_id,
            "aud": [*AUDIENCES[platform], "derive"],
            "exp": now + REFRESH_LIFETIME,
            "iat": now,
            "jti": secrets.token_hex(8),
        }
        token = jwt.encode(claims, SIGNING_KEY, algorithm="HS256")
        bot.refresh_tokens[token] = platform
        return token

    def access_token_issue(self, steam_id: str, platform: int) -> str:
        now = int(self.now())
        claims = {
            "iss": "steam",
            "sub": steam_id,
            "aud": AUDIENCES[platform],
            "exp": now + ACCESS_LIFETIME,
            "iat": now,
            "jti": secrets.token_hex(8),
        }
        token = jwt.encode(claims, SIGNING_KEY, algorithm="HS256")
        self.access[token] = (steam_id, claims["exp"])
        return token

    def access_holder(self, token: str) -> str | None:
        """The Steam id an access token is live for."""
        held = self.access.get(token)
        if held is None or held[1] <= self.now():
            return None
        return held[0]

    def expire_sessions(self) -> None:
        """Every access token stops working before its time (refresh tokens still do)."""
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
        offer.updated = int(self.now())

    def accept(self, offer_id: str, *, escrow_days: int = 0) -> Trade:
        """The partner accepts: the items move (new asset ids; CS2 items land in the receiver's
        protected context 16 for 7 days), or wait in escrow."""
        with self.lock:
            offer = self.offers[offer_id]
            assert offer.state == 2, offer.state
            now = int(self.now())
            trade = Trade(self.new_id(), offer.sender, offer.partner, 3, [], [], time_init=now)
            trade.received = self._move(offer.receive, offer.partner, offer.sender, now=now)
            trade.given = self._move(offer.give, offer.sender, offer.partner, now=now)
            if escrow_days:
                trade.status = 10
                offer.escrow_end = now + escrow_days * DAY
            self.trades[trade.id] = trade
            offer.tradeid = trade.id
            self._touch(offer, 11 if escrow_days else 3)
            return trade

    def _move(
        self, assets: list[dict[str, Any]], source: str, target: str, *, now: int | None
    ) -> list[dict[str, Any]]:
        """``now``: the trade's time, its CS2 items protected from then on; None: a rollback
        (its items come back unprotected)."""
        moved = []
        for wanted in assets:
            app, context = int(wanted["appid"]), str(wanted["contextid"])
            held = self.users[source].inventory.get((app, context), [])
            asset = next(a for a in held if a.assetid == str(wanted["assetid"]))
            held.remove(asset)
            protected = now is not None and app == CS2
            new = Asset(**{**asset.__dict__, "assetid": self.new_id()})
            new.protected_until = now + PROTECTION if protected and now is not None else None
            new_context = PROTECTED if protected else TRADABLE
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
        """Trade protection: the sender of the items reverses the trade within its 7 days; they
        go back under new asset ids (a rollback trade), the trade's status becomes 12."""
        with self.lock:
            trade = self.trades[self.offers[offer_id].tradeid]
            assert self.now() < trade.time_init + PROTECTION, "protection is over"
            back = Trade(self.new_id(), trade.bot, trade.other, 3, [], [], int(self.now()))
            back.received = self._move(_where_now(trade.given), trade.other, trade.bot, now=None)
            back.given = self._move(_where_now(trade.received), trade.bot, trade.other, now=None)
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
            now = int(self.now())
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

    def gift(self, sender: str, partner: str, assets: list[Asset], *, app: int = CS2) -> Offer:
        """``sender`` (a supplier's bot) offers ``partner`` these items for nothing: how a
        supplier that delivers to our account hands items over."""
        with self.lock:
            self.user(sender).inventory.setdefault((app, TRADABLE), []).extend(assets)
            now = int(self.now())
            offer = Offer(
                self.new_id(),
                sender,
                partner,
                "",
                [
                    {
                        "appid": app,
                        "contextid": TRADABLE,
                        "assetid": a.assetid,
                        "amount": str(a.amount),
                        "classid": a.classid,
                        "instanceid": instance_of(a),
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

    def protection_ends(self, steam_id: str) -> None:
        """The user's protected items reach the end of their 7 days now (their trade's other
        items keep their own time)."""
        with self.lock:
            for asset in self.users[steam_id].inventory.get((CS2, PROTECTED), []):
                asset.protected_until = self.now()
            self.settle()

    def find_asset(self, assetid: str) -> Asset | None:
        for user in self.users.values():
            for held in user.inventory.values():
                for asset in held:
                    if asset.assetid == assetid:
                        return asset
        return None


def _where_now(moved: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A trade's items where the trade put them."""
    return [{**a, "assetid": a["new_assetid"], "contextid": a["new_contextid"]} for a in moved]


def instance_of(asset: Asset) -> str:
    """Assets that look different (stickers) have their own instance of the class."""
    if not asset.stickers:
        return "0"
    return str(int(hashlib.sha1("|".join(asset.stickers).encode()).hexdigest()[:8], 16))
