"""What the marketplace side learns of its listings, told to the feed's market subscribers after
commit (docs/feed.md). Whatever reports listings that appear, change price or go calls these:
the sandbox marketplace today, a production adapter's listener tomorrow."""

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import cast

from core import clock
from core.feed import feed_publish_on_commit
from trading.market.rendered.pages import listings_render
from trading.market.shapes import (
    MarketPatchOut,
    MarketRemoveOut,
    MarketUpsertOut,
    market_patch_json,
    market_sync_json,
)
from trading.marketplace.base import Delivery, Listing
from trading.trades.shapes import Delivery as Source
from trading.trades.shapes import Game

NO_FEE = Decimal(0)


def market_listings_changed(
    *,
    appeared: Sequence[Listing] = (),
    repriced: Sequence[Listing] = (),
    gone: Sequence[Listing] = (),
) -> None:
    """``appeared`` listings are sent whole (``upsert``), ``repriced`` ones (a new price or fewer
    units) as a ``patch``, ``gone`` ones as a ``remove``. Items are rendered without a fee, with
    the sourcing price beside them: the feed prices them for each merchant."""
    now = clock.now()
    changed = [*appeared, *repriced]
    for position, (listing, item) in enumerate(
        zip(changed, listings_render(changed, fee_rate=NO_FEE), strict=True)
    ):
        game, source = _where(listing)
        body: MarketUpsertOut | MarketPatchOut
        if position < len(appeared):
            body = {"type": "upsert", "game": game, "source": source, "item": item, "at": now}
        else:
            body = {
                "type": "patch",
                "game": game,
                "source": source,
                "item": market_patch_json(item),
                "at": now,
            }
        feed_publish_on_commit(
            {"kind": "market", "game": listing.game, "sourcingPrice": str(listing.price)}, body
        )
    for listing in gone:
        game, source = _where(listing)
        removal: MarketRemoveOut = {
            "type": "remove",
            "game": game,
            "source": source,
            "itemId": listing.id,
        }
        feed_publish_on_commit({"kind": "market", "game": listing.game}, removal)


def market_resync(*, games: Iterable[int]) -> None:
    """Too much changed to tell listing by listing (a reseed): subscribers refetch."""
    for game in games:
        for source in Delivery:
            sync = market_sync_json(game=game, reason="feed", source=source.value)
            feed_publish_on_commit({"kind": "market", "game": game}, sync)


def _where(listing: Listing) -> tuple[Game, Source]:
    return _game(listing.game), Delivery(listing.delivery).value


def _game(game: int) -> Game:
    return cast(Game, str(game))
