from dataclasses import fields
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from core.admin_display import json_block, json_readonly, readable_fields
from core.errors import DomainError
from core.market_version import market_version_bump
from core.sealed import sealing_configured
from merchants.console import changelist_of, merchant_column, merchant_panel
from merchants.models import Merchant
from merchants.tradeurls import PLATFORM_ID_PATTERN
from merchants.webhooks.models import WebhookEvent
from trading.games import GAMES
from trading.models import (
    BotDelivery,
    CatalogItem,
    GameSettings,
    SteamBot,
    SteamOffer,
    Supplier,
    SupplierError,
    Trade,
    TradeEvent,
    TradeItem,
)
from trading.risk import RiskPolicy
from trading.services.bots import (
    SECRET_FIELDS,
    steam_bot_log_in,
    steam_bot_secret_check,
    steam_bot_secrets_set,
)
from trading.services.suppliers import supplier_balances_check, supplier_switch
from trading.withdrawals.services.lifecycle import trade_force_cancel
from wallet.models import Transfer

RECENT_TRADES = 10


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


ITEM_FIELDS = (
    "position",
    "public_id",
    "external_id",
    "status",
    "error",
    "price",
    "locked",
    "sourcing_price",
    "delivery",
    "purchase_ref",
    "offer_id",
    "hold_end_date",
    "cancel_requested_at",
)
EVENT_FIELDS = ("created_at", "kind", "item", "from_status", "to_status", "actor", "detail_json")


class TradeItemInline(ReadOnlyInline):
    model = TradeItem
    fields = ITEM_FIELDS
    readonly_fields = ITEM_FIELDS


class TradeEventInline(ReadOnlyInline):
    model = TradeEvent
    fields = EVENT_FIELDS
    readonly_fields = EVENT_FIELDS
    detail_json = json_readonly("detail")


@admin.register(Trade)
class TradeAdmin(admin.ModelAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "total_price",
        "type",
        "source",
        merchant_column,
        "created_at",
        "game",
        "external_id",
    ]
    list_filter = ["type", "source", "status", "game", "is_quick"]
    # Whatever a merchant or the platform quotes: a deposited item's id is <game>_<asset id>,
    # so an asset id finds its deposit; offers are the trade's (sent, and a deposit's own from
    # its creation on) and each item's.
    search_fields = [
        "id",
        "external_id",
        "offer_id",
        "offer_ref",
        "client_platform_id",
        "merchant__name",
        "items__public_id",
        "items__external_id",
        "items__offer_id",
    ]
    search_help_text = (
        "Trade id or external id, asset or item id, item external id, offer id, "
        "the client's platform id or the merchant's name."
    )
    date_hierarchy = "created_at"
    inlines = [TradeItemInline, TradeEventInline]
    fields = readonly_fields = (*readable_fields(Trade), "webhooks", "transfers")
    bot_info_json = json_readonly("bot_info")
    actions = ["force_cancel"]
    list_select_related = ["merchant"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="webhook events")
    def webhooks(self, trade: Trade) -> str:
        rows = WebhookEvent.objects.filter(subject_type="trade", subject_id=str(trade.id))
        return "\n".join(
            f"#{e.sequence} {e.type}: {e.status} after {e.attempts} attempt(s) {e.last_error}"
            for e in rows.order_by("sequence")
        )

    @admin.display(description="wallet transfers")
    def transfers(self, trade: Trade) -> str:
        causes = [str(trade.id), *(str(pk) for pk in trade.items.values_list("pk", flat=True))]
        rows = Transfer.objects.filter(cause_id__in=causes).prefetch_related("postings__account")
        return "\n".join(
            f"{t.created_at:%Y-%m-%d %H:%M:%S} {t.kind} "
            + ", ".join(f"{p.account.kind} {p.amount:+}" for p in t.postings.all())
            for t in rows.order_by("created_at")
        )

    @admin.action(description="Force-cancel (refund undelivered items)", permissions=["change"])
    def force_cancel(self, request: HttpRequest, queryset: QuerySet[Trade]) -> None:
        for trade in queryset:
            try:
                ended = trade_force_cancel(
                    trade_id=str(trade.id),
                    staff=request.user.get_username(),
                    reason="admin force-cancel",
                )
            except DomainError as exc:
                self.message_user(request, f"{trade.id}: {exc.message}", messages.ERROR)
                continue
            self.log_change(request, trade, f"Force-cancelled {ended} item(s).")
            self.message_user(request, f"{trade.id}: {ended} item(s) ended and refunded.")


@admin.register(CatalogItem)
class CatalogItemAdmin(admin.ModelAdmin):
    # Reference data without a time: by game, then by name.
    ordering = ("game", "market_hash_name", "id")
    list_display = ["id", "market_hash_name", "game", "reference_price", "stock_limit"]
    list_filter = ["game", "is_phased"]
    search_fields = ["id", "market_hash_name"]

    def save_model(
        self, request: HttpRequest, obj: CatalogItem, form: ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        # Reference prices and stock limits feed the cached price book.
        transaction.on_commit(market_version_bump)


@admin.register(GameSettings)
class GameSettingsAdmin(admin.ModelAdmin):
    ordering = ("game",)
    list_display = ["game", "deposits_paused", "hold_days"]


@merchant_panel(slug="trades", title=f"Latest {RECENT_TRADES} trades", position=30)
def recent_trades_panel(merchant: Merchant) -> SafeString:
    trades = Trade.objects.filter(merchant=merchant).order_by("-created_at", "-id")
    return render_to_string(
        "admin/trading/merchant_trades.html",
        {
            "trades": trades[:RECENT_TRADES],
            "all_trades": changelist_of("trading.trade", merchant),
        },
    )


def _number(value: object) -> Decimal | None:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


@merchant_panel(slug="risk-policy", title="Client risk policy", position=50)
def risk_policy_panel(merchant: Merchant) -> SafeString:
    """Each number of the client collateral model as it applies to this merchant: its own
    override or the default. Keys the model does not know are ignored by it, so they are named."""
    overrides = merchant.risk_policy if isinstance(merchant.risk_policy, dict) else {}
    rows = [
        {
            "name": field.name,
            "value": _number(overrides[field.name]) if field.name in overrides else field.default,
            "overridden": field.name in overrides,
            "stored": overrides.get(field.name),
        }
        for field in fields(RiskPolicy)
    ]
    known = {row["name"] for row in rows}
    return render_to_string(
        "admin/trading/merchant_risk_policy.html",
        {
            "rows": rows,
            "ignored": sorted(set(overrides) - known),
            "stored": json_block(merchant.risk_policy),
        },
    )


class SupplierErrorInline(ReadOnlyInline):
    model = SupplierError
    fields = ("at", "operation", "message")
    ordering = ("-at",)


@admin.register(Supplier)
class SupplierAdmin(admin.ModelAdmin):
    """The supplier marketplaces: health, balance, the switch and the newest errors. Switching
    off stops new buys and takes the supplier's listings off the market; its bought trades are
    still followed to their end (docs/suppliers.md)."""

    ordering = ("-last_ok_at", "name")
    list_display = (
        "name",
        "enabled",
        "health",
        "balance",
        "balance_checked_at",
        "last_ok_at",
        "last_error_at",
        "consecutive_failures",
        "paused_until",
        "last_poll_at",
        "socket_connected_at",
    )
    readonly_fields = (
        "name",
        "enabled",
        "health",
        "balance",
        "balance_checked_at",
        "last_ok_at",
        "last_error_at",
        "consecutive_failures",
        "paused_until",
        "poll_cursor",
        "last_poll_at",
        "socket_connected_at",
    )
    inlines = (SupplierErrorInline,)
    actions = ("switch_off", "switch_on", "check_balances")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="health")
    def health(self, supplier: Supplier) -> str:
        if not supplier.enabled:
            return "switched off"
        if supplier.consecutive_failures >= 3:
            return f"down ({supplier.consecutive_failures} failures in a row)"
        if supplier.consecutive_failures:
            return "degraded"
        return "ok" if supplier.last_ok_at else "not called yet"

    @admin.action(
        description="Switch off (no new buys; trades in flight go on)", permissions=["change"]
    )
    def switch_off(self, request: HttpRequest, queryset: QuerySet[Supplier]) -> None:
        for supplier in queryset:
            removed = supplier_switch(name=supplier.name, enabled=False)
            self.log_change(
                request, supplier, f"Switched off ({removed} listings left the market)."
            )

    @admin.action(description="Switch on", permissions=["change"])
    def switch_on(self, request: HttpRequest, queryset: QuerySet[Supplier]) -> None:
        for supplier in queryset:
            supplier_switch(name=supplier.name, enabled=True)
            self.log_change(request, supplier, "Switched on.")

    @admin.action(description="Read balances now", permissions=["view"])
    def check_balances(self, request: HttpRequest, queryset: QuerySet[Supplier]) -> None:
        checked = supplier_balances_check()
        self.message_user(request, f"{checked} supplier balance(s) read.", messages.INFO)


class SteamBotForm(ModelForm):
    """Secrets are typed in and sealed; they are never rendered back (blank keeps them)."""

    shared_secret = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="base64, from the mobile authenticator: login codes. Blank keeps the stored one.",
    )
    identity_secret = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="base64: signs mobile confirmations. Blank keeps the stored one.",
    )
    refresh_token = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="A web session's refresh token. Blank keeps the stored one.",
    )
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Lets the bot log in afresh when its refresh token is refused. Optional.",
    )
    games_list = forms.CharField(
        label="Games", help_text="App ids, comma-separated (730, 252490)", required=True
    )

    class Meta:
        model = SteamBot
        fields = ("name", "avatar", "account_name", "steam_id", "enabled", "inventory_capacity")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["games_list"].initial = ", ".join(str(g) for g in self.instance.games or [])

    def clean_steam_id(self) -> str:
        steam_id: str = self.cleaned_data["steam_id"]
        if not PLATFORM_ID_PATTERN.match(steam_id):
            raise forms.ValidationError("A 17-digit Steam id (76561...).")
        return steam_id

    def clean_games_list(self) -> list[int]:
        raw = [part.strip() for part in self.cleaned_data["games_list"].split(",") if part.strip()]
        if not raw or any(not part.isdigit() or int(part) not in GAMES for part in raw):
            raise forms.ValidationError(f"Only these games: {', '.join(map(str, GAMES))}.")
        return sorted({int(part) for part in raw})

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if any(cleaned.get(name) for name in SECRET_FIELDS) and not sealing_configured():
            raise forms.ValidationError(
                "SECRETS_ENCRYPTION_KEYS is not set: nothing can be sealed."
            )
        for name in SECRET_FIELDS:
            try:
                steam_bot_secret_check(name, cleaned.get(name, ""))
            except DomainError as exc:
                self.add_error(name, exc.message)
        return cleaned


@admin.register(SteamBot)
class SteamBotAdmin(admin.ModelAdmin):
    form = SteamBotForm
    ordering = ("-created_at", "id")
    list_display = (
        "name",
        "account_name",
        "steam_id",
        "games",
        "enabled",
        "state",
        "state_detail",
        "rate_limited_until",
        "last_poll_at",
        "inventory_count",
        "inventory_capacity",
    )
    list_filter = ("state", "enabled")
    search_fields = ("name", "account_name", "steam_id")
    readonly_fields = (
        "state",
        "state_detail",
        "state_changed_at",
        "rate_limited_until",
        "last_login_at",
        "last_poll_at",
        "inventory_count",
        "inventory_counted_at",
        "secrets_stored",
    )
    actions = ["log_in_again"]

    @admin.display(description="secrets stored")
    def secrets_stored(self, bot: SteamBot) -> str:
        stored = [name for name in SECRET_FIELDS if getattr(bot, f"{name}_sealed")]
        return ", ".join(stored) or "none"

    def save_model(self, request: HttpRequest, obj: SteamBot, form: Any, change: bool) -> None:
        obj.games = form.cleaned_data["games_list"]
        steam_bot_secrets_set(
            bot=obj, secrets={name: form.cleaned_data.get(name, "") for name in SECRET_FIELDS}
        )
        super().save_model(request, obj, form, change)

    @admin.action(description="Log in again")
    def log_in_again(self, request: HttpRequest, queryset: QuerySet[SteamBot]) -> None:
        for bot in queryset:
            state = steam_bot_log_in(bot=bot)
            level = messages.SUCCESS if state == SteamBot.State.ONLINE else messages.WARNING
            detail = f": {bot.state_detail}" if bot.state_detail else ""
            self.message_user(request, f"{bot.name}: {state}{detail}", level)


@admin.register(SteamOffer)
class SteamOfferAdmin(admin.ModelAdmin):
    ordering = ("-created_at", "id")
    list_display = ("key", "bot", "kind", "offer_id", "state", "trade_status", "created_at")
    fields = readonly_fields = readable_fields(SteamOffer)
    assets_json = json_readonly("assets")
    moved_assets_json = json_readonly("moved_assets")
    list_filter = ("kind", "state")
    search_fields = ("key", "offer_id", "trade_id", "partner_steam_id")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(BotDelivery)
class BotDeliveryAdmin(admin.ModelAdmin):
    """Withdrawal items the bots hand over: waiting ones with their next attempt and why the
    last one did not go out (not arrived yet, not tradable yet, Steam down)."""

    ordering = ("-created_at", "id")
    list_display = (
        "item",
        "bot_platform_id",
        "market_hash_name",
        "asset_id",
        "state",
        "attempts",
        "next_attempt_at",
        "error",
        "offer_key",
    )
    list_filter = ("state",)
    search_fields = ("bot_platform_id", "asset_id", "offer_key", "trade__id")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
