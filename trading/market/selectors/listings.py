"""Market reads that return data: the catalog item a market item read names, and the catalog
items a search box suggests."""

from django.db.models import Case, IntegerField, Value, When

from trading.models import CatalogItem

SUGGESTIONS_LIMIT = 20


def catalog_item_resolve(
    *, item_id: str | None, market_hash_name: str | None
) -> CatalogItem | None:
    """``itemId`` wins; ``marketHashName`` is an exact name."""
    if item_id:
        return CatalogItem.objects.filter(pk=item_id).first()
    if market_hash_name:
        return CatalogItem.objects.filter(market_hash_name=market_hash_name).first()
    return None


def market_suggestions(*, game: int, q: str) -> list[CatalogItem]:
    rank = Case(
        When(market_hash_name__iexact=q, then=Value(0)),
        When(market_hash_name__istartswith=q, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    return list(
        CatalogItem.objects.filter(game=game, market_hash_name__icontains=q)
        .annotate(rank=rank)
        .order_by("rank", "-popularity", "market_hash_name")[:SUGGESTIONS_LIMIT]
    )
