"""Trades and their items. Items carry the state; a trade's status is derived from its items
(decisions section 4) and stored for querying."""

import uuid
from decimal import Decimal

from django.db import models
from django.db.models import Q

from core.db import ChangesSaved


class Status(models.TextChoices):
    INITIATED = "initiated"
    PENDING = "pending"
    ACTIVE = "active"
    HOLD = "hold"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    DECLINED = "declined"
    REVERTED = "reverted"


IN_FLIGHT = (Status.INITIATED, Status.PENDING, Status.ACTIVE, Status.HOLD)
# When every item is terminal, the trade shows the first of these that any item has.
TERMINAL_PRECEDENCE = (
    Status.COMPLETED,
    Status.REVERTED,
    Status.DECLINED,
    Status.CANCELED,
    Status.FAILED,
)


class Trade(ChangesSaved, models.Model):
    class Type(models.TextChoices):
        DEPOSIT = "deposit"
        WITHDRAW = "withdraw"

    class Source(models.TextChoices):
        CLIENT = "client"
        SELF = "self"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="trades"
    )
    client = models.ForeignKey(
        "merchants.Client", null=True, blank=True, on_delete=models.PROTECT, related_name="trades"
    )
    type = models.CharField(max_length=8, choices=Type.choices)
    source = models.CharField(max_length=8, choices=Source.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.INITIATED)
    game = models.PositiveIntegerField()
    is_quick = models.BooleanField(default=False)
    external_id = models.CharField(max_length=128, blank=True)
    client_platform_id = models.CharField(max_length=17)
    client_trade_url = models.CharField(max_length=200)
    external_client_user_id = models.CharField(max_length=128, blank=True)
    total_price = models.DecimalField(max_digits=14, decimal_places=2)
    pre_credit = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal(0))
    pending_credit = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal(0))
    is_instant = models.BooleanField(default=False)
    collateral_merchant = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal(0))
    collateral_provider = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal(0))
    error = models.CharField(max_length=40, blank=True)
    reverted_by = models.CharField(max_length=8, blank=True)
    offer_id = models.CharField(max_length=32, blank=True)
    # Deposits: the platform's offer from its creation on; shown as offerID once it is sent.
    offer_ref = models.CharField(max_length=32, blank=True)
    offer_expires_at = models.DateTimeField(null=True, blank=True)
    bot_info = models.JSONField(null=True, blank=True)
    active_at = models.DateTimeField(null=True, blank=True)
    hold_end_date = models.DateTimeField(null=True, blank=True)
    auto_cancel_at = models.DateTimeField(null=True, blank=True)
    # Quick withdrawals: what to buy and the per-unit ceilings.
    quick_catalog_id = models.CharField(max_length=64, blank=True)
    quick_phase = models.CharField(max_length=16, blank=True)
    quick_delivery = models.CharField(max_length=8, blank=True)
    quick_gross_ceiling = models.DecimalField(max_digits=14, decimal_places=2, null=True)
    quick_sourcing_ceiling = models.DecimalField(max_digits=14, decimal_places=2, null=True)
    # The next webhook's sequence number for this trade.
    next_sequence = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "external_id"],
                condition=~Q(external_id=""),
                name="trade_external_id_per_merchant",
            ),
            models.CheckConstraint(
                condition=Q(total_price__gte=0), name="trade_total_not_negative"
            ),
        ]
        indexes = [
            # Only trades still in flight: a finished trade keeps its autoCancelAt to show,
            # and must not stay in the sweep's range for ever.
            models.Index(
                fields=["auto_cancel_at"],
                condition=Q(auto_cancel_at__isnull=False, status__in=IN_FLIGHT),
                name="trade_auto_cancel_live",
            ),
            models.Index(
                fields=["updated_at"],
                condition=Q(type="deposit", status__in=("initiated", "pending")),
                name="trade_deposit_offer_waiting",
            ),
            models.Index(
                fields=["offer_expires_at"],
                condition=Q(offer_expires_at__isnull=False),
                name="trade_offer_expiry_due",
            ),
            # The trades in flight per type and status, counted at every metrics scrape, and
            # since their last move: the console's home counts those past their state's
            # expected time (an index-only range count per type and state).
            models.Index(
                fields=["type", "status", "updated_at"],
                condition=Q(status__in=IN_FLIGHT),
                name="trade_in_flight_since",
            ),
            # Trades in their hold by its end: the home counts those the hold sweep left.
            models.Index(
                fields=["type", "hold_end_date"],
                condition=Q(status=Status.HOLD),
                name="trade_hold_end",
            ),
            # Every merchant's trades, newest first: the console's list of trades.
            models.Index(fields=["-created_at", "-id"], name="trade_newest"),
            # Keyset pages of a merchant's trades, newest first.
            models.Index(fields=["merchant", "source", "game", "-created_at", "-id"]),
            models.Index(fields=["merchant", "client_platform_id", "-created_at", "-id"]),
        ]
        # Staff actions on a trade (docs/admin.md); each also needs the console's login.
        permissions = [
            ("retry_purchase", "Can retry a withdrawal's purchase"),
            ("cancel_trade", "Can cancel a trade, refunding what was not delivered"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.id} ({self.status})"


class TradeItem(ChangesSaved, models.Model):
    trade = models.ForeignKey(Trade, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    # The id the merchant knows the item by: listing id, inventory item id, or (a quick row not yet
    # bound to a listing) the catalog id.
    public_id = models.CharField(max_length=256)
    external_id = models.CharField(max_length=128, blank=True)
    listing_id = models.CharField(max_length=80, blank=True)
    catalog_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.INITIATED)
    error = models.CharField(max_length=40, blank=True)
    appid = models.PositiveIntegerField()
    amount = models.PositiveIntegerField(default=1)
    # Deposits: the platform account the asset comes from, and which unit of it this item takes
    # (0 unless the asset is a stack). A unit sits in at most one live deposit (in flight, its
    # hold included) of any merchant; the database refuses a second. Blank on withdrawals.
    asset_owner = models.CharField(max_length=17, blank=True)
    asset_unit = models.PositiveIntegerField(default=0)
    tradable = models.BooleanField(default=True)
    price = models.DecimalField(max_digits=14, decimal_places=2, help_text="offer.price (USD)")
    locked = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal(0), help_text="still locked for it"
    )
    sourcing_price = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    delivery = models.CharField(max_length=8, blank=True)
    phase = models.CharField(max_length=16, blank=True)
    details = models.JSONField(
        default=dict, blank=True, help_text="name, marketHashName, type, iconUrl once resolved"
    )
    purchase_ref = models.CharField(max_length=80, blank=True)
    offer_id = models.CharField(max_length=32, blank=True)
    active_at = models.DateTimeField(null=True, blank=True)
    hold_end_date = models.DateTimeField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["trade", "position"], name="trade_item_position"),
            models.CheckConstraint(condition=Q(locked__gte=0), name="trade_item_locked"),
            models.UniqueConstraint(
                fields=["asset_owner", "public_id", "asset_unit"],
                condition=Q(status__in=IN_FLIGHT) & ~Q(asset_owner=""),
                name="deposit_asset_unit_live",
            ),
        ]
        indexes = [
            models.Index(
                fields=["status", "hold_end_date"],
                condition=Q(status="hold"),
                name="trade_item_hold_due",
            ),
            models.Index(
                fields=["status", "updated_at"],
                condition=Q(status__in=["pending", "active"]),
                name="trade_item_in_flight",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.status})"


class TradeEvent(models.Model):
    """What happened to a trade, who or what did it, and when: the audit trail."""

    trade = models.ForeignKey(Trade, on_delete=models.CASCADE, related_name="events")
    item = models.ForeignKey(TradeItem, null=True, blank=True, on_delete=models.CASCADE)
    kind = models.CharField(max_length=40)
    from_status = models.CharField(max_length=12, blank=True)
    to_status = models.CharField(max_length=12, blank=True)
    actor = models.CharField(max_length=100, help_text="system, merchant, sandbox, staff:<user>")
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # What the retention purge walks (trading.services.retention): the moves into and
            # out of a hold are kept for ever, so they are not in it.
            models.Index(
                fields=["created_at"],
                condition=~Q(to_status="hold") & ~Q(from_status="hold"),
                name="trade_event_purgeable",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_status}->{self.to_status}"
