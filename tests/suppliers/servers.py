"""Recorded suppliers: local HTTP servers that answer as Waxpeer's and DMarket's published
documentation and clients show, behaviour by behaviour, each citing where it comes from; where
the sources are silent or disagree, the server does the stricter thing (docs/suppliers.md,
"What each adapter relies on"). Never written from the adapters.

Sources, as cited below:
- [WX] DarkGL/waxpeer ``src/waxpeer.ts`` and ``src/types/waxpeer.ts`` (the Waxpeer API wrapper
  its README points to, with the example answers of api.waxpeer.com/docs).
- [DM] DMarket's trading API reference (docs.dmarket.com, OpenAPI "DMarket trading API"
  v2.0.0 as mirrored in api-evangelist/dmarket ``openapi/_original/dmarket-trading-openapi.yml``).
- [DMT] dmarket/dm-trading-tools (DMarket's own signing examples).
- [DMC] dmarket-client 0.1.1 on PyPI (a typed client generated from DMarket's OpenAPI).
- [DMJ] public DMarket clients that call ``/marketplace-api/v1/user-inventory`` and
  ``/exchange/v1/withdraw-assets`` (a TypeScript client's ``UserInventoryApiResponse`` and
  ``WithdrawAssetsRequest``; a Ruby bot's ``process_withdrawing``), found through the code
  search: they show the v1 inventory's ``Items[]`` with ``AssetID``, ``ClassID``,
  ``Location``, ``Withdrawable`` and a withdrawal naming ``{id: AssetID, classId: ClassID,
  gameId}``.

Each server keeps a small world the test arranges and moves (listings, trades, our inventory at
DMarket, its own clock) and can be told to misbehave once: answer 429 or maintenance, or hold a
state-changing answer until the client times out (after the change happened)."""

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from urllib.parse import parse_qs, urlsplit

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

# Steam trade offer ids as Steam numbers them (ten digits, e.g. [WX]'s "3547735377").
_offer_ids = count(6_100_000_001)


def steam_offer_id() -> str:
    return str(next(_offer_ids))


@dataclass
class Listing:
    ref: str  # Waxpeer item_id / DMarket offerId
    name: str
    price: int  # the supplier's unit: thousandths (Waxpeer) or cents (DMarket)
    asset: str = ""  # DMarket itemId: the asset, as it lands in our DMarket inventory
    phase: str = ""
    wear: float | None = None
    # DMarket: True for an item its bots hold (offer type ``dmarket``), False for a p2p offer
    # its seller trades from their own Steam inventory ([DMC]: ``offerType``).
    held: bool = True
    class_id: str = "310776898"
    # DMarket: seconds (of this server's clock) after the buy before it may be withdrawn.
    locked_for: int = 0


@dataclass
class World:
    """What the supplier holds; ``fault`` is the next answer's misbehaviour (one of
    ``429``, ``maintenance``, ``hold``: the change happens and its answer never comes in
    time), used once. ``elapsed`` is this supplier's clock, moved by the test with the
    service's (seconds since the world began)."""

    listings: dict[str, Listing] = field(default_factory=dict)
    # Waxpeer: by our reference (project_id); DMarket: our inventory, by asset id.
    trades: dict[str, dict] = field(default_factory=dict)
    balance: int = 10_000_000
    fault: str = ""
    fault_path: str = ""  # the fault waits for a request to this path ("": the next one)
    buys: list[dict] = field(default_factory=list)  # every buy request that reached us
    withdraws: list[dict] = field(default_factory=list)  # every withdraw-assets request
    requests: list[str] = field(default_factory=list)  # every path asked
    elapsed: float = 0.0
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take_fault(self, *faults: str, path: str = "") -> str:
        with self.lock:
            if self.fault in faults and self.fault_path in ("", path):
                fault, self.fault = self.fault, ""
                return fault
        return ""

    def now(self) -> float:
        return time.time() + self.elapsed

    # Waxpeer's sellers, buyers and timers, as [WX] describes them (buy-one-p2p's notes).
    def seller_sends(self, reference: str) -> str:
        """The seller created the Steam trade offer and reported it to Waxpeer (``steam-trade``:
        "Created Steam trade id"): status 4, with that offer's id as ``trade_id``."""
        trade = self.trades[reference]
        trade.update(status=4, trade_id=steam_offer_id(), last_updated=int(self.now()))
        return str(trade["trade_id"])

    def recipient_accepts(self, reference: str) -> None:
        self.trades[reference].update(status=5, done=True, last_updated=int(self.now()))

    def waxpeer_cancels(self, reference: str, reason: str) -> None:
        """Status 6: "declined and refunded" (an invalid seller at once, no trade after 6
        minutes, an unconfirmed one after 11-15 minutes)."""
        trade = self.trades[reference]
        trade.update(status=6, done=True, reason=reason, last_updated=int(self.now()))
        self.balance += int(trade["price"])

    # DMarket's side of a withdrawal: its bot trades the item to our linked Steam account.
    def dmarket_bot_sends(self, asset: str) -> None:
        self.trades[asset]["Location"] = "AssetLocationInTransfer"

    def arrives_in_steam(self, asset: str) -> None:
        self.trades[asset].update(Location="AssetLocationInGame", Withdrawable=False)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    world: World

    def log_message(self, *args: object) -> None:
        pass

    def answer(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def shared_faults(self) -> bool:
        """429 with Retry-After ([DM] FAQ's rate limits; Waxpeer: silent, answered the same
        way) and maintenance (503, the stricter: no JSON promise)."""
        fault = self.world.take_fault("429", "maintenance", path=urlsplit(self.path).path)
        if fault == "429":
            self.answer(429, {"message": "Too many requests"}, {"Retry-After": "20"})
            return True
        if fault == "maintenance":
            self.answer(503, {"message": "maintenance"})
            return True
        return False

    def held_answer(self) -> bool:
        """The change is made; its answer is never sent in time (the client's read timeout)."""
        if self.world.take_fault("hold", path=urlsplit(self.path).path):
            self.world.released.wait(timeout=10)
            return True
        return False


class WaxpeerHandler(_Handler):
    """``GET /v1/<endpoint>?api=<key>&...`` ([WX] ``get``: the key is the ``api`` query)."""

    api_key = ""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        self.world.requests.append(url.path)
        if query.get("api", [""])[0] != self.api_key:
            # Silent on a wrong key's status: refused outright, the stricter.
            self.answer(401, {"success": False, "msg": "Wrong api key"})
            return
        if self.shared_faults():
            return
        endpoint = url.path.removeprefix("/v1/")
        handler = getattr(self, "get_" + endpoint.replace("-", "_"), None)
        if handler is None:
            self.answer(404, {"success": False, "msg": "Not found"})
            return
        handler(query)

    def get_search_items_by_name(self, query: dict[str, list[str]]) -> None:
        """[WX] ``searchItems``: repeated ``names``; ``items[]`` of ``{name, price, image,
        item_id, phase?}`` (``float`` as the listing feed carries it)."""
        names = set(query.get("names", []))
        items = [
            {
                "name": listing.name,
                "price": listing.price,
                "item_id": listing.ref,
                "image": "https://steamcommunity-a.akamaihd.net/economy/image/class/730/1",
                **({"phase": listing.phase} if listing.phase else {}),
                **({"float": listing.wear} if listing.wear is not None else {}),
            }
            for listing in list(self.world.listings.values())
            if listing.name in names
        ]
        self.answer(200, {"success": True, "items": items})

    def get_buy_one_p2p(self, query: dict[str, list[str]]) -> None:
        """[WX] ``buyItemWithId``: ``item_id``, ``price`` (thousandths, the most we pay),
        ``token``, ``partner``, ``project_id`` ("your custom id string[50]") -> ``{success, id,
        msg}`` (``msg`` is "buy_csgo" even on success). Nothing says a ``project_id`` used
        before is recognised, so it is not: every request is a new purchase."""
        item_id = query["item_id"][0]
        price = int(query["price"][0])
        project_id = query.get("project_id", [""])[0]
        with self.world.lock:
            self.world.buys.append({k: v[0] for k, v in query.items()})
            listing = self.world.listings.get(item_id)
            if listing is None:
                body: dict = {"success": False, "msg": "Item not found"}
            elif listing.price > price:
                body = {"success": False, "msg": "Price changed", "price": listing.price}
            elif self.world.balance < listing.price:
                body = {"success": False, "msg": "Not enough money"}
            else:
                del self.world.listings[item_id]
                self.world.balance -= listing.price
                trade_id = 4_258_000 + len(self.world.trades) + 1
                self.world.trades[project_id or str(trade_id)] = {
                    "id": trade_id,
                    "project_id": project_id,
                    "custom_id": str(uuid.uuid4()),
                    "item_id": item_id,
                    "price": listing.price,
                    "name": listing.name,
                    "status": 0,
                    "trade_id": None,  # [WX] History.trade_id: null until the offer exists
                    "done": False,
                    "reason": "",
                    "for_steamid64": "",
                    "send_until": int(self.world.now()) + 6 * 60,
                    "last_updated": int(self.world.now()),
                    "partner": query.get("partner", [""])[0],
                    "token": query.get("token", [""])[0],
                }
                body = {"success": True, "id": trade_id, "msg": "buy_csgo"}
        if not self.held_answer():
            self.answer(200, body)

    def get_check_many_project_id(self, query: dict[str, list[str]]) -> None:
        """[WX] ``customTradeRequest``: repeated ``id`` (our project ids) -> ``{success, msg,
        trades[]}``; each trade ``{id, price, name, status, project_id, custom_id, trade_id,
        done, for_steamid64, reason, send_until, last_updated}``. ``trade_id`` is the Steam
        offer the seller reported, a string; [WX] types it optional and null in ``history``,
        so it is there only once the seller reported it (``seller_sends``), whatever the
        status says. An id it does not know is left out with ``msg`` saying so and ``success``
        still true (as [WX]'s ``check-many-steam`` example answers "Invalid ID")."""
        ids = query.get("id", [])
        known = [ref for ref in ids if ref in self.world.trades]
        trades = [
            {k: v for k, v in self.world.trades[ref].items() if k not in ("partner", "token")}
            for ref in known
        ]
        body: dict = {"success": True, "trades": trades}
        if len(known) < len(ids):
            body["msg"] = "Invalid ID"
        self.answer(200, body)

    def get_user(self, query: dict[str, list[str]]) -> None:
        """[WX] ``getProfile``: ``{success, user: {wallet, id, ...}}``, thousandths."""
        self.answer(200, {"success": True, "user": {"wallet": self.world.balance, "id": "u1"}})


class DMarketHandler(_Handler):
    """Every request must carry a valid Ed25519 signature over method + path with query +
    body + X-Sign-Date, with a date within 2 minutes of the server's clock ([DM]'s "Request
    signature instructions", [DMT])."""

    public_key = ""
    clock_offset = 0  # the server's clock minus the real one (a skewed client, seen from here)

    def now(self) -> int:
        return int(time.time()) + self.clock_offset

    def date_time_string(self, timestamp: float | None = None) -> str:
        """Every answer's ``Date`` header tells this server's clock."""
        return formatdate(self.now(), usegmt=True)

    def verified(self, body: bytes) -> bool:
        date = self.headers.get("X-Sign-Date", "")
        sign = self.headers.get("X-Request-Sign", "")
        if self.headers.get("X-Api-Key") != self.public_key or not sign.startswith("dmar ed25519 "):
            self.answer(401, {"code": "InvalidAPIKey", "message": "invalid api key"})
            return False
        if not date.isdigit() or abs(int(date) - self.now()) > 120:
            self.answer(401, {"code": "Unauthorized", "message": "request expired"})
            return False
        message = (self.command + self.path).encode() + body + date.encode()
        try:
            VerifyKey(bytes.fromhex(self.public_key)).verify(
                message, bytes.fromhex(sign.removeprefix("dmar ed25519 "))
            )
        except (BadSignatureError, ValueError):
            self.answer(401, {"code": "InvalidSignature", "message": "signature is invalid"})
            return False
        return True

    def refuse(self, code: str, message: str) -> None:
        """[DM] ``rest.ErrorRepresentation``: ``{code, message}``, HTTP 400."""
        self.answer(400, {"code": code, "message": message})

    def handle_any(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        self.world.requests.append(urlsplit(self.path).path)
        if not self.verified(body) or self.shared_faults():
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        route = (self.command, url.path)
        if route == ("GET", "/exchange/v1/market/items"):
            self.market_items(query)
        elif route == ("PATCH", "/exchange/v1/offers-buy"):
            self.offers_buy(json.loads(body))
        elif route == ("POST", "/exchange/v1/withdraw-assets"):
            self.withdraw_assets(json.loads(body or b"{}"))
        elif route == ("GET", "/marketplace-api/v1/user-inventory"):
            self.user_inventory(query)
        elif route == ("GET", "/account/v1/balance"):
            balance = str(self.world.balance)
            # [DM] representation.UserBalance: cents as strings.
            self.answer(200, {"usd": balance, "usdAvailableToWithdraw": balance, "dmc": "0"})
        else:
            self.answer(404, {"code": "NotFound", "message": "no such route"})

    def do_GET(self) -> None:
        self.handle_any()

    def do_PATCH(self) -> None:
        self.handle_any()

    def do_POST(self) -> None:
        self.handle_any()

    def market_items(self, query: dict[str, list[str]]) -> None:
        """``objects[]`` of ``{itemId, title, classId, gameId, inMarket, type, price: {USD},
        extra: {offerId, floatValue?, phase?}}``, ``cursor``, ``total`` ([DMJ]'s
        ``MarketItemsResponse``; ``title`` matches by prefix as [DM]'s title filters do).
        ``inMarket``: held by DMarket's bots ([DM]'s inventory: "True if the asset is held on
        DMarket") - offer type ``dmarket``; false: a p2p offer ([DMC]'s ``offerType``)."""
        title = query.get("title", [""])[0]
        objects = [
            {
                "itemId": listing.asset,
                "title": listing.name,
                "classId": listing.class_id,
                "gameId": "a8db",
                "inMarket": listing.held,
                "type": "offer",
                "price": {"USD": str(listing.price)},
                "extra": {
                    "offerId": listing.ref,
                    **({"floatValue": listing.wear} if listing.wear is not None else {}),
                    **({"phase": listing.phase} if listing.phase else {}),
                },
            }
            for listing in sorted(self.world.listings.values(), key=lambda item: item.price)
            if listing.name.startswith(title)
        ]
        self.answer(200, {"objects": objects, "total": {"offers": len(objects)}, "cursor": ""})

    def offers_buy(self, payload: dict) -> None:
        """[DM] ``buyOffers``: ``{offers: [{offerId, price: {amount, currency}, type}]}``, the
        amount exactly the listed cents -> ``{orderId, status, txId, dmOffersStatus |
        p2pOffersStatus}``; refusals ``{code, message}``. ``type`` must be the offer's own
        (silent on a wrong one: refused). A ``dmarket`` item lands in our DMarket inventory
        (``AssetLocationInMarket``), withdrawn only on request; a p2p item is traded by its
        seller to our linked Steam account and shows up once that trade starts (silent on
        p2p purchases in the inventory before: not shown, the stricter)."""
        (offer,) = payload["offers"]
        amount = int(offer["price"]["amount"])
        with self.world.lock:
            self.world.buys.append(offer)
            listing = self.world.listings.get(offer["offerId"])
            kind = "dmarket" if listing is not None and listing.held else "p2p"
            if listing is None:
                status, body = 400, {"code": "OfferNotFound", "message": "offer not found"}
            elif offer.get("type") != kind:
                status, body = 400, {"code": "BadRequest", "message": f"not a {kind} offer"}
            elif listing.price != amount:
                status, body = 400, {"code": "PriceMismatch", "message": "price changed"}
            elif self.world.balance < amount:
                status, body = 400, {"code": "NotEnoughBalance", "message": "not enough"}
            else:
                del self.world.listings[listing.ref]
                self.world.balance -= amount
                self.world.trades[listing.asset] = {
                    "AssetID": listing.asset,
                    "ClassID": listing.class_id,
                    "Title": listing.name,
                    "GameID": "a8db",
                    "Location": "AssetLocationInMarket" if listing.held else "",
                    "Withdrawable": listing.held and listing.locked_for == 0,
                    "Tradable": True,
                    "unlock_at": self.world.now() + listing.locked_for,
                }
                status = 200
                body = {
                    "orderId": str(uuid.uuid4()),
                    "status": "TxSuccess",
                    "txId": str(uuid.uuid4()),
                    f"{'dm' if listing.held else 'p2p'}OffersStatus": {
                        listing.ref: {"started": True}
                    },
                }
        if not self.held_answer():
            self.answer(status, body)

    def withdraw_assets(self, payload: dict) -> None:
        """[DM] ``withdrawAssetsHandler``: ``{assets: [{id, gameId, classId}] (all required),
        requestId (required)}`` -> ``{transferId}``; DMarket's bot then trades the item to our
        linked Steam account (``AssetLocationInTransfer``, then ``InGame``). [DMC] keeps the
        ``requestId`` but does not take it as idempotent, so neither does this server: a request
        is judged by where its items are, and an item no longer held for us (already on its
        way) or not withdrawable yet is refused."""
        assets = payload.get("assets")
        request_id = payload.get("requestId")
        with self.world.lock:
            self.world.withdraws.append(payload)
            if not isinstance(assets, list) or not assets or not request_id:
                self.refuse("BadRequest", "assets and requestId are required")
                return
            for asset in assets:
                held = self.world.trades.get(str(asset.get("id")))
                if any(not asset.get(key) for key in ("id", "gameId", "classId")):
                    self.refuse("BadRequest", "id, gameId and classId are required")
                    return
                if held is None or held["Location"] != "AssetLocationInMarket":
                    self.refuse("InventoryItemsNotFound", f"{asset['id']} is not in the market")
                    return
                if held["ClassID"] != asset["classId"] or not self.withdrawable(held):
                    self.refuse("BadRequest", f"{asset['id']} cannot be withdrawn")
                    return
            for asset in assets:
                self.world.trades[str(asset["id"])]["Location"] = "AssetLocationInTransfer"
        if not self.held_answer():
            self.answer(200, {"transferId": str(uuid.uuid4())})

    def withdrawable(self, held: dict) -> bool:
        if held["Location"] == "AssetLocationInMarket" and held["unlock_at"] <= self.world.now():
            held["Withdrawable"] = True
        return bool(held["Withdrawable"])

    def user_inventory(self, query: dict[str, list[str]]) -> None:
        """[DMJ]: ``GET /marketplace-api/v1/user-inventory?GameID&Limit&Offset`` -> ``{Items:
        [{AssetID, ClassID, Title, GameID, Location, Withdrawable, Tradable}], Total}``
        (``Total`` a string). DMarket's current reference [DM] lists
        ``/marketplace-api/v2/user/inventory`` instead (``items[]`` with ``inMarket``, no
        ``Location``); docs/suppliers.md says which the adapter reads and why."""
        limit = int(query.get("Limit", ["100"])[0])
        offset = int(query.get("Offset", ["0"])[0])
        with self.world.lock:
            for held in self.world.trades.values():
                self.withdrawable(held)  # its lock may have ended meanwhile
            items = [
                {k: v for k, v in held.items() if k != "unlock_at"}
                for held in self.world.trades.values()
                if held["Location"]
            ]
        self.answer(200, {"Items": items[offset : offset + limit], "Total": str(len(items))})


@dataclass
class Recorded:
    url: str
    world: World
    server: ThreadingHTTPServer


@contextmanager
def serve(handler: type[_Handler], **attributes: object) -> Iterator[Recorded]:
    world = World()
    handler_class = type("Handler", (handler,), {"world": world, **attributes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Recorded(f"http://127.0.0.1:{server.server_address[1]}", world, server)
    finally:
        world.released.set()
        server.shutdown()
        server.server_close()


def dmarket_keys() -> tuple[str, str]:
    """(public hex, secret hex) as DMarket issues them: the secret is seed + public key."""
    key = SigningKey.generate()
    public = key.verify_key.encode().hex()
    return public, key.encode().hex() + public
