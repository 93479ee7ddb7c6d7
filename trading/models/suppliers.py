"""The supplier marketplaces (Waxpeer, DMarket) as the service knows them: each supplier's
switch, health and balance, its recent errors, the local snapshot of its listings that market
reads are served from, and every order placed with it under our own reference."""

from django.db import models
from django.db.models import Q


class Supplier(models.Model):
    """One supplier account. Staff switch it off (``enabled``): no new buys, its listings leave
    the market; orders already placed are still followed to their end."""

    name = models.CharField(primary_key=True, max_length=16)
    enabled = models.BooleanField(default=True)
    # The account's spendable balance at the supplier, in USD, as last read.
    balance = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    balance_checked_at = models.DateTimeField(null=True, blank=True)
    last_ok_at = models.DateTimeField(null=True, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # After a 429 or a maintenance answer: no calls before this time.
    paused_until = models.DateTimeField(null=True, blank=True)
    # Polling walks the catalog by name; the next poll starts after this name.
    poll_cursor = models.CharField(max_length=200, blank=True)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    # The supplier's listing socket (``manage.py supplier_socket``): since when it is up and
    # subscribed; null while it is down or not run (polling alone keeps the snapshot then).
    socket_connected_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class SupplierError(models.Model):
    """A failed call to a supplier, for staff (the newest few are kept per supplier)."""

    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, related_name="errors")
    at = models.DateTimeField()
    operation = models.CharField(max_length=40)
    message = models.CharField(max_length=500)

    class Meta:
        indexes = [models.Index(fields=["supplier", "-at"])]

    def __str__(self) -> str:
        return f"{self.supplier_id} {self.operation}: {self.message}"


class SupplierListing(models.Model):
    """A supplier's listing as last polled: what market reads, price floors and quick fills
    see. ``id`` carries the supplier (``waxpeer-<item id>``, ``dmarket-<offer id>``), so a
    listing can be bought by its id even after it left the snapshot. Columns and indexes are
    those ``trading.marketplace.listing_table`` searches by."""

    id = models.CharField(primary_key=True, max_length=80)
    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, db_index=False)
    # The supplier's own ids: the listing (Waxpeer item id, DMarket offer id) and the asset
    # (DMarket item id, which is what lands in our inventory once bought).
    supplier_ref = models.CharField(max_length=64)
    asset_ref = models.CharField(max_length=64, blank=True)
    item = models.ForeignKey(
        "trading.CatalogItem", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    game = models.PositiveIntegerField()
    market_hash_name = models.CharField(max_length=200)
    popularity = models.PositiveIntegerField(default=0)
    # What we pay per unit, rounded up to the cent (the market shows cents), and the supplier's
    # exact price (Waxpeer prices in thousandths of a USD), which a buy offers.
    price = models.DecimalField(max_digits=12, decimal_places=2)
    supplier_price = models.DecimalField(max_digits=14, decimal_places=3)
    delivery = models.CharField(max_length=8, default="standard")
    phase = models.CharField(max_length=16, blank=True)
    paint_index = models.PositiveIntegerField(null=True, blank=True)
    wear = models.DecimalField(max_digits=12, decimal_places=10, null=True, blank=True)
    paint_seed = models.PositiveIntegerField(null=True, blank=True)
    # Own stock (``instant``): the bot holding the item (``asset_ref`` is its asset id).
    bot_platform_id = models.CharField(max_length=32, blank=True)
    # How the supplier sells it, where it has kinds (DMarket ``dmarket``: held by its bots, ours
    # only once withdrawn; ``p2p``: traded by its seller); a buy names it.
    offer_type = models.CharField(max_length=8, blank=True)
    seen_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["game", "price", "id"], name="supplier_listing_price"),
            models.Index(
                fields=["game", "-popularity", "item", "price", "id"],
                name="supplier_listing_relevance",
            ),
            models.Index(
                fields=["game", "market_hash_name", "price", "id"], name="supplier_listing_name"
            ),
            models.Index(fields=["item", "price", "id"], name="supplier_listing_item"),
            # A poll replaces one supplier's listings of one item.
            models.Index(fields=["supplier", "item"], name="supplier_listing_polled"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(price__gt=0), name="supplier_listing_price_positive")
        ]

    def __str__(self) -> str:
        return self.id


class SupplierOrder(models.Model):
    """One attempt to buy one listing for one withdrawal unit (``key``: ``ti-<item>``), written
    before the supplier is asked, so an answer lost on the way (a timeout after sending) leaves
    a row to reconcile by ``reference`` (our id at the supplier: Waxpeer's ``project_id``)
    before anything is retried or refunded. A key has at most one attempt that is not refused.

    States: ``sending`` (asked, no answer yet), ``unknown`` (the answer was lost), ``refused``
    (the supplier said no: nothing bought), ``bought`` (the supplier took it; delivery
    follows), ``sent`` (the trade offer is on its way to the recipient, or to our bot),
    ``at_bot`` (in one of our bots' inventories: the bot hands it on, ``BotDelivery``),
    ``delivered`` (accepted), ``canceled`` (the supplier cancelled or delivery failed: the
    supplier refunds us, we refund the merchant)."""

    class State(models.TextChoices):
        SENDING = "sending"
        UNKNOWN = "unknown"
        REFUSED = "refused"
        BOUGHT = "bought"
        SENT = "sent"
        AT_BOT = "at_bot"
        DELIVERED = "delivered"
        CANCELED = "canceled"

    LIVE = (
        State.SENDING,
        State.UNKNOWN,
        State.BOUGHT,
        State.SENT,
        State.AT_BOT,
        State.DELIVERED,
    )
    # The supplier still has something to tell about these (delivery, or the lost answer).
    FOLLOWED = (State.SENDING, State.UNKNOWN, State.BOUGHT, State.SENT)

    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="orders")
    key = models.CharField(max_length=64)
    reference = models.CharField(max_length=50, unique=True)
    listing_id = models.CharField(max_length=80)
    # The listing as it was bought (catalog id, price, wear...): the unit's details.
    listing = models.JSONField()
    price = models.DecimalField(max_digits=12, decimal_places=2)
    trade_url = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=10, choices=State.choices)
    reason = models.CharField(max_length=200, blank=True)
    # The supplier's id of the purchase (Waxpeer's own ``id``, not the Steam offer's
    # ``trade_id``; DMarket's ``orderId``).
    supplier_order_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    next_check_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key"],
                condition=~Q(state="refused"),
                name="supplier_order_one_live_per_key",
            )
        ]
        indexes = [
            models.Index(fields=["key"], name="supplier_order_key"),
            # The status sweep's range: only orders the supplier has more to tell about.
            models.Index(
                fields=["next_check_at"],
                condition=Q(state__in=["sending", "unknown", "bought", "sent"]),
                name="supplier_order_followed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference} ({self.state})"


class SupplierWithdraw(models.Model):
    """A request to move an item bought into our account at the supplier (DMarket's own
    inventory) to our bot's Steam inventory. Written, with its ``request_id``, in the
    transaction that learnt the item may be withdrawn, and before the supplier is asked; the
    sweep sends it and, when its answer was lost, asks the supplier's inventory where the item
    is before asking again under the same ``request_id``, so the item is withdrawn once.

    States: ``due`` (to send at ``next_attempt_at``), ``sending`` (claimed by an attempt until
    ``next_attempt_at``), ``sent`` (the supplier took it: ``transfer_id``), ``unknown`` (the
    answer was lost: the inventory tells), ``refused`` (the supplier said no; asked again
    later while the item is still held for us)."""

    class State(models.TextChoices):
        DUE = "due"
        SENDING = "sending"
        SENT = "sent"
        UNKNOWN = "unknown"
        REFUSED = "refused"

    order = models.OneToOneField(SupplierOrder, on_delete=models.CASCADE, related_name="withdraw")
    request_id = models.CharField(max_length=64, unique=True)
    asset_ref = models.CharField(max_length=64)
    class_ref = models.CharField(max_length=64)
    game = models.PositiveIntegerField()
    state = models.CharField(max_length=8, choices=State.choices, default=State.DUE)
    attempts = models.PositiveIntegerField(default=0)
    transfer_id = models.CharField(max_length=64, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The sweep's range: requests still to send (or whose attempt died).
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(state__in=["due", "sending"]),
                name="supplier_withdraw_due",
            )
        ]

    def __str__(self) -> str:
        return f"{self.request_id} ({self.state})"
