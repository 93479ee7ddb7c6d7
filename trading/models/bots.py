"""The platform accounts the service trades from (Steam bots) and the trade offers they send.

A bot's secrets and session are sealed at rest (``core.sealed``): the model stores only their
sealed form, and the admin never shows them again once entered."""

from django.db import models
from django.db.models import Q


class SteamBot(models.Model):
    class State(models.TextChoices):
        ONLINE = "online"
        SESSION_EXPIRED = "session_expired"  # logging in again (automatically, or by staff)
        RATE_LIMITED = "rate_limited"  # until rate_limited_until
        TRADE_BANNED = "trade_banned"
        OFFLINE = "offline"  # never logged in, or its login keeps failing

    name = models.CharField(max_length=64, help_text="shown to users as botInfo.name")
    avatar = models.URLField(blank=True)
    account_name = models.CharField(max_length=64, unique=True)
    steam_id = models.CharField("platform id", max_length=17, unique=True)
    games = models.JSONField(default=list, help_text="the games (app ids) this bot trades")
    enabled = models.BooleanField(default=True)
    inventory_capacity = models.PositiveIntegerField(
        default=1000, help_text="items this bot may hold; deposits go to bots with room"
    )
    inventory_count = models.PositiveIntegerField(default=0)
    inventory_counted_at = models.DateTimeField(null=True, blank=True)
    # Sealed secrets (never shown again): TOTP login codes, mobile confirmations, the password
    # of a full login, the web session's refresh token and its current access token.
    shared_secret_sealed = models.TextField(blank=True)
    identity_secret_sealed = models.TextField(blank=True)
    password_sealed = models.TextField(blank=True)
    refresh_token_sealed = models.TextField(blank=True)
    access_token_sealed = models.TextField(blank=True)
    access_token_expires_at = models.DateTimeField(null=True, blank=True)
    # The community's CSRF value sent back with every form post (not a secret).
    session_id = models.CharField(max_length=32, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OFFLINE)
    state_detail = models.CharField(max_length=200, blank=True)
    state_changed_at = models.DateTimeField(null=True, blank=True)
    rate_limited_until = models.DateTimeField(null=True, blank=True)
    last_login_at = models.DateTimeField(null=True, blank=True)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    # GetTradeOffers' time_historical_cutoff for the next poll (unix seconds, 0: never polled).
    poll_since = models.PositiveBigIntegerField(default=0)
    # One worker polls a bot at a time: a lease taken with a compare-and-set update.
    poll_lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        permissions = [("log_in_bot", "Can log a bot in again")]

    def __str__(self) -> str:
        return f"{self.name} ({self.account_name})"


class SteamOffer(models.Model):
    """One trade offer a bot makes, keyed by the domain's key, so the same key never sends
    twice: the row exists before the offer is sent, its Steam id is stored before it is
    confirmed, and a send that may have happened is looked for before sending again."""

    class Kind(models.TextChoices):
        DEPOSIT = "deposit"  # the bot asks for the user's items
        DELIVERY = "delivery"  # the bot gives items to the user

    key = models.CharField(max_length=120, unique=True)
    bot = models.ForeignKey(SteamBot, on_delete=models.PROTECT, related_name="offers")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    partner_steam_id = models.CharField(max_length=17)
    partner_token = models.CharField(max_length=16, blank=True)
    game = models.PositiveIntegerField()
    assets = models.JSONField(default=list, help_text="[{assetid, contextid, amount}]")
    offer_id = models.CharField(max_length=32, blank=True)
    # The last ETradeOfferState and ETradeStatus the domain was told of.
    state = models.PositiveSmallIntegerField(null=True, blank=True)
    trade_id = models.CharField(max_length=32, blank=True)
    trade_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # Assets the trade moved, with their new ids (after a reversal, the ids they came back as).
    moved_assets = models.JSONField(default=list, blank=True)
    send_attempts = models.PositiveSmallIntegerField(default=0)
    send_lease_until = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    cancel_after = models.DateTimeField(null=True, blank=True)
    escrow_end_at = models.DateTimeField(null=True, blank=True)
    status_checked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["bot", "offer_id"], name="steam_offer_bot_offer"),
            # Offers whose trade may still be reversed (accepted, within trade protection).
            models.Index(
                fields=["bot", "status_checked_at"],
                condition=Q(state__in=(3, 11)),
                name="steam_offer_reversible",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.offer_id or self.key}"
