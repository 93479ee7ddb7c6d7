"""The supplier marketplace when none is configured (``MARKETPLACE`` unset outside the
sandbox): every call raises MarketplaceUnavailableError, so the API answers 503
``SERVICE_UNAVAILABLE`` instead of pretending; ``manage.py check`` warns about it."""

from decimal import Decimal

from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketplaceUnavailableError,
    MarketQuery,
    PriceFloors,
    PurchaseResult,
)


class UnconfiguredMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        raise MarketplaceUnavailableError

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        raise MarketplaceUnavailableError

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        raise MarketplaceUnavailableError

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        raise MarketplaceUnavailableError

    def listing_id_valid(self, *, game: int, listing_id: str) -> bool:
        raise MarketplaceUnavailableError

    def listings_lookup(self, listing_ids: list[str]) -> dict[str, Listing | None]:
        raise MarketplaceUnavailableError

    def purchase(
        self,
        *,
        listing_id: str,
        max_price: Decimal,
        key: str,
        amount: int = 1,
        trade_url: str = "",
    ) -> PurchaseResult:
        raise MarketplaceUnavailableError

    def purchase_get(self, *, key: str) -> PurchaseResult | None:
        raise MarketplaceUnavailableError

    def cheapest(
        self, *, catalog_id: str, phase: str, delivery: str, ceiling: Decimal, limit: int
    ) -> list[Listing]:
        raise MarketplaceUnavailableError

    def cancel(self, *, ref: str) -> bool:
        raise MarketplaceUnavailableError
