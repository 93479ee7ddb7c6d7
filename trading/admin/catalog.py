"""The catalog and the games' settings in the console."""

from django.contrib import admin
from django.db import transaction
from django.forms import ModelForm
from django.http import HttpRequest

from core.market_version import market_version_bump
from trading.models import CatalogItem, GameSettings


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
