from trading.models.catalog import CatalogItem, CatalogPhase
from trading.models.sandbox import SandboxBot, SandboxListing, SandboxPlatformUser
from trading.models.switches import GameSettings, ServiceSettings

__all__ = [
    "CatalogItem",
    "CatalogPhase",
    "GameSettings",
    "SandboxBot",
    "SandboxListing",
    "SandboxPlatformUser",
    "ServiceSettings",
]
