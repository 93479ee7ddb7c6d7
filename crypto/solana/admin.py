"""Staff console of real Solana: the sweeps of deposit token accounts (requested from the token
accounts' "sweep" action, by the schedule, or closing an emptied account) and every transaction
the service signed, with its signings. Read-only: the chain decides how they end."""

from django.contrib import admin
from django.db import models

from core.admin_display import IndentedJSONField
from crypto.solana.models import SolanaAttempt, SolanaSweep, SolanaTransaction


class ReadOnly(admin.ModelAdmin):
    formfield_overrides = {models.JSONField: {"form_class": IndentedJSONField}}

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(SolanaSweep)
class SolanaSweepAdmin(ReadOnly):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "amount",
        "token",
        "address",
        "closes",
        "trigger",
        "tx_hash",
        "created_at",
        "completed_at",
    ]
    list_filter = ["status", "trigger", "closes", "token"]
    search_fields = ["id", "address", "tx_hash", "account__allocation__platform_id"]
    date_hierarchy = "created_at"


class SolanaAttemptInline(admin.TabularInline):
    model = SolanaAttempt
    fields = ("signature", "blockhash", "last_valid_block_height", "priority_fee", "refused")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(SolanaTransaction)
class SolanaTransactionAdmin(ReadOnly):
    ordering = ("-created_at", "-id")
    list_display = ["key", "purpose", "status", "succeeded", "landed_signature", "created_at"]
    list_filter = ["status", "purpose"]
    search_fields = ["key", "landed_signature", "attempts__signature"]
    inlines = [SolanaAttemptInline]
