"""Inventories from the community endpoint ``/inventory/{steamid}/{appid}/{contextid}``.

As the open-source clients read it (DoctorMcKay/node-steamcommunity, components/users.js
``getUserInventoryContents``; bukson/steampy ``get_partner_inventory``):
- pages of at most 1,000 assets (``count``; since May 2025 Steam answers a larger ``count`` with
  HTTP 400 and a ``null`` body: node-steamcommunity issue 355, steampy issue 445), the next page
  from ``start_assetid`` = the previous page's ``last_assetid`` while ``more_items`` is 1;
- ``assets`` (assetid, classid, instanceid, amount) joined to ``descriptions`` by (classid,
  instanceid): tradable, marketable, market_hash_name, tags, descriptions (stickers, charms,
  "Tradable After" restrictions); ``asset_properties`` carry the paint seed (property 1) and the
  float (property 2) where Steam gives them;
- a private inventory or profile: HTTP 403 with a ``null`` body;
- CS2 items received in a trade sit in context 16 while trade protected (since July 2025:
  juliarose/steam-tradeoffer-manager issue 5): shown, never tradable here, since the sender can
  still reverse the trade that brought them.
"""

import html
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings

from trading.games import CS_GAME
from trading.platform.base import InventoryAsset, PlatformError
from trading.platform.steam.http import SteamRefusedError, steam_request

PAGE_SIZE = 1000
TRADABLE_CONTEXT = "2"
PROTECTED_CONTEXT = "16"
PAINT_SEED_PROPERTY = 1
WEAR_PROPERTY = 2
STICKER_IMAGE = re.compile(r'<img[^>]*src="([^"]*)"[^>]*title="Sticker: ([^"]+)"')
# At most this many pages (of 1,000) per inventory: a larger one is refused, not looped on.
MAX_PAGES = 50


class InventoryPrivateError(PlatformError):
    error_key = "INVENTORY_PRIVATE"


def _contexts(game: int) -> tuple[str, ...]:
    return (TRADABLE_CONTEXT, PROTECTED_CONTEXT) if game == CS_GAME else (TRADABLE_CONTEXT,)


def _url(steam_id: str, game: int, context: str) -> str:
    return f"{settings.STEAM_COMMUNITY_URL}/inventory/{steam_id}/{game}/{context}"


def inventory_pages(
    steam_id: str, game: int, context: str, *, count: int = PAGE_SIZE
) -> Iterator[dict[str, Any]]:
    """Each page's body. Raises InventoryPrivateError, PlatformError."""
    start = ""
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"l": "english", "count": count}
        if start:
            params["start_assetid"] = start
        try:
            body = steam_request("GET", _url(steam_id, game, context), params=params).body
        except SteamRefusedError as exc:
            if exc.status == 403:
                raise InventoryPrivateError(f"the inventory of {steam_id} is private") from exc
            raise
        if not isinstance(body, dict) or body.get("success") not in (1, True):
            raise PlatformError(f"Steam answered no inventory for {steam_id}/{game}/{context}")
        yield body
        if not body.get("more_items") or not body.get("last_assetid"):
            return
        start = str(body["last_assetid"])
    raise PlatformError(f"the inventory of {steam_id} has more than {MAX_PAGES} pages")


def inventory_total(steam_id: str, game: int) -> int:
    """How many items the inventory holds (one asset asked for, the count read)."""
    total = 0
    for context in _contexts(game):
        try:
            page = next(inventory_pages(steam_id, game, context, count=1))
        except (StopIteration, SteamRefusedError):
            continue
        total += int(page.get("total_inventory_count") or 0)
    return total


def inventory_fetch(steam_id: str, game: int) -> list[InventoryAsset]:
    assets: list[InventoryAsset] = []
    for context in _contexts(game):
        try:
            for page in inventory_pages(steam_id, game, context):
                assets.extend(_page_assets(page, game, protected=context == PROTECTED_CONTEXT))
        except SteamRefusedError:
            if context == PROTECTED_CONTEXT:
                continue  # not shown to others: the tradable context is the inventory
            raise
    return assets


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
