"""DMarket: every request signed with the account's Ed25519 key.

Sources (public), each fact with its source in docs/suppliers.md ("What each adapter relies
on"): DMarket's trading API reference (docs.dmarket.com, OpenAPI "DMarket trading API" v2.0.0,
mirrored in api-evangelist/dmarket ``openapi/_original/dmarket-trading-openapi.yml``), DMarket's
own signing examples (github.com/dmarket/dm-trading-tools), dmarket-client (PyPI, generated from
DMarket's OpenAPI), and public clients that call the v1 inventory and ``withdraw-assets``.

- Headers: ``X-Api-Key`` (the public key, hex), ``X-Sign-Date`` (Unix seconds, which must be
  within 2 minutes of the server's clock), ``X-Request-Sign``: ``dmar ed25519 `` + the hex
  signature of ``method + path (with its query) + body + X-Sign-Date``; the secret key is hex
  (its first 32 bytes are the Ed25519 seed).
- A request whose date is off is refused (401); we then take the server's ``Date`` header as
  the clock, remember the difference, and sign once more.
- ``GET /exchange/v1/market/items?gameId=a8db&title=...&limit=100&orderBy=price&orderDir=asc
  &currency=USD``: ``objects[]`` of ``{itemId, title, classId, inMarket, price: {USD:
  "<cents>"}, extra: {offerId, floatValue, paintSeed, phase?}}`` (``title`` matches by prefix,
  so names are compared). ``inMarket``: the item is held by DMarket's bots, an offer of type
  ``dmarket``; otherwise a ``p2p`` offer its seller trades from their own Steam inventory. An
  object without it is not listed (we could neither buy it nor know how it reaches us).
- ``PATCH /exchange/v1/offers-buy`` ``{offers: [{offerId, price: {amount: "<cents>",
  currency: "USD"}, type: "dmarket" | "p2p"}]}``: ``{orderId, status: TxPending|TxSuccess|
  TxFailed, txId, dmOffersFailReason?: {code}}``; the price must match the listed one. It has
  no idempotency key: a lost answer is reconciled from our inventory before anything else.
- Errors: ``{code, message}`` (``NotEnoughBalance``, ``InsufficientFunds``, ...).
- ``GET /marketplace-api/v1/user-inventory?GameID=a8db&Limit=&Offset=``: ``{Items: [{AssetID,
  ClassID, Title, Location, Withdrawable}], Total}``; ``Location`` is ``AssetLocationInMarket``
  (held for us at DMarket), ``AssetLocationInTransfer`` (a trade offer is on its way to our
  Steam account), ``AssetLocationInGame`` (in it). A bought item (its ``itemId``) shows up here.
  DMarket's current reference lists ``GET /marketplace-api/v2/user/inventory`` instead, which
  has no ``Location``: docs/suppliers.md says why this one is read.
- ``POST /exchange/v1/withdraw-assets`` ``{assets: [{id: AssetID, gameId, classId: ClassID}],
  requestId}``: ``{transferId}``: an item held for us is traded to our linked Steam account.
  The ``requestId`` is ours and not promised to be idempotent
  (``trading.services.supplier_withdraws`` never sends one again blind).
- ``GET /account/v1/balance``: ``{usd: "<cents>", usdAvailableToWithdraw, dmc}``.

DMarket delivers to the Steam account linked to our DMarket account (``DMARKET_BOT_STEAM_ID``,
one of our bots), not to the recipient's trade URL: a ``dmarket`` item once we withdraw it, a
``p2p`` item by its seller's trade; ``AssetLocationInTransfer`` is the item on its way to our
bot, ``AssetLocationInGame`` the item in it; the bot then offers it to the recipient
(``trading.withdrawals.services.deliveries``, docs/suppliers.md). DMarket reports no trade
offer to the recipient: the withdrawal's ``offerID`` is our bot's offer, as Steam numbers it.
"""

import email.utils
import json
import time
from decimal import Decimal
from urllib.parse import urlencode

from nacl.signing import SigningKey

from trading.games import CS_GAME, RUST_GAME
from trading.marketplace.suppliers.base import (
    BuyRequest,
    OrderRef,
    PriceUnit,
    SupplierOffer,
    SupplierOutcomeUnknownError,
    SupplierRefusedError,
    SupplierTrade,
    SupplierUnavailableError,
    TradeState,
    WithdrawRequest,
)
from trading.marketplace.suppliers.http import SupplierHttp, json_body

CENTS = PriceUnit("cents", Decimal(100))
SIGNATURE_PREFIX = "dmar ed25519 "
GAMES = {CS_GAME: "a8db", RUST_GAME: "rust"}
LOCATIONS = {
    "AssetLocationInMarket": TradeState.WAITING,
    "AssetLocationInTransfer": TradeState.SENT,
    "AssetLocationInGame": TradeState.DELIVERED,
}
BALANCE_CODES = ("NotEnoughBalance", "InsufficientFunds")
# Offer types (``offers-buy``'s ``type``): an item DMarket's bots hold (``inMarket``), ours at
# DMarket once bought and withdrawn on request; or one its seller trades from their Steam.
OWN_INVENTORY = "dmarket"
P2P = "p2p"
INVENTORY_PAGE = 100
INVENTORY_PAGES = 20
# A signing date further than this from the server's clock is corrected (DMarket allows 2 min).
SKEW_TOLERANCE_SECONDS = 30


class DMarketClient:
    name = "dmarket"
    names_per_call = 1  # market/items filters by one title
    games = tuple(GAMES)

    def __init__(
        self, *, http: SupplierHttp, public_key: str, secret_key: str, bot_steam_id: str
    ) -> None:
        self.http = http
        # The Steam account linked to our DMarket account (one of our bots): items bought here
        # arrive there, and the bot offers them to the recipient.
        self.delivers_to = bot_steam_id
        self.public_key = public_key
        self.signing_key = SigningKey(bytes.fromhex(secret_key)[:32]) if secret_key else None
        # Server clock minus ours, learnt from a refused signing date.
        self.clock_offset = 0

    def _headers(self, method: str, path_and_query: str, body: str) -> dict[str, str]:
        if self.signing_key is None:
            raise SupplierUnavailableError("DMARKET_SECRET_KEY is not set")
        timestamp = str(int(time.time()) + self.clock_offset)
        signature = self.signing_key.sign(
            (method + path_and_query + body + timestamp).encode()
        ).signature.hex()
        return {
            "X-Api-Key": self.public_key,
            "X-Sign-Date": timestamp,
            "X-Request-Sign": SIGNATURE_PREFIX + signature,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }

    def _call(
        self,
        method: str,
        path: str,
        params: list[tuple[str, str]] | None = None,
        payload: object = None,
        *,
        changes_state: bool = False,
    ) -> tuple[int, dict[str, object]]:
        path_and_query = f"{path}?{urlencode(params)}" if params else path
        body = json.dumps(payload, separators=(",", ":")) if payload is not None else ""
        for attempt in range(2):
            response = self.http.send(
                method,
                path_and_query,
                body=body.encode() or None,
                headers=self._headers(method, path_and_query, body),
                changes_state=changes_state,
            )
            if response.status_code == 401 and attempt == 0 and self._clock_corrected(response):
                continue  # the refused request did nothing: signing again is safe
            break
        if response.status_code in (401, 403):
            raise SupplierUnavailableError(f"{path}: the signature or key was refused")
        try:
            return response.status_code, json_body(response)
        except SupplierUnavailableError as exc:
            if changes_state and response.status_code < 300:
                raise SupplierOutcomeUnknownError(str(exc)) from exc
            raise

    def _clock_corrected(self, response: object) -> bool:
        """A refusal from a server whose clock is not ours: sign with the server's time."""
        date = getattr(response, "headers", {}).get("Date", "")
        if not date:
            return False
        server = int(email.utils.parsedate_to_datetime(date).timestamp())
        offset = server - int(time.time())
        if abs(offset - self.clock_offset) < SKEW_TOLERANCE_SECONDS:
            return False
        self.clock_offset = offset
        return True

    def offers(self, *, game: int, names: list[str]) -> dict[str, list[SupplierOffer]]:
        found: dict[str, list[SupplierOffer]] = {}
        for name in names:
            status, body = self._call(
                "GET",
                "/exchange/v1/market/items",
                [
                    ("gameId", GAMES[game]),
                    ("title", name),
                    ("limit", "100"),
                    ("orderBy", "price"),
                    ("orderDir", "asc"),
                    ("currency", "USD"),
                ],
            )
            if status >= 400:
                raise SupplierUnavailableError(f"market/items: HTTP {status} {body}")
            objects = body.get("objects")
            found[name] = [
                offer
                for item in (objects if isinstance(objects, list) else [])
                if (offer := _offer(item, name)) is not None
            ]
        return found

    def buy(self, request: BuyRequest) -> str:
        status, body = self._call(
            "PATCH",
            "/exchange/v1/offers-buy",
            payload={
                "offers": [
                    {
                        "offerId": request.offer_ref,
                        "price": {"amount": str(CENTS.units(request.price)), "currency": "USD"},
                        "type": request.offer_type,
                    }
                ]
            },
            changes_state=True,
        )
        if status < 300 and body.get("status") in ("TxSuccess", "TxPending"):
            return str(body.get("orderId", ""))
        reason = body.get("dmOffersFailReason")
        code = str(
            (reason.get("code") if isinstance(reason, dict) else None) or body.get("code") or ""
        )
        message = f"{code}: {body.get('message', body.get('status', ''))}"
        if code in BALANCE_CODES:
            raise SupplierRefusedError("SUPPLIER_REFUSED", message)
        if "price" in code.lower():
            raise SupplierRefusedError("PRICE_CHANGED", message)
        raise SupplierRefusedError("LISTING_UNAVAILABLE", message)

    def trades(self, orders: list[OrderRef], *, game: int) -> dict[str, SupplierTrade]:
        by_asset = {order.asset_ref: order for order in orders if order.asset_ref}
        found: dict[str, SupplierTrade] = {}
        for page in range(INVENTORY_PAGES):
            if len(found) == len(by_asset):
                break
            status, body = self._call(
                "GET",
                "/marketplace-api/v1/user-inventory",
                [
                    ("GameID", GAMES[game]),
                    ("Limit", str(INVENTORY_PAGE)),
                    ("Offset", str(page * INVENTORY_PAGE)),
                ],
            )
            if status >= 400:
                raise SupplierUnavailableError(f"user-inventory: HTTP {status} {body}")
            items = body.get("Items")
            rows = items if isinstance(items, list) else []
            for item in rows:
                order = by_asset.get(str(item.get("AssetID", "")))
                state = LOCATIONS.get(str(item.get("Location", "")))
                if order is not None and state is not None:
                    found[order.reference] = SupplierTrade(
                        reference=order.reference,
                        state=state,
                        supplier_order_id=order.supplier_order_id,
                        held=state is TradeState.WAITING,
                        withdrawable=item.get("Withdrawable") is True,
                        class_ref=str(item.get("ClassID") or ""),
                    )
            if len(rows) < INVENTORY_PAGE:
                break
        return found

    def withdraw(self, request: WithdrawRequest) -> str:
        status, body = self._call(
            "POST",
            "/exchange/v1/withdraw-assets",
            payload={
                "assets": [
                    {
                        "id": request.asset_ref,
                        "gameId": GAMES[request.game],
                        "classId": request.class_ref,
                    }
                ],
                "requestId": request.request_id,
            },
            changes_state=True,
        )
        transfer_id = body.get("transferId")
        if status < 300 and isinstance(transfer_id, str) and transfer_id:
            return transfer_id
        if status < 300:  # taken, but not the answer the reference shows: we cannot tell
            raise SupplierOutcomeUnknownError(f"withdraw-assets: no transferId in {body}")
        raise SupplierRefusedError(
            "SUPPLIER_REFUSED", f"withdraw-assets: HTTP {status} {body.get('code', '')}"
        )

    def balance(self) -> Decimal:
        status, body = self._call("GET", "/account/v1/balance")
        if status >= 400 or "usd" not in body:
            raise SupplierUnavailableError(f"balance: HTTP {status} {body}")
        return CENTS.usd(str(body["usd"]))


def _offer(item: dict[str, object], name: str) -> SupplierOffer | None:
    extra = item.get("extra") if isinstance(item.get("extra"), dict) else {}
    price = item.get("price")
    assert isinstance(extra, dict)
    if item.get("title") != name or not isinstance(price, dict) or not extra.get("offerId"):
        return None
    held_by_dmarket = item.get("inMarket")
    if not isinstance(held_by_dmarket, bool):
        return None  # neither kind: we could neither buy it nor know how it reaches us
    cents = int(str(price.get("USD", "0")))
    if cents <= 0:
        return None
    wear = extra.get("floatValue")
    seed = extra.get("paintSeed")
    return SupplierOffer(
        ref=str(extra["offerId"]),
        asset_ref=str(item.get("itemId", "")),
        market_hash_name=name,
        price=CENTS.usd(cents),
        phase=str(extra.get("phase") or ""),
        wear=Decimal(str(wear)) if wear is not None else None,
        paint_seed=int(str(seed)) if seed is not None else None,
        offer_type=OWN_INVENTORY if held_by_dmarket else P2P,
    )
