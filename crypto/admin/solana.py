"""Staff console of real Solana: the sweeps of deposit token accounts (requested from the token
accounts' "sweep" action, by the schedule, or closing an emptied account) and every transaction
the service signed, with its signings. Read-only: the chain decides how they end."""

from django.contrib import admin

from core.admin_display import ReadOnlyAdmin, ReadOnlyInline, json_readonly, readable_fields
from crypto.solana.models import SolanaAttempt, SolanaSweep, SolanaTransaction


@admin.register(SolanaSweep)
class SolanaSweepAdmin(ReadOnlyAdmin):
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


class SolanaAttemptInline(ReadOnlyInline):
    model = SolanaAttempt
    fields = ("signature", "blockhash", "last_valid_block_height", "priority_fee", "refused")
    readonly_fields = fields


@admin.register(SolanaTransaction)
class SolanaTransactionAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["key", "purpose", "status", "succeeded", "landed_signature", "created_at"]
    list_filter = ["status", "purpose"]
    search_fields = ["key", "landed_signature", "attempts__signature"]
    inlines = [SolanaAttemptInline]
    fields = readonly_fields = readable_fields(SolanaTransaction)
    signers_json = json_readonly("signers")
    instructions_json = json_readonly("instructions")
