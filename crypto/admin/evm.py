"""Staff console of the real EVM chains: where each chain's deposit scanner is (where it began,
the last block read, the node's head and how far behind it is), the sweeps of deposit addresses
(requested from the allocations' "sweep" action or by the schedule) and every transaction the
service signed, with its attempts. Read-only: the chain decides how they end."""

from django.contrib import admin

from core.admin_display import ReadOnlyAdmin, ReadOnlyInline
from crypto.evm.models import EvmAttempt, EvmCursor, EvmSweep, EvmTransaction
from crypto.selectors import ChainScanState, chain_scan_state


@admin.register(EvmSweep)
class EvmSweepAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "amount",
        "chain",
        "token",
        "address",
        "trigger",
        "tx_hash",
        "created_at",
        "completed_at",
    ]
    list_filter = ["status", "trigger", "chain", "token"]
    search_fields = ["id", "address", "tx_hash", "allocation__platform_id"]
    date_hierarchy = "created_at"


class EvmAttemptInline(ReadOnlyInline):
    model = EvmAttempt
    fields = ("tx_hash", "max_fee_per_gas", "max_priority_fee_per_gas", "created_at")
    readonly_fields = fields


@admin.register(EvmTransaction)
class EvmTransactionAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["key", "purpose", "chain", "sender", "nonce", "status", "mined_hash"]
    list_filter = ["status", "purpose", "chain"]
    search_fields = ["key", "sender", "to", "mined_hash", "attempts__tx_hash"]
    inlines = [EvmAttemptInline]


@admin.register(EvmCursor)
class EvmCursorAdmin(ReadOnlyAdmin):
    ordering = ("-started_at", "chain")
    list_display = [
        "chain",
        "first_block",
        "started_at",
        "last_scanned_block",
        "head",
        "lag_blocks",
        "lag_seconds",
        "scanned_at",
    ]

    @staticmethod
    def _state(cursor: EvmCursor) -> ChainScanState:
        return chain_scan_state(cursor.chain, cursor)

    @admin.display(description="last block read")
    def last_scanned_block(self, cursor: EvmCursor) -> int | None:
        return self._state(cursor).last_scanned_block

    @admin.display(description="behind the head (blocks)")
    def lag_blocks(self, cursor: EvmCursor) -> int | None:
        return self._state(cursor).lag_blocks

    @admin.display(description="behind the head (seconds of chain time)")
    def lag_seconds(self, cursor: EvmCursor) -> int | None:
        return self._state(cursor).lag_seconds
