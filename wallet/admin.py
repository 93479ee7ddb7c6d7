from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import URLPattern, reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from core.admin_board import AttentionRow, board_section
from core.admin_display import ReadOnlyAdmin, ReadOnlyInline, console_age, console_shifts
from merchants.console import changelist_of, merchant_column, merchant_panel
from merchants.models import Merchant
from wallet.admin_statements import statement_urls
from wallet.models import Account, Posting, Transfer, WalletCheck
from wallet.selectors import INVARIANTS, wallet_balances

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
    """Balances, with the last invariant check on top of the list (checking reads every
    posting: beat and ``check_wallet`` run it, the page shows what they found)."""

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
        last = WalletCheck.objects.order_by("-ran_at", "-id").first()
        return super().changelist_view(
            request, {**(extra_context or {}), "check": last, "check_problems": _problems(last)}
        )


def _problems(check: WalletCheck | None) -> list[str]:
    if check is None:
        return []
    return [
        f"{title}: {problem}"
        for name, title in INVARIANTS.items()
        for problem in check.problems.get(name, [])
    ]


@admin.register(WalletCheck)
class WalletCheckAdmin(ReadOnlyAdmin):
    """Every run of the invariant check kept (beat's and ``check_wallet``'s), newest first."""

    ordering = ("-ran_at", "-id")
    list_display = ["ran_at", "is_clean", "seconds", "broken"]
    list_filter = ["is_clean"]
    fields = readonly_fields = ("ran_at", "is_clean", "seconds", "found")

    @admin.display(description="problems")
    def broken(self, check: WalletCheck) -> int:
        return sum(len(problems) for problems in check.problems.values())

    @admin.display(description="what was found broken")
    def found(self, check: WalletCheck) -> str:
        return "\n".join(_problems(check)) or "nothing"


@board_section(slug="wallet", title="Wallet", position=70)
def wallet_check() -> list[AttentionRow]:
    last = WalletCheck.objects.order_by("-ran_at", "-id").first()
    checks = reverse("admin:wallet_walletcheck_changelist")
    if last is None:
        return [
            AttentionRow(
                label="last check_wallet",
                value="never run",
                url=checks,
                alert=True,
                note="beat runs it; or run manage.py check_wallet",
            )
        ]
    stale = timezone.now() - console_shifts().real(last.ran_at) > timedelta(
        seconds=2 * settings.WALLET_CHECK_SECONDS
    )
    found = sum(len(problems) for problems in last.problems.values())
    return [
        AttentionRow(
            label="last check_wallet",
            value="clean" if last.is_clean else f"BROKEN ({found} problems)",
            url=reverse("admin:wallet_walletcheck_change", args=[last.pk]),
            alert=not last.is_clean or stale,
            note=f"{console_age(last.ran_at)} ago, in {last.seconds:.1f} s"
            + ("; older than two periods: is beat running?" if stale else ""),
        )
    ]


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
