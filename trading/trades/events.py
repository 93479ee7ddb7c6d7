"""What a trade's state change returns: one frozen record per kind of change, with what a
channel that tells of it needs (``trading.trades.channels`` hears them). The trade core decides
and stores; it no longer renders, publishes or counts."""

from dataclasses import dataclass, field
from typing import Any

from trading.models import Trade, TradeItem


@dataclass(frozen=True)
class TradeCreated:
    """A new trade stored with its first ``sequence``; ``asks_approval``: the event is the
    merchant's approval callback (a withdrawal's ``trade.initiated``)."""

    trade: Trade
    items: list[TradeItem]
    sequence: int
    asks_approval: bool = False


@dataclass(frozen=True)
class TradeChanged:
    """Items of a stored trade moved or were edited (``kind``, by ``actor``, ``detail`` as the
    audit trail records it); ``before``: the trade's status until then."""

    trade: Trade
    items: list[TradeItem]
    sequence: int
    before: str
    kind: str
    actor: str
    detail: dict[str, Any] = field(default_factory=dict)


TradeFact = TradeCreated | TradeChanged
