from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import URLPattern
from django.utils.safestring import SafeString

from core.admin_display import ReadOnlyAdmin, ReadOnlyInline
from merchants.console import changelist_of, merchant_column, merchant_panel
from merchants.models import Merchant
from wallet.admin_statements import statement_urls
from wallet.models import Account, Posting, Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check

POSTING_FIELDS = ("account", "amount")


class PostingInline(ReadOnlyInline):
    model = Posting
    fields = POSTING_FIELDS
    readonly_fields = POSTING_FIELDS


# Money moves only through the services (staff: the fundings page), never by editing rows.
@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["id", "kind", "cause_type", "cause_id", "memo", "created_at"]
    list_filter = ["kind", "cause_type"]
    search_fields = ["id", "cause_id", "memo"]
    inlines = [PostingInline]
    readonly_fields = ["id", "kind", "cause_type", "cause_id", "memo", "created_at"]


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    """Balances, with the invariant check on top of the list."""

    list_display = ["__str__", "kind", "balance", merchant_column, "updated_at"]
    list_select_related = ["merchant"]
    list_filter = ["kind"]
    search_fields = ["merchant__name", "merchant__id"]
    readonly_fields = ["merchant", "kind", "currency", "balance", "updated_at"]
    change_list_template = "admin/wallet/account/change_list.html"
    # Accounts have no creation time: the ones money moved through last come first.
    ordering = ("-updated_at", "-id")

    def get_urls(self) -> list[URLPattern]:
        return statement_urls(self.admin_site) + super().get_urls()

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> Any:
        report = wallet_invariants_check()
        return super().changelist_view(request, {**(extra_context or {}), "invariants": report})


@merchant_panel(slug="balances", title="Balances", position=10)
def balances_panel(merchant: Merchant) -> SafeString:
    amounts = wallet_balances(merchant=merchant)
    return render_to_string(
        "admin/wallet/merchant_balances.html",
        {
            "balances": [
                (kind, Account.Kind(kind).label, amounts[kind]) for kind in Account.MERCHANT_KINDS
            ],
            "accounts": changelist_of("wallet.account", merchant),
        },
    )
