"""The bots in the console: their secrets typed in and sealed (never shown again), their state,
"log in again" (a staff action with its reason), the offers they sent and the items they hand
over."""

from typing import Any

from django import forms
from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest

from core.admin.staff import StaffOperation, StaffOperationsAdmin
from core.admin_display import ReadOnlyAdmin, json_readonly, readable_fields
from core.errors import DomainError
from core.sealed import sealing_configured
from core.staff import Staff
from merchants.tradeurls import PLATFORM_ID_PATTERN
from trading.games import GAMES
from trading.models import BotDelivery, SteamBot, SteamOffer
from trading.services.bots import (
    SECRET_FIELDS,
    steam_bot_log_in,
    steam_bot_secret_check,
    steam_bot_secrets_set,
)


def _secret_field(help_text: str) -> forms.CharField:
    """A secret typed in, never rendered back; left blank, the stored one stays."""
    return forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False), help_text=help_text
    )


class SteamBotForm(ModelForm):
    """Secrets are typed in and sealed; they are never rendered back (blank keeps them)."""

    shared_secret = _secret_field(
        "base64, from the mobile authenticator: login codes. Blank keeps the stored one."
    )
    identity_secret = _secret_field(
        "base64: signs mobile confirmations. Blank keeps the stored one."
    )
    refresh_token = _secret_field("A web session's refresh token. Blank keeps the stored one.")
    password = _secret_field(
        "Lets the bot log in afresh when its refresh token is refused. Optional."
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


def _log_in(bot: SteamBot, staff: Staff) -> str:
    state = steam_bot_log_in(bot=bot, staff=staff)
    detail = f": {bot.state_detail}" if bot.state_detail else ""
    return f"{state}{detail}."


LOG_IN = StaffOperation(
    name="log_in_again",
    label="Log in again",
    permission="trading.log_in_bot",
    explanation=(
        "The bot logs in to Steam now with its stored refresh token (or its password, when the "
        "token is refused) instead of waiting for its next call to find the session expired. "
        "Its state afterwards says whether it worked and, if not, why."
    ),
    perform=_log_in,
    offered=lambda bot: bot.enabled and bot.state != SteamBot.State.ONLINE,
)


@admin.register(SteamBot)
class SteamBotAdmin(StaffOperationsAdmin):
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
    staff_operations = (LOG_IN,)
    staff_subject = "steam_bot"

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
class BotDeliveryAdmin(ReadOnlyAdmin):
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
