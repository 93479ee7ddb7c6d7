"""Recorded suppliers: local HTTP servers that answer as Waxpeer's and DMarket's public API
documentation and their widely used open-source clients show (the sources are cited in
trading/marketplace/suppliers/waxpeer.py and dmarket.py). Each keeps a small world the test
arranges (listings, trades, balance) and can be told to misbehave: refuse, change a price, lose
a listing, answer 429 or maintenance, or hold a buy's answer until the client times out (after
the buy happened: the outcome the client cannot know)."""

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey


@dataclass
class Listing:
    ref: str  # Waxpeer item_id / DMarket offerId
    name: str
    price: int  # the supplier's unit: thousandths (Waxpeer) or cents (DMarket)
    asset: str = ""  # DMarket itemId
    phase: str = ""
    wear: float | None = None


@dataclass
class World:
    """What the supplier holds; ``fault`` is the next answer's misbehaviour (one of
    ``429``, ``maintenance``, ``hold``: the buy happens and its answer never comes in time),
    used once."""

    listings: dict[str, Listing] = field(default_factory=dict)
    trades: dict[str, dict] = field(default_factory=dict)  # by our reference / DMarket asset
    balance: int = 10_000_000
    fault: str = ""
    buys: list[dict] = field(default_factory=list)  # every buy request that reached us
    requests: list[str] = field(default_factory=list)  # every path asked
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take_fault(self, *faults: str) -> str:
        with self.lock:
            if self.fault in faults:
                fault, self.fault = self.fault, ""
                return fault
        return ""


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
        """429 with Retry-After, and maintenance (503), as both suppliers answer them."""
        fault = self.world.take_fault("429", "maintenance")
        if fault == "429":
            self.answer(429, {"message": "Too many requests"}, {"Retry-After": "20"})
            return True
        if fault == "maintenance":
            self.answer(503, {"message": "maintenance"})
            return True
        return False


class WaxpeerHandler(_Handler):
    """``/v1/<endpoint>?api=<key>&...`` (DarkGL/waxpeer src/waxpeer.ts)."""

    api_key = ""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        self.world.requests.append(url.path)
        if query.get("api", [""])[0] != self.api_key:
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
        """``price`` is the most we pay; ``project_id`` our reference. A project id already
        used answers as its first buy did (a retried request never buys twice)."""
        item_id = query["item_id"][0]
        price = int(query["price"][0])
        project_id = query.get("project_id", [""])[0]
        with self.world.lock:
            self.world.buys.append({k: v[0] for k, v in query.items()})
            if project_id in self.world.trades:
                body = {"success": True, "id": self.world.trades[project_id]["id"], "msg": ""}
            else:
                listing = self.world.listings.get(item_id)
                if listing is None:
                    body = {"success": False, "msg": "Item not found"}
                elif listing.price > price:
                    body = {"success": False, "msg": "Price changed", "price": listing.price}
                elif self.world.balance < listing.price:
                    body = {"success": False, "msg": "Not enough money"}
                else:
                    del self.world.listings[item_id]
                    self.world.balance -= listing.price
                    trade_id = len(self.world.trades) + 1
                    self.world.trades[project_id] = {
                        "id": trade_id,
                        "project_id": project_id,
                        "item_id": item_id,
                        "price": listing.price,
                        "name": listing.name,
                        "status": 0,
                        "done": False,
                        "reason": "",
                        "partner": query.get("partner", [""])[0],
                        "token": query.get("token", [""])[0],
                    }
                    body = {"success": True, "id": trade_id, "msg": "buy_csgo"}
        if self.world.take_fault("hold"):
            self.world.released.wait(timeout=10)
            return
        self.answer(200, body)

    def get_check_many_project_id(self, query: dict[str, list[str]]) -> None:
        ids = set(query.get("id", []))
        trades = [
            {k: v for k, v in trade.items() if k not in ("partner", "token")}
            for ref, trade in list(self.world.trades.items())
            if ref in ids
        ]
        self.answer(200, {"success": True, "trades": trades})

    def get_user(self, query: dict[str, list[str]]) -> None:
        self.answer(200, {"success": True, "user": {"wallet": self.world.balance, "id": "u1"}})


class DMarketHandler(_Handler):
    """Every request must carry a valid Ed25519 signature over method + path with query +
    body + X-Sign-Date, with a date within 2 minutes of the server's clock."""

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
            self.answer(401, {"code": "Unauthorized", "message": "invalid api key"})
            return False
        if not date.isdigit() or abs(int(date) - self.now()) > 120:
            self.answer(
                401,
                {"code": "Unauthorized", "message": "request expired: check X-Sign-Date"},
            )
            return False
        message = (self.command + self.path).encode() + body + date.encode()
        try:
            VerifyKey(bytes.fromhex(self.public_key)).verify(
                message, bytes.fromhex(sign.removeprefix("dmar ed25519 "))
            )
        except (BadSignatureError, ValueError):
            self.answer(401, {"code": "Unauthorized", "message": "signature is invalid"})
            return False
        return True

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
        elif route == ("GET", "/marketplace-api/v1/user-inventory"):
            self.user_inventory(query)
        elif route == ("GET", "/account/v1/balance"):
            self.answer(200, {"usd": str(self.world.balance), "dmc": "0"})
        else:
            self.answer(404, {"code": "NotFound", "message": "no such route"})

    def do_GET(self) -> None:
        self.handle_any()

    def do_PATCH(self) -> None:
        self.handle_any()

    def market_items(self, query: dict[str, list[str]]) -> None:
        """``title`` matches by prefix, as the market's search does."""
        title = query.get("title", [""])[0]
        objects = [
            {
                "itemId": listing.asset,
                "title": listing.name,
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
        (offer,) = payload["offers"]
        amount = int(offer["price"]["amount"])
        with self.world.lock:
            self.world.buys.append(offer)
            listing = self.world.listings.get(offer["offerId"])
            if listing is None:
                status, body = 400, {"code": "OfferNotFound", "message": "offer not found"}
            elif listing.price != amount:
                status, body = 400, {"code": "PriceMismatch", "message": "price changed"}
            elif self.world.balance < amount:
                status, body = 400, {"code": "NotEnoughBalance", "message": "not enough"}
            else:
                del self.world.listings[listing.ref]
                self.world.balance -= amount
                self.world.trades[listing.asset] = {
                    "AssetID": listing.asset,
                    "Title": listing.name,
                    "Location": "AssetLocationInMarket",
                }
                status = 200
                body = {"orderId": str(uuid.uuid4()), "status": "TxSuccess", "txId": "tx-1"}
        if self.world.take_fault("hold"):
            self.world.released.wait(timeout=10)
            return
        self.answer(status, body)

    def user_inventory(self, query: dict[str, list[str]]) -> None:
        limit = int(query.get("Limit", ["100"])[0])
        offset = int(query.get("Offset", ["0"])[0])
        items = list(self.world.trades.values())
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
