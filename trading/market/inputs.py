"""Query parsing of the price book, market search, market item and suggestion endpoints: the
market queries hand the view the read's input (``trading.market.rendered.pages``)."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from core.api.serializers import (
    AnyOfRequired,
    QueryDecimalField,
    QueryIntegerField,
    RuledSerializer,
    StrictCharField,
)
from trading.games import PHASES
from trading.market.rendered.pages import ItemSearch, MarketSearch
from trading.marketplace.base import MarketSort
from trading.trades.inputs import game_query_field, page_field, usd_field


class PricesQuery(serializers.Serializer):
    game = QueryIntegerField(
        min_value=1,
        max_value=2**31 - 1,
        default=730,
        help_text="a positive game id; one the service does not trade has an empty price book",
    )


def _float_field() -> QueryDecimalField:
    """A bound of an item's float (wear): 0 to 1."""
    return QueryDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )


# A low bound above the high one (minPrice > maxPrice, floatMin > floatMax) is an empty range:
# an empty page, not a refusal (the document cannot compare two parameters).
class MarketQueryIn(serializers.Serializer):
    game = game_query_field()
    search = StrictCharField(
        max_length=100,
        required=False,
        default="",
        allow_blank=True,
        help_text="case-insensitive substring",
    )
    sort = serializers.ChoiceField(
        choices=[s.value for s in MarketSort], default=MarketSort.RELEVANCE.value
    )
    minPrice = usd_field("fee-inclusive USD")
    maxPrice = usd_field("fee-inclusive USD")
    page = page_field()
    perPage = QueryIntegerField(min_value=1, max_value=1000, default=50)

    def run_validation(self, data: Any = empty) -> MarketSearch:
        query = super().run_validation(data)
        return MarketSearch(
            game=int(query["game"]),
            search=query["search"],
            sort=MarketSort(query["sort"]),
            min_price=query.get("minPrice"),
            max_price=query.get("maxPrice"),
            page=query["page"],
            per_page=query["perPage"],
        )


class MarketItemQueryIn(RuledSerializer):
    itemId = StrictCharField(
        min_length=5,
        max_length=256,
        required=False,
        help_text="catalog item id; wins over marketHashName (one of the two is required)",
    )
    marketHashName = StrictCharField(max_length=200, required=False, help_text="exact name")
    delivery = serializers.ChoiceField(choices=["any", "standard", "instant"], default="any")
    phase = serializers.ChoiceField(choices=list(PHASES), required=False)
    floatMin = _float_field()
    floatMax = _float_field()
    page = page_field()
    perPage = QueryIntegerField(min_value=1, max_value=100, default=50)

    rules = (AnyOfRequired(("itemId", "marketHashName")),)

    def run_validation(self, data: Any = empty) -> ItemSearch:
        query = super().run_validation(data)
        return ItemSearch(
            item_id=query.get("itemId"),
            market_hash_name=query.get("marketHashName"),
            delivery=query["delivery"],
            phase=query.get("phase", ""),
            float_min=query.get("floatMin"),
            float_max=query.get("floatMax"),
            page=query["page"],
            per_page=query["perPage"],
        )


class SuggestionsQueryIn(serializers.Serializer):
    q = StrictCharField(min_length=1, max_length=100)
    game = game_query_field()
