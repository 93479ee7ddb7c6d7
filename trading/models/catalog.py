from decimal import Decimal

from django.db import models


class CatalogItem(models.Model):
    """An item kind of a game, with its reference price (the market quote deposits price from)."""

    id = models.CharField(primary_key=True, max_length=64)
    game = models.PositiveIntegerField()
    market_hash_name = models.CharField(max_length=200)
    name = models.CharField(max_length=200)
    item_type = models.CharField(max_length=64)
    rarity = models.CharField(max_length=64)
    rarity_color = models.CharField(max_length=6)
    exterior = models.CharField(max_length=32, blank=True)
    icon_url = models.URLField(max_length=300)
    reference_price = models.DecimalField(max_digits=12, decimal_places=2)
    is_phased = models.BooleanField(default=False)
    stackable = models.BooleanField(default=False)
    stock_limit = models.PositiveIntegerField(
        default=50, help_text="Own stock above which deposits of this item are refused."
    )
    popularity = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "market_hash_name"], name="catalog_name"),
            models.CheckConstraint(
                condition=models.Q(reference_price__gte=0), name="catalog_reference_price"
            ),
        ]
        indexes = [models.Index(fields=["game", "-popularity"])]

    def __str__(self) -> str:
        return self.market_hash_name


class CatalogPhase(models.Model):
    """The reference price of one phase of a phased (Doppler) item."""

    item = models.ForeignKey(CatalogItem, on_delete=models.CASCADE, related_name="phase_prices")
    phase = models.CharField(max_length=16)
    paint_index = models.PositiveIntegerField()
    reference_price = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal(0))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "phase"], name="catalog_phase")]

    def __str__(self) -> str:
        return f"{self.item_id} {self.phase}"
