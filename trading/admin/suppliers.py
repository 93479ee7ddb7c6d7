"""The supplier marketplaces in the console: health, balance, the switch and the newest
errors. Switching off stops new buys and takes the supplier's listings off the market; its
bought trades are still followed to their end (docs/suppliers.md)."""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin.staff import StaffOperation, StaffOperationsAdmin
from core.admin_display import ReadOnlyInline
from core.staff import Staff
from trading.models import Supplier, SupplierError
from trading.selectors.attention import DOWN_AFTER_FAILURES, suppliers_down, suppliers_low
from trading.services.staff import supplier_switch_by_staff
from trading.services.suppliers import supplier_balances_check


class SupplierStateFilter(admin.SimpleListFilter):
    """What the home counts: switched-on suppliers that are down or low on money."""

    title = "needs attention"
    parameter_name = "attention"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("down", f"down ({DOWN_AFTER_FAILURES}+ failures in a row)"),
            ("low", "balance low"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Supplier]) -> QuerySet[Supplier]:
        if self.value() == "down":
            return queryset & suppliers_down()
        if self.value() == "low":
            return queryset & suppliers_low()
        return queryset


class SupplierErrorInline(ReadOnlyInline):
    model = SupplierError
    fields = ("at", "operation", "message")
    ordering = ("-at",)


def _switch(enabled: bool) -> Any:
    def perform(supplier: Supplier, staff: Staff) -> str:
        removed = supplier_switch_by_staff(name=supplier.name, enabled=enabled, staff=staff)
        return "switched on." if enabled else f"switched off ({removed} listings left the market)."

    return perform


SWITCH_OFF = StaffOperation(
    name="switch_off",
    label="Switch off",
    permission="trading.change_supplier",
    explanation=(
        "No new buys from this supplier and its listings leave the market now; trades already "
        "bought from it are followed to their end."
    ),
    perform=_switch(False),
    offered=lambda supplier: supplier.enabled,
)
SWITCH_ON = StaffOperation(
    name="switch_on",
    label="Switch on",
    permission="trading.change_supplier",
    explanation="Buys from this supplier resume; its next polls bring its listings back.",
    perform=_switch(True),
    offered=lambda supplier: not supplier.enabled,
)


# What the list and the page both show of a supplier account, in this order.
ACCOUNT_STATE = (
    "name",
    "enabled",
    "health",
    "balance",
    "balance_checked_at",
    "last_ok_at",
    "last_error_at",
    "consecutive_failures",
    "paused_until",
)


@admin.register(Supplier)
class SupplierAdmin(StaffOperationsAdmin):
    ordering = ("-last_ok_at", "name")
    list_display = (*ACCOUNT_STATE, "last_poll_at", "socket_connected_at")
    list_filter = ("enabled", SupplierStateFilter)
    # The page shows the list's columns and where the polling stands.
    readonly_fields = (*ACCOUNT_STATE, "poll_cursor", "last_poll_at", "socket_connected_at")
    inlines = (SupplierErrorInline,)
    actions = ("check_balances",)
    staff_operations = (SWITCH_OFF, SWITCH_ON)
    staff_subject = "supplier"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="health")
    def health(self, supplier: Supplier) -> str:
        if not supplier.enabled:
            return "switched off"
        if supplier.consecutive_failures >= DOWN_AFTER_FAILURES:
            return f"down ({supplier.consecutive_failures} failures in a row)"
        if supplier.consecutive_failures:
            return "degraded"
        return "ok" if supplier.last_ok_at else "not called yet"

    @admin.action(description="Read balances now", permissions=["view"])
    def check_balances(self, request: HttpRequest, queryset: QuerySet[Supplier]) -> None:
        checked = supplier_balances_check()
        self.message_user(request, f"{checked} supplier balance(s) read.", messages.INFO)
