"""Staff pages of the sandbox world; Django's admin logs every add, change and delete."""

from django.contrib import admin

from merchants.console import merchant_column
from sandbox.models import SandboxChain


@admin.register(SandboxChain)
class SandboxChainAdmin(admin.ModelAdmin):
    # The switches of the newest merchants' worlds first.
    ordering = ("-merchant__created_at", "-id")
    list_display = ["chain", merchant_column, "paused", "fail_broadcasts"]
    list_select_related = ["merchant"]
