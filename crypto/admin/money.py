"""Staff console for crypto: deposits (release or refund frozen ones), cashouts (approve or
reject those in review, cancel those not sent), allocations and token accounts (swept to the hot
wallet by staff, with a reason), review thresholds and flagged senders. Every action is in the
admin log."""

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core import clock
from core.admin.staff import StaffOperation, StaffOperationsAdmin
from core.admin_display import ReadOnlyAdmin
from core.errors import DomainError
from core.staff import Staff
from crypto.models import (
    AddressAllocation,
    CryptoDeposit,
    CryptoWithdrawal,
    FlaggedAddress,
    MerchantCryptoPolicy,
    SolanaTokenAccount,
)
from crypto.selectors import solana_accounts_behind
from crypto.services.addresses import allocation_sweep_request
from crypto.services.deposits import crypto_deposit_refund, crypto_deposit_release
from crypto.services.withdrawals import (
    crypto_withdrawal_cancel,
    crypto_withdrawal_review,
)
from merchants.console import merchant_column
from merchants.webhooks.models import WebhookEvent
from wallet.models import Transfer


def _webhooks(subject_type: str, subject_id: str) -> str:
    rows = WebhookEvent.objects.filter(subject_type=subject_type, subject_id=subject_id)
    return "\n".join(
        f"#{e.sequence} {e.type}: {e.status} after {e.attempts} attempt(s) {e.last_error}"
        for e in rows.order_by("sequence")
    )


def _transfers(cause_type: str, cause_id: str) -> str:
    rows = Transfer.objects.filter(cause_type=cause_type, cause_id=cause_id)
    return "\n".join(
        f"{t.created_at:%Y-%m-%d %H:%M:%S} {t.kind} "
        + ", ".join(f"{p.account.kind} {p.amount:+}" for p in t.postings.all())
        for t in rows.prefetch_related("postings__account").order_by("created_at")
    )


def _apply(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    rows: QuerySet[Any],
    act: Callable[[str], object],
    done: str,
) -> None:
    """Run a staff decision on each row; each success goes to the admin log."""
    for row in rows:
        try:
            act(str(row.pk))
        except DomainError as exc:
            model_admin.message_user(request, f"{row.pk}: {exc.message}", messages.ERROR)
            continue
        row.refresh_from_db()
        model_admin.log_change(request, row, f"{done} by {request.user.get_username()}.")
        model_admin.message_user(request, f"{row.pk}: {done}.")


@admin.register(CryptoDeposit)
class CryptoDepositAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "amount_usd",
        "chain",
        "token",
        merchant_column,
        "platform_id",
        "review_reason",
        "confirmations",
        "created_at",
    ]
    list_filter = ["status", "chain", "token", "review_reason"]
    search_fields = ["id", "tx_hash", "address", "from_address", "platform_id", "merchant__name"]
    date_hierarchy = "created_at"
    list_select_related = ["merchant"]
    readonly_fields = ["webhooks", "transfers"]
    actions = ["release", "refund"]

    @admin.display(description="webhook events")
    def webhooks(self, deposit: CryptoDeposit) -> str:
        return _webhooks("crypto_deposit", str(deposit.id))

    @admin.display(description="wallet transfers")
    def transfers(self, deposit: CryptoDeposit) -> str:
        return _transfers("crypto_deposit", str(deposit.id))

    @admin.action(description="Release frozen deposits (credit them)", permissions=["decide"])
    def release(self, request: HttpRequest, queryset: QuerySet[CryptoDeposit]) -> None:
        _apply(
            self, request, queryset, lambda pk: crypto_deposit_release(deposit_id=pk), "Released"
        )

    @admin.action(description="Refund frozen deposits (never credited)", permissions=["decide"])
    def refund(self, request: HttpRequest, queryset: QuerySet[CryptoDeposit]) -> None:
        _apply(self, request, queryset, lambda pk: crypto_deposit_refund(deposit_id=pk), "Refunded")


@admin.register(CryptoWithdrawal)
class CryptoWithdrawalAdmin(ReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "amount",
        "chain",
        "token",
        merchant_column,
        "platform_id",
        "source",
        "reason",
        "created_at",
    ]
    list_filter = ["status", "source", "chain", "token", "reason"]
    search_fields = ["id", "request_id", "tx_hash", "address", "platform_id", "merchant__name"]
    date_hierarchy = "created_at"
    list_select_related = ["merchant"]
    readonly_fields = ["webhooks", "transfers"]
    actions = ["approve", "reject", "cancel"]

    @admin.display(description="amount (USD)", ordering="amount_cents")
    def amount(self, withdrawal: CryptoWithdrawal) -> str:
        return f"{withdrawal.amount:.2f}"

    @admin.display(description="webhook events")
    def webhooks(self, withdrawal: CryptoWithdrawal) -> str:
        return _webhooks("crypto_withdrawal", str(withdrawal.id))

    @admin.display(description="wallet transfers")
    def transfers(self, withdrawal: CryptoWithdrawal) -> str:
        return _transfers("crypto_withdrawal", str(withdrawal.id))

    @admin.action(description="Approve cashouts in review", permissions=["decide"])
    def approve(self, request: HttpRequest, queryset: QuerySet[CryptoWithdrawal]) -> None:
        _apply(
            self,
            request,
            queryset,
            lambda pk: crypto_withdrawal_review(withdrawal_id=pk, approve=True),
            "Approved",
        )

    @admin.action(description="Reject cashouts in review (refund)", permissions=["decide"])
    def reject(self, request: HttpRequest, queryset: QuerySet[CryptoWithdrawal]) -> None:
        note = f"rejected by {request.user.get_username()}"
        _apply(
            self,
            request,
            queryset,
            lambda pk: crypto_withdrawal_review(withdrawal_id=pk, approve=False, note=note),
            "Rejected",
        )

    @admin.action(description="Cancel cashouts not yet approved (refund)", permissions=["decide"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[CryptoWithdrawal]) -> None:
        note = f"cancelled by {request.user.get_username()}"
        _apply(
            self,
            request,
            queryset,
            lambda pk: crypto_withdrawal_cancel(withdrawal_id=pk, note=note),
            "Cancelled",
        )


def _sweep_allocation(allocation: AddressAllocation, staff: Staff) -> str:
    return allocation_sweep_request(allocation=allocation, staff=staff)


def _sweep_account(account: SolanaTokenAccount, staff: Staff) -> str:
    return allocation_sweep_request(allocation=account.allocation, staff=staff, accounts=[account])


SWEEP_EXPLAINED = (
    "A worker asks the chain for the balance and moves the tokens to the hot wallet now, "
    "whatever the amount (the schedule waits for a minimum balance), topping up the gas from "
    "the hot wallet when the address has too little. No USD moves: the tokens were credited "
    "when they arrived. The sweeps are listed under EVM and Solana sweeps."
)
SWEEP_ADDRESS = StaffOperation(
    name="sweep",
    label="Sweep to the hot wallet",
    permission="crypto.sweep_address",
    explanation=SWEEP_EXPLAINED,
    perform=_sweep_allocation,
)
SWEEP_ACCOUNT = StaffOperation(
    name="sweep",
    label="Sweep to the hot wallet",
    permission="crypto.sweep_address",
    explanation=SWEEP_EXPLAINED,
    perform=_sweep_account,
    offered=lambda account: account.status == SolanaTokenAccount.Status.ACTIVE,
)


class StaffReadOnlyAdmin(StaffOperationsAdmin, ReadOnlyAdmin):
    """A read-only page whose rows staff act on through services."""


@admin.register(AddressAllocation)
class AddressAllocationAdmin(StaffReadOnlyAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        merchant_column,
        "platform_id",
        "evm_address",
        "solana_owner",
        "created_at",
    ]
    search_fields = ["platform_id", "evm_address", "solana_owner", "merchant__name"]
    list_select_related = ["merchant"]
    staff_operations = (SWEEP_ADDRESS,)
    staff_subject = "address_allocation"


class ScanBehindFilter(admin.SimpleListFilter):
    """Accounts whose scan is overdue past the console's lag (the home links here)."""

    title = "scan"
    parameter_name = "scan"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("behind", "behind")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[SolanaTokenAccount]
    ) -> QuerySet[SolanaTokenAccount]:
        if self.value() == "behind":
            return queryset.filter(cursor__in=solana_accounts_behind(now=clock.now()))
        return queryset


@admin.register(SolanaTokenAccount)
class SolanaTokenAccountAdmin(StaffReadOnlyAdmin):
    # No creation time of their own: the accounts that changed last come first.
    ordering = ("-updated_at", "-id")
    list_display = [
        "address",
        "allocation",
        "token",
        "status",
        "close_pending",
        "scanned_up_to",
        "scanned_at",
        "updated_at",
    ]
    list_filter = ["status", "token", "close_pending", ScanBehindFilter]
    search_fields = ["address", "allocation__solana_owner", "allocation__platform_id"]
    list_select_related = ["allocation", "cursor"]
    staff_operations = (SWEEP_ACCOUNT,)

    @admin.display(description="scanned up to (signature)")
    def scanned_up_to(self, account: SolanaTokenAccount) -> str:
        cursor = getattr(account, "cursor", None)
        return cursor.last_signature if cursor is not None else ""

    @admin.display(description="last scan")
    def scanned_at(self, account: SolanaTokenAccount) -> object:
        cursor = getattr(account, "cursor", None)
        return cursor.scanned_at if cursor is not None else None


class AuditedAdmin(admin.ModelAdmin):
    """Plain edits; Django's admin logs every add, change and delete."""


@admin.register(MerchantCryptoPolicy)
class MerchantCryptoPolicyAdmin(AuditedAdmin):
    # One per merchant, keyed by it: the newest merchants' policies first.
    ordering = ("-merchant__created_at", "-merchant")
    list_display = [
        "__str__",
        merchant_column,
        "deposit_review_above_cents",
        "withdraw_review_above_cents",
    ]
    list_select_related = ["merchant"]


@admin.register(FlaggedAddress)
class FlaggedAddressAdmin(AuditedAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["address", "reason", "created_at"]
    search_fields = ["address", "reason"]
