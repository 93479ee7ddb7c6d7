"""Inventories from the community endpoint ``/inventory/{steamid}/{appid}/{contextid}``.

As the open-source clients read it (DoctorMcKay/node-steamcommunity, components/users.js
``getUserInventoryContents``; bukson/steampy ``get_partner_inventory``; somespecialone/aiosteampy,
client/components/inventory.py):
- pages of at most 1,000 assets (``count``; since May 2025 Steam answers a larger ``count`` with
  HTTP 400 and a ``null`` body: node-steamcommunity issue 355, steampy issue 445), the next page
  from ``start_assetid`` = the previous page's ``last_assetid`` while ``more_items`` is 1;
- ``assets`` (assetid, classid, instanceid, amount) joined to ``descriptions`` by (classid,
  instanceid): tradable, marketable, market_hash_name, tags, descriptions (stickers, charms,
  "Tradable After" restrictions); ``asset_properties`` carry the paint seed (property 1) and the
  float (property 2) where Steam gives them;
- a private inventory or profile: HTTP 403 with a ``null`` body, to anyone but its logged-in
  owner (node-steamcommunity: the owner never gets it, so a 403 on one's own inventory is a
  session Steam did not take);
- CS2 items received in a trade sit in context 16 while trade protected (since July 2025:
  juliarose/steam-tradeoffer-manager issues 5 and 6, aiosteampy issue 95, steampy issue 453), a
  context only its logged-in owner may read: anyone else is refused as for a private inventory.
  Some CS2 items of context 2 are shown to their owner only too (recently bought or traded:
  Allyans3/steam-market-api-v2 issue 27), counted in ``total_inventory_count`` but left out of
  ``assets`` (node-steamcommunity commit 67774f8: a CS inventory "has no visible items").

So a user's inventory is read where Steam shows it to others: context 2, without cookies (what
a trade partner could be asked for; a 403 there is what Steam means by private). A bot's own
inventory is read as its owner, with its session, context 16 first: Steam reads the cookies of
a session it no longer takes as an anonymous visitor's, which context 2 would answer without a
word (its public view) but context 16 answers with 403, so the session is renewed before context
2 is read. Protected items are shown, never tradable here: the sender can still reverse the
trade that brought them.
"""

import html
import re
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings

from trading.games import CS_GAME
from trading.models import SteamBot
from trading.platform.base import InventoryAsset, PlatformError
from trading.platform.steam.client import BotClient
from trading.platform.steam.http import SteamRefusedError, steam_request

PAGE_SIZE = 1000
TRADABLE_CONTEXT = "2"
PROTECTED_CONTEXT = "16"
PAINT_SEED_PROPERTY = 1
WEAR_PROPERTY = 2
STICKER_IMAGE = re.compile(r'<img[^>]*src="([^"]*)"[^>]*title="Sticker: ([^"]+)"')
# At most this many pages (of 1,000) per inventory: a larger one is refused, not looped on.
MAX_PAGES = 50

# One page's body for a path and its query.
PageGet = Callable[[str, dict[str, Any]], Any]


class InventoryPrivateError(PlatformError):
    error_key = "INVENTORY_PRIVATE"


def _path(steam_id: str, game: int, context: str) -> str:
    return f"/inventory/{steam_id}/{game}/{context}"


def public_page(path: str, params: dict[str, Any]) -> Any:
    """A page as Steam shows it to others (no cookies). Raises InventoryPrivateError."""
    try:
        return steam_request("GET", f"{settings.STEAM_COMMUNITY_URL}{path}", params=params).body
    except SteamRefusedError as exc:
        if exc.status == 403:
            raise InventoryPrivateError(f"{path} is private") from exc
        raise


def _owner_page(client: BotClient) -> PageGet:
    def get(path: str, params: dict[str, Any]) -> Any:
        return client.community("GET", path, params=params, own=True).body

    return get


def inventory_pages(
    get: PageGet, steam_id: str, game: int, context: str, *, count: int = PAGE_SIZE
) -> Iterator[dict[str, Any]]:
    """Each page's body. Raises what ``get`` raises, and PlatformError."""
    start = ""
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"l": "english", "count": count}
        if start:
            params["start_assetid"] = start
        body = get(_path(steam_id, game, context), params)
        if not isinstance(body, dict) or body.get("success") not in (1, True):
            raise PlatformError(f"Steam answered no inventory for {steam_id}/{game}/{context}")
        yield body
        if not body.get("more_items") or not body.get("last_assetid"):
            return
        start = str(body["last_assetid"])
    raise PlatformError(f"the inventory of {steam_id} has more than {MAX_PAGES} pages")


def _own_contexts(game: int) -> tuple[str, ...]:
    """The protected context first: its 403 tells a session Steam no longer takes."""
    return (PROTECTED_CONTEXT, TRADABLE_CONTEXT) if game == CS_GAME else (TRADABLE_CONTEXT,)


def inventory_total(client: BotClient, game: int) -> int:
    """How many items the bot holds (one asset asked for per context, the count read)."""
    get = _owner_page(client)
    total = 0
    for context in _own_contexts(game):
        first = next(inventory_pages(get, client.bot.steam_id, game, context, count=1))
        total += int(first.get("total_inventory_count") or 0)
    return total


def inventory_fetch(steam_id: str, game: int) -> list[InventoryAsset]:
    """A bot's own inventory as the bot sees it; anyone else's as Steam shows it to others."""
    bot = SteamBot.objects.filter(steam_id=steam_id, enabled=True).first()
    if bot is None:
        return [
            asset
            for page in inventory_pages(public_page, steam_id, game, TRADABLE_CONTEXT)
            for asset in _page_assets(page, game, protected=False)
        ]
    get = _owner_page(BotClient(bot))
    held: dict[str, list[InventoryAsset]] = {}
    for context in _own_contexts(game):
        protected = context == PROTECTED_CONTEXT
        held[context] = [
            asset
            for page in inventory_pages(get, steam_id, game, context)
            for asset in _page_assets(page, game, protected=protected)
        ]
    return held[TRADABLE_CONTEXT] + held.get(PROTECTED_CONTEXT, [])


def _page_assets(page: dict[str, Any], game: int, *, protected: bool) -> Iterator[InventoryAsset]:
    described = {
        (str(d.get("classid")), str(d.get("instanceid", "0"))): d
        for d in page.get("descriptions") or []
    }
    properties = {
        str(entry.get("assetid")): {
            int(p.get("propertyid", 0)): p for p in entry.get("asset_properties") or []
        }
        for entry in page.get("asset_properties") or []
    }
    for raw in page.get("assets") or []:
        description = described.get((str(raw.get("classid")), str(raw.get("instanceid", "0"))))
        if description is None or not description.get("market_hash_name"):
            continue
        asset_id = str(raw["assetid"])
        props = properties.get(asset_id, {})
        yield InventoryAsset(
            asset_id=asset_id,
            game=game,
            market_hash_name=str(description["market_hash_name"]),
            amount=int(raw.get("amount") or 1),
            tradable=bool(description.get("tradable")) and not protected,
            wear=_wear(props.get(WEAR_PROPERTY)),
            paint_seed=_int(props.get(PAINT_SEED_PROPERTY)),
            stickers=_stickers(description),
        )


def _wear(prop: dict[str, Any] | None) -> Decimal | None:
    if prop is None or prop.get("float_value") is None:
        return None
    try:
        return Decimal(str(prop["float_value"]))
    except InvalidOperation:
        return None


def _int(prop: dict[str, Any] | None) -> int | None:
    value = None if prop is None else prop.get("int_value")
    return int(value) if value is not None and str(value).isdigit() else None


def _stickers(description: dict[str, Any]) -> list[dict[str, Any]]:
    """The stickers Steam lists in the ``sticker_info`` description, as images titled
    ``Sticker: <name>``."""
    for entry in description.get("descriptions") or []:
        if entry.get("name") != "sticker_info":
            continue
        found = STICKER_IMAGE.findall(str(entry.get("value", "")))
        return [
            {
                "name": f"Sticker | {html.unescape(name)}",
                "marketHashName": f"Sticker | {html.unescape(name)}",
                "slot": slot,
                "wear": 0.0,
                "iconUrl": src,
            }
            for slot, (src, name) in enumerate(found)
        ]
    return []
