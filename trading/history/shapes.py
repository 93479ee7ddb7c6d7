"""What trade history answers: a page of trades, or one trade or several by their refs."""

from typing import TypedDict

from typing_extensions import TypeAliasType

from trading.history.selectors import TradePage
from trading.trades.shapes import TradeOut, trade_json


class TradePageOut(TypedDict):
    items: list[TradeOut]
    nextCursor: str | None


# One ref answers a trade; a comma-separated list answers the array of those resolved.
TradeOrTrades = TypeAliasType("TradeOrTrades", TradeOut | list[TradeOut])


def trade_page_json(page: TradePage) -> TradePageOut:
    return {
        "items": [trade_json(trade, items) for trade, items in page.trades],
        "nextCursor": page.next_cursor,
    }
