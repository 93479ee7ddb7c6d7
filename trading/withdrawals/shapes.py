"""What the cancel endpoints of a withdrawal answer (contract 4.7); the withdrawal itself is a
trade (``trading.trades.shapes.TradeOut``)."""

from typing import Literal, NotRequired, TypedDict

from core.shapes import Uuid


class CancelResultRow(TypedDict):
    itemId: str
    externalId: NotRequired[str]
    status: Literal["cancelled", "failed"]
    reason: NotRequired[str]


class CancelResult(TypedDict):
    tradeId: Uuid
    requested: int
    cancelled: int
    failed: int
    items: list[CancelResultRow]


class ItemCancelResult(TypedDict):
    tradeId: Uuid
    itemId: str
    externalId: NotRequired[str]
    status: Literal["cancelled"]
