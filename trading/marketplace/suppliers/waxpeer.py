"""Waxpeer (P2P): the seller sends the item straight to the recipient's trade URL.

Sources (public): the API reference at api.waxpeer.com/docs and docs.waxpeer.com, and the
widely used clients DarkGL/waxpeer (src/waxpeer.ts: endpoints, parameters, example answers,
the trade timings quoted below) and centrual/waxpeer-api (ETradeStage: the status numbers).

- Every call is ``GET|POST {base}/v1/<endpoint>?api=<key>&...``; answers are JSON with
  ``success`` (and ``msg`` when it is false).
- Prices are integers in thousandths of a USD ("1$=1000"); converted exactly with Decimal.
- ``search-items-by-name?game=csgo&names=...`` (repeated ``names``): ``items[]`` of
  ``{name, price, item_id, image, phase?, float?, paint_index?}``.
- ``buy-one-p2p?item_id&price&partner&token&project_id&game``: ``{success, id, msg}``; ``price``
  is the most we pay. ``project_id`` ("your custom id string[50]") is our reference: Waxpeer
  recommends it "so that you can track a trade in case of a timeout or break of purchase
  request using the /check-many-project-id GET method one minute after the request".
- ``check-many-project-id?id=...``: ``trades[]`` of ``{id, project_id, status, trade_id, done,
  reason, send_until, ...}``; status 0 waiting, 1 processing, 2 waiting for the seller's
  confirmation, 4 trade sent, 5 completed, 6 declined and refunded. ``id`` is Waxpeer's own;
  ``trade_id`` is the Steam trade offer the seller created and reported to Waxpeer
  (``steam-trade``: "tradeid: Created Steam trade id"), a string (``"3547735377"``) or, in
  ``history``, a number, null until the trade exists: it is the withdrawal's ``offerID``.
- Timings: invalid seller details cancel at once (status 6); a seller who creates no trade is
  cancelled after 6 minutes; a created trade not confirmed after 11-15 minutes (6 hours when the
  seller's connection is lost). Each cancel refunds our Waxpeer balance; the withdrawal item
  fails (or is declined, once sent) and the merchant is refunded.
- ``user``: ``{success, user: {wallet, ...}}``, ``wallet`` in thousandths.

The listing feed (``trading/marketplace/suppliers/waxpeer_socket.py`` connects to it): a
Socket.IO endpoint at ``wss://waxpeer.com`` (path ``/socket.io/``, websocket transport, the API
key in the ``authorization`` header); after connecting the client emits ``sub`` with ``{name:
<game: csgo, rust, ...>, value: true}`` for each game it wants, then receives ``new``,
``update`` and ``removed`` events, each one listing ``{game, item_id, price (thousandths), name,
float?, paint_index?, sticker_names?, classid?, steam_price?}`` (DarkGL/waxpeer
src/types/sockets.ts: ``WebsiteWebSocketEvents``, ``WebsiteSocketSubEvents``; the client it
shipped until January 2024, src/Sockets/websiteSocket.ts, for the URL, path, header and ``sub``);
the older names ``add_item``, ``update_item`` and ``remove`` carry the same payload.
"""

from decimal import Decimal
from urllib.parse import parse_qs, urlencode, urlsplit

from trading.games import CS_GAME, RUST_GAME
from trading.marketplace.suppliers.base import (
    BuyRequest,
    ListingChange,
    OrderRef,
    PriceUnit,
    SupplierOffer,
    SupplierOutcomeUnknownError,
    SupplierRefusedError,
    SupplierTrade,
    SupplierUnavailableError,
    TradeState,
)
from trading.marketplace.suppliers.http import SupplierHttp, json_body

UNIT = PriceUnit("thousandths", Decimal(1000))  # Waxpeer's price unit
GAMES = {CS_GAME: "csgo", RUST_GAME: "rust"}
STATES = {
    0: TradeState.WAITING,
    1: TradeState.WAITING,
    2: TradeState.WAITING,
    4: TradeState.SENT,
    5: TradeState.DELIVERED,
    6: TradeState.CANCELED,
}
# Refusals of a buy, by the words of ``msg``: what nothing was bought for.
GONE_WORDS = ("not found", "not_found", "sold", "no item", "unavailable", "not available")
PRICE_WORDS = ("price",)
# The market switched purchases off for a game, or is too busy: nothing bought, try later.
PAUSED_WORDS = ("buy_csgo", "buy_rust", "maintenance", "system busy")


# Socket events -> whether the listing is gone afterwards.
SOCKET_EVENTS = {
    "new": False,
    "update": False,
    "removed": True,
    "add_item": False,
    "update_item": False,
    "remove": True,
}
SOCKET_GAMES = {name: game for game, name in GAMES.items()}


def trade_url_parts(trade_url: str) -> tuple[str, str]:
    """(partner, token) of a trade URL, as buy-one-p2p takes them."""
    query = parse_qs(urlsplit(trade_url).query)
    return query.get("partner", [""])[0], query.get("token", [""])[0]


class WaxpeerClient:
    name = "waxpeer"
    delivers_to = ""  # the seller trades straight to the recipient
    names_per_call = 50  # search-items-by-name takes at most 50 names
    games = tuple(GAMES)

    def __init__(self, *, http: SupplierHttp, api_key: str) -> None:
        self.http = http
        self.api_key = api_key

    def _get(
        self, endpoint: str, params: list[tuple[str, str]], *, changes_state: bool = False
    ) -> dict[str, object]:
        query = urlencode([("api", self.api_key), *params])
        response = self.http.send("GET", f"/v1/{endpoint}?{query}", changes_state=changes_state)
        if response.status_code in (401, 403):
            raise SupplierUnavailableError(f"{endpoint}: the API key was refused")
        body = json_body(response)
        if response.status_code >= 400 and not changes_state:
            raise SupplierUnavailableError(f"{endpoint}: HTTP {response.status_code} {body}")
        return body

    def offers(self, *, game: int, names: list[str]) -> dict[str, list[SupplierOffer]]:
        body = self._get(
            "search-items-by-name", [("game", GAMES[game]), *(("names", n) for n in names)]
        )
        _success_check("search-items-by-name", body)
        found: dict[str, list[SupplierOffer]] = {name: [] for name in names}
        items = body.get("items")
        for item in items if isinstance(items, list) else []:
            name = str(item.get("name", ""))
            if name not in found or not item.get("item_id") or int(item.get("price") or 0) <= 0:
                continue
            wear = item.get("float")
            found[name].append(
                SupplierOffer(
                    ref=str(item["item_id"]),
                    market_hash_name=name,
                    price=UNIT.usd(item["price"]),
                    phase=str(item.get("phase") or ""),
                    paint_index=item.get("paint_index"),
                    wear=Decimal(str(wear)) if wear is not None else None,
                )
            )
        return found

    def buy(self, request: BuyRequest) -> str:
        partner, token = trade_url_parts(request.trade_url)
        try:
            body = self._get(
                "buy-one-p2p",
                [
                    ("item_id", request.offer_ref),
                    ("price", str(UNIT.units(request.price))),
                    ("partner", partner),
                    ("token", token),
                    ("project_id", request.reference),
                    ("game", GAMES[request.game]),
                ],
                changes_state=True,
            )
        except SupplierUnavailableError as exc:
            if "not JSON" in str(exc):  # an answer we cannot read after sending
                raise SupplierOutcomeUnknownError(str(exc)) from exc
            raise
        if body.get("success") is True:
            return str(body.get("id", ""))
        message = str(body.get("msg", "refused"))
        words = message.lower()
        if any(word in words for word in PAUSED_WORDS):
            raise SupplierUnavailableError(f"buy-one-p2p: {message}")
        if any(word in words for word in GONE_WORDS):
            raise SupplierRefusedError("LISTING_UNAVAILABLE", message)
        if any(word in words for word in PRICE_WORDS):
            price = body.get("price")
            raise SupplierRefusedError(
                "PRICE_CHANGED", message, UNIT.usd(str(price)) if price is not None else None
            )
        raise SupplierRefusedError("SUPPLIER_REFUSED", message)

    def trades(self, orders: list[OrderRef], *, game: int) -> dict[str, SupplierTrade]:
        if not orders:
            return {}
        body = self._get("check-many-project-id", [("id", order.reference) for order in orders])
        _success_check("check-many-project-id", body)
        wanted = {order.reference for order in orders}
        found: dict[str, SupplierTrade] = {}
        trades = body.get("trades")
        for trade in trades if isinstance(trades, list) else []:
            reference = str(trade.get("project_id", ""))
            state = STATES.get(int(trade.get("status", -1)))
            if reference in wanted and state is not None:
                found[reference] = SupplierTrade(
                    reference=reference,
                    state=state,
                    supplier_order_id=str(trade.get("id", "")),
                    reason=str(trade.get("reason") or ""),
                    offer_id=steam_offer_id(trade.get("trade_id")),
                )
        return found

    def balance(self) -> Decimal:
        body = self._get("user", [])
        _success_check("user", body)
        user = body.get("user")
        if not isinstance(user, dict) or "wallet" not in user:
            raise SupplierUnavailableError("user: no wallet in the answer")
        return UNIT.usd(user["wallet"])


def steam_offer_id(trade_id: object) -> str:
    """Waxpeer's ``trade_id``: the Steam trade offer the seller sent (a string in
    ``check-many-project-id``'s example, a number in ``history``'s, null before it is sent);
    anything but digits is no offer id."""
    text = (
        str(trade_id) if isinstance(trade_id, int | str) and not isinstance(trade_id, bool) else ""
    )
    return text if text.isdigit() else ""


def _success_check(endpoint: str, body: dict[str, object]) -> None:
    """``success: false`` on a read: "something went wrong ... you need to retry"."""
    if body.get("success") is not True:
        raise SupplierUnavailableError(f"{endpoint}: {body.get('msg') or 'success is false'}")


def socket_change(event: str, payload: object) -> ListingChange | None:
    """A listing feed event as a change of one listing; None for anything else (another
    event, a game we do not trade, a payload without an id, name or price)."""
    if event not in SOCKET_EVENTS or not isinstance(payload, dict):
        return None
    game = SOCKET_GAMES.get(str(payload.get("game", "")))
    ref, name = str(payload.get("item_id") or ""), str(payload.get("name") or "")
    gone = SOCKET_EVENTS[event]
    try:
        price = UNIT.usd(payload.get("price") or 0)
    except (TypeError, ValueError):
        return None
    if game is None or not ref.isdigit() or not name or (price <= 0 and not gone):
        return None
    wear = payload.get("float")
    paint_index = payload.get("paint_index")
    return ListingChange(
        game=game,
        offer=SupplierOffer(
            ref=ref,
            market_hash_name=name,
            price=price,
            phase=str(payload.get("phase") or ""),
            paint_index=paint_index if isinstance(paint_index, int) else None,
            wear=Decimal(str(wear)) if isinstance(wear, int | float) else None,
        ),
        gone=gone,
    )
