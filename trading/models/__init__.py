from trading.models.bots import SteamBot, SteamOffer
from trading.models.catalog import CatalogItem, CatalogPhase
from trading.models.deliveries import BotDelivery
from trading.models.suppliers import (
    Supplier,
    SupplierError,
    SupplierListing,
    SupplierOrder,
    SupplierWithdraw,
)
from trading.models.switches import GameSettings
from trading.models.trades import (
    IN_FLIGHT,
    TERMINAL_PRECEDENCE,
    Status,
    Trade,
    TradeEvent,
    TradeItem,
)

__all__ = [
    "IN_FLIGHT",
    "TERMINAL_PRECEDENCE",
    "BotDelivery",
    "CatalogItem",
    "CatalogPhase",
    "GameSettings",
    "Status",
    "SteamBot",
    "SteamOffer",
    "Supplier",
    "SupplierError",
    "SupplierListing",
    "SupplierOrder",
    "SupplierWithdraw",
    "Trade",
    "TradeEvent",
    "TradeItem",
]
