"""What trade history answers: a page of trades, or one trade or several by their refs."""

from typing import TypedDict

from typing_extensions import TypeAliasType

from trading.trades.shapes import TradeOut


class TradePageOut(TypedDict):
    items: list[TradeOut]
    nextCursor: str | None


# One ref answers a trade; a comma-separated list answers the array of those resolved.
TradeOrTrades = TypeAliasType("TradeOrTrades", TradeOut | list[TradeOut])
