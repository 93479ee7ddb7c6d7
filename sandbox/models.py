"""The simulated outside world: the game platform (its users, bots and trade offers), the
supplier marketplace (listings and purchases), the chains and the identity provider, what the
demo receiver got, and whether the autopilot moves a merchant's world.

The market is one world for everyone, as the real one is. What the ``/sandbox/`` helpers
configure (platform users, the fleet's status, a chain's switches, the provider's outage, the
autopilot) belongs to the calling merchant's world only; ``POST /sandbox/reset`` drops it."""

from django.db import models

from crypto.models import CHAIN_CHOICES

# -- The game platform and the marketplace.


class SandboxBot(models.Model):
    """A bot of the fleet; its status is per merchant (``SandboxBotState``)."""

    name = models.CharField(max_length=64)
    avatar = models.URLField(max_length=300)
    platform_id = models.CharField(max_length=17, unique=True)

    def __str__(self) -> str:
        return self.name


class SandboxBotState(models.Model):
    """A bot's status in one merchant's world (``POST /sandbox/bots``); without a row, online."""

    class Status(models.TextChoices):
        ONLINE = "online"
        DEGRADED = "degraded"
        OFFLINE = "offline"

    merchant = models.ForeignKey("merchants.Merchant", on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey(SandboxBot, on_delete=models.CASCADE, related_name="states")
    status = models.CharField(max_length=16, choices=Status.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "bot"], name="sandbox_bot_state_per_merchant"
            )
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.status} @ {self.merchant_id}"


class SandboxListing(models.Model):
    """A listing of the supplier marketplace (``standard``) or of the bots' own stock
    (``instant``). ``price`` is the sourcing price of one unit, before the merchant's fee;
    ``amount`` units are for sale (stacks of the second game hold more than one)."""

    class Delivery(models.TextChoices):
        STANDARD = "standard"
        INSTANT = "instant"

    id = models.CharField(primary_key=True, max_length=80)
    # Lookups by item use the (item, price, id) index below.
    item = models.ForeignKey(
        "trading.CatalogItem", on_delete=models.CASCADE, related_name="listings", db_index=False
    )
    game = models.PositiveIntegerField()
    # Copied from the catalog item, so the marketplace sorts without joining it.
    market_hash_name = models.CharField(max_length=200)
    popularity = models.PositiveIntegerField(default=0)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    delivery = models.CharField(max_length=8, choices=Delivery.choices)
    phase = models.CharField(max_length=16, blank=True)
    paint_index = models.PositiveIntegerField(null=True, blank=True)
    wear = models.DecimalField(max_digits=12, decimal_places=10, null=True, blank=True)
    paint_seed = models.PositiveIntegerField(null=True, blank=True)
    stickers = models.JSONField(default=list, blank=True)
    charm = models.JSONField(null=True, blank=True)
    prop_id = models.CharField(max_length=32, blank=True)
    preview_token = models.CharField(max_length=32, blank=True)
    bot = models.ForeignKey(
        SandboxBot, null=True, blank=True, on_delete=models.SET_NULL, db_index=False
    )
    amount = models.PositiveIntegerField(default=1)

    class Meta:
        indexes = [
            models.Index(fields=["game", "price", "id"]),
            models.Index(fields=["game", "-popularity", "item", "price", "id"]),
            models.Index(fields=["game", "market_hash_name", "price", "id"]),
            models.Index(fields=["item", "price", "id"]),
            # The bots' own stock per item (deposit acceptance), counted from the index alone.
            models.Index(
                fields=["item"],
                condition=models.Q(delivery="instant"),
                name="listing_instant_item",
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(price__gt=0), name="listing_price_positive")
        ]

    def __str__(self) -> str:
        return self.id


class SandboxPlatformUser(models.Model):
    """A platform user as one merchant configured it; in that merchant's world everyone else
    (and in every other merchant's world this user too) has a generated inventory and state 1."""

    class Fault(models.TextChoices):
        NONE = "", "none"
        UNAVAILABLE = "unavailable"
        RATE_LIMITED = "rate_limited"
        ERROR = "error"

    merchant = models.ForeignKey("merchants.Merchant", on_delete=models.CASCADE, related_name="+")
    platform_id = models.CharField(max_length=17)
    trade_url_state = models.PositiveSmallIntegerField(null=True, blank=True)
    anti_cheat_banned = models.BooleanField(default=False)
    game_bans = models.PositiveIntegerField(default=0)
    economy_ban = models.CharField(max_length=16, default="none")
    escrow_days = models.PositiveIntegerField(default=0)
    inventory_private = models.BooleanField(default=False)
    inventory = models.JSONField(null=True, blank=True, help_text="Replaces the generated one.")
    fault = models.CharField(max_length=16, choices=Fault.choices, default="", blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "platform_id"], name="sandbox_platform_user_per_merchant"
            )
        ]

    def __str__(self) -> str:
        return f"{self.platform_id} @ {self.merchant_id}"


class SandboxPurchase(models.Model):
    """A purchase the sandbox marketplace accepted: the listing it consumed, and its fate."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted"
        DELIVERED = "delivered"
        CANCELED = "canceled"

    key = models.CharField(max_length=80, unique=True, help_text="the buyer's idempotency key")
    listing_id = models.CharField(max_length=80, db_index=True)
    item_id = models.CharField(max_length=64)
    amount = models.PositiveIntegerField(default=1)
    listing = models.JSONField(help_text="the listing as it was bought")
    price = models.DecimalField(max_digits=12, decimal_places=2)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACCEPTED)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.key} -> {self.listing_id}"


class SandboxReceivedWebhook(models.Model):
    """What the sandbox's demo receiver (``/sandbox/demo-callback``) got, and whether it
    verified."""

    merchant = models.ForeignKey("merchants.Merchant", on_delete=models.CASCADE)
    webhook_id = models.CharField(max_length=80)
    type = models.CharField(max_length=64, blank=True)
    payload = models.JSONField()
    signature_valid = models.BooleanField()
    received_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["merchant", "-received_at"])]

    def __str__(self) -> str:
        return f"{self.type or 'test'} {self.webhook_id}"


class SandboxOffer(models.Model):
    """A trade offer the sandbox platform's bots made: created (awaiting the bot's mobile
    confirmation), then sent to the owner."""

    class State(models.TextChoices):
        NEEDS_CONFIRMATION = "needs_confirmation"
        SENT = "sent"

    offer_id = models.CharField(primary_key=True, max_length=32)
    key = models.CharField(max_length=80, unique=True, help_text="the service's idempotency key")
    bot = models.ForeignKey(SandboxBot, on_delete=models.PROTECT)
    platform_id = models.CharField(max_length=17)
    assets = models.JSONField(help_text="[{assetId, amount}] the owner gives")
    state = models.CharField(max_length=24, choices=State.choices)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.offer_id} ({self.state})"


# -- The chains: what a node would know, kept in the service's database.


class SandboxChain(models.Model):
    """A chain's switches in one merchant's sandbox world (``POST /sandbox/crypto/chains``);
    without a row the chain runs and accepts broadcasts."""

    merchant = models.ForeignKey("merchants.Merchant", on_delete=models.CASCADE, related_name="+")
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    paused = models.BooleanField(default=False, help_text="The chain halts: no credits, no sends.")
    fail_broadcasts = models.BooleanField(
        default=False, help_text="Every broadcast is refused by the node."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["merchant", "chain"], name="sandbox_chain_per_merchant")
        ]

    def __str__(self) -> str:
        return f"sandbox {self.chain} @ {self.merchant_id}"


class SandboxChainTransfer(models.Model):
    tx_hash = models.CharField(max_length=100, primary_key=True)
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    contract = models.CharField(max_length=44)
    from_address = models.CharField(max_length=100)
    to_address = models.CharField(max_length=100)
    amount = models.DecimalField(max_digits=40, decimal_places=18)
    confirmations = models.PositiveIntegerField(default=0)
    dropped = models.BooleanField(default=False)
    broadcast_key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.tx_hash


class SandboxTokenAccount(models.Model):
    address = models.CharField(max_length=44, primary_key=True)
    owner = models.CharField(max_length=44)
    mint = models.CharField(max_length=44)
    state = models.CharField(max_length=8)
    opens_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.address} ({self.state})"


# -- The identity provider.


class SandboxDossier(models.Model):
    """The sandbox identity provider's own record of a dossier (the provider's side)."""

    class Verdict(models.TextChoices):
        PENDING = "PENDING"
        ACCEPTED = "ACCEPTED"
        REJECTED = "REJECTED"

    id = models.CharField(max_length=64, primary_key=True)
    reference = models.CharField(max_length=64, unique=True, help_text="The caller's key.")
    session = models.CharField(max_length=64)
    email = models.CharField(max_length=254, blank=True)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default=Verdict.PENDING)
    created_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"sandbox dossier {self.id} ({self.verdict})"


class SandboxIdentityProviderState(models.Model):
    """Whether the sandbox identity provider answers one merchant (set by that merchant's
    sandbox helper); without a row it does."""

    merchant = models.OneToOneField(
        "merchants.Merchant", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    online = models.BooleanField(default=True)

    def __str__(self) -> str:
        state = "online" if self.online else "offline"
        return f"sandbox identity provider ({state}) @ {self.merchant_id}"


# -- The world's own motion.


class SandboxAutopilotState(models.Model):
    """Whether the autopilot (``SANDBOX_AUTOPILOT_SECONDS``) moves one merchant's trades and
    chain transactions (``POST /sandbox/autopilot``); without a row it does."""

    merchant = models.OneToOneField(
        "merchants.Merchant", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    enabled = models.BooleanField(default=True)

    def __str__(self) -> str:
        state = "on" if self.enabled else "off"
        return f"sandbox autopilot ({state}) @ {self.merchant_id}"
