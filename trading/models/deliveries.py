"""Withdrawal items one of the service's bots hands to the recipient: items of its own stock,
and items a supplier delivers to the bot (DMarket). One row per item, written in the
transaction that records the item's purchase; a beat sweep moves ``next_attempt_at`` on with
compare-and-set updates until the item is offered (docs/steam.md, "Deliveries")."""

from django.db import models
from django.db.models import Q


class BotDelivery(models.Model):
    class State(models.TextChoices):
        WAITING = "waiting"  # to be offered when due (held by the bot, or on its way to it)
        OFFERED = "offered"  # in a live offer: the platform's offer changes move the item on
        ENDED = "ended"  # the item left ``pending`` otherwise (refused, cancelled, failed)

    item = models.OneToOneField(
        "trading.TradeItem", on_delete=models.CASCADE, related_name="bot_delivery"
    )
    trade = models.ForeignKey(
        "trading.Trade", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    bot_platform_id = models.CharField(max_length=32)
    game = models.PositiveIntegerField()
    # The item in the bot's inventory: known for own stock; found by name (and float) once a
    # supplier's delivery has arrived.
    asset_id = models.CharField(max_length=32, blank=True)
    market_hash_name = models.CharField(max_length=200)
    wear = models.DecimalField(max_digits=12, decimal_places=10, null=True, blank=True)
    amount = models.PositiveIntegerField(default=1)
    # The key of the one offer that carries this item, fixed at the first attempt (the items of
    # a trade ready together share it); never changed, so an item is never in two offers.
    offer_key = models.CharField(max_length=120, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The sweep's range: only deliveries still waiting.
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(state="waiting"),
                name="bot_delivery_due",
            ),
            # What a bot expects to receive (supplier deliveries not found yet).
            models.Index(
                fields=["bot_platform_id"],
                condition=Q(state="waiting", asset_id=""),
                name="bot_delivery_expected",
            ),
        ]
        constraints = [
            # One asset is handed over for one item at a time.
            models.UniqueConstraint(
                fields=["bot_platform_id", "asset_id"],
                condition=Q(state="waiting") & ~Q(asset_id=""),
                name="bot_delivery_asset_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_id} by {self.bot_platform_id} ({self.state})"
