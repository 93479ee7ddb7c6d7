"""The staff console's money pages: fundings, wallet credits and debits, transfers between
merchants, and the audit log every staff action writes to (Django's admin LogEntry)."""

from typing import Any

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from core.admin_display import ReadOnlyAdmin
from ledger.forms import InternalTransferForm, WalletAdjustmentForm
from ledger.models import Funding
from ledger.services import funding_internal_transfer
from merchants.console import merchant_column
from merchants.models import Merchant
from wallet.selectors import wallet_balances
from wallet.services import InsufficientFundsError, wallet_admin_credit, wallet_admin_debit

MOVE_MONEY = "ledger.move_money"


def _short_by(merchant: Merchant) -> str:
    available = wallet_balances(merchant=merchant)["available"]
    return (
        f"{merchant.name} has {available} USD available; staff cannot take a spendable "
        "balance below zero."
    )


@admin.register(Funding)
class FundingAdmin(ReadOnlyAdmin):
    # Fundings move only with the money that causes them: the page is read-only.
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "amount_usd",
        "type",
        merchant_column,
        "fee",
        "chain",
        "token",
        "created_at",
        "completed_at",
    ]
    list_filter = ["type", "status", "chain", "token", "source_type"]
    search_fields = ["id", "merchant__name", "source_id", "txn_hash", "address"]
    date_hierarchy = "created_at"
    list_select_related = ["merchant"]
    change_list_template = "admin/ledger/funding/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "adjust/",
                self.admin_site.admin_view(self.adjust_view),
                name="ledger_funding_adjust",
            ),
            path(
                "transfer/",
                self.admin_site.admin_view(self.transfer_view),
                name="ledger_funding_transfer",
            ),
        ]
        return own + super().get_urls()

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        context = {**(extra_context or {}), "can_move_money": request.user.has_perm(MOVE_MONEY)}
        return super().changelist_view(request, context)

    def _staff_form(
        self, request: HttpRequest, form: Any, *, title: str, explanation: str
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": title,
            "explanation": explanation,
        }
        return TemplateResponse(request, "admin/ledger/funding/staff_form.html", context)

    def adjust_view(self, request: HttpRequest) -> HttpResponse:
        """A staff credit (money from outside) or debit (money out) of a spendable balance."""
        if not request.user.has_perm(MOVE_MONEY):
            raise PermissionDenied
        form = WalletAdjustmentForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            merchant, amount = form.cleaned_data["merchant"], form.cleaned_data["amount"]
            reason = form.cleaned_data["reason"]
            move = (
                wallet_admin_credit
                if form.cleaned_data["direction"] == WalletAdjustmentForm.CREDIT
                else wallet_admin_debit
            )
            try:
                # The audit entry is written with the money or not at all.
                with transaction.atomic():
                    posted = move(merchant=merchant, amount=amount, reason=reason)
                    self.log_change(
                        request, merchant, f"{posted.kind} {amount} USD ({posted.id}): {reason}"
                    )
            except InsufficientFundsError:
                form.add_error("amount", _short_by(merchant))
            else:
                self.message_user(request, f"{posted.kind} of {amount} USD to {merchant.name}.")
                return redirect("admin:ledger_funding_changelist")
        return self._staff_form(
            request,
            form,
            title="Credit or debit a wallet",
            explanation=(
                "Shown to the merchant as an ADMIN_CREDIT or ADMIN_DEBIT row of its ledger "
                "(GET /v1/ledger/transactions, also filtered by type=ADMIN_CREDIT or ADMIN_DEBIT)."
            ),
        )

    def transfer_view(self, request: HttpRequest) -> HttpResponse:
        """Spendable money from one merchant to another (an INTERNAL_TRANSFER on each side)."""
        if not request.user.has_perm(MOVE_MONEY):
            raise PermissionDenied
        form = InternalTransferForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            source, target = form.cleaned_data["source"], form.cleaned_data["target"]
            amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
            try:
                with transaction.atomic():
                    moved = funding_internal_transfer(
                        source=source, target=target, amount=amount, reason=reason
                    )
                    self.log_change(
                        request,
                        source,
                        f"INTERNAL_TRANSFER {amount} USD to {target} ({moved.id}): {reason}",
                    )
                    self.log_change(
                        request,
                        target,
                        f"INTERNAL_TRANSFER {amount} USD from {source} ({moved.id}): {reason}",
                    )
            except InsufficientFundsError:
                form.add_error("amount", _short_by(source))
            else:
                self.message_user(
                    request, f"Moved {amount} USD from {source.name} to {target.name}."
                )
                return redirect("admin:ledger_funding_changelist")
        return self._staff_form(
            request,
            form,
            title="Transfer between merchants",
            explanation="Both merchants see an INTERNAL_TRANSFER in their ledger (negative on "
            "the sender's side).",
        )


@admin.register(LogEntry)
class AuditLogAdmin(ReadOnlyAdmin):
    """Every staff action, as the admin recorded it. Nobody edits history."""

    list_display = [
        "action_time",
        "user",
        "content_type",
        "object_repr",
        "action_flag",
        "change_message",
    ]
    list_filter = ["action_flag", "content_type", "user"]
    search_fields = ["object_repr", "object_id", "change_message", "user__username"]
    date_hierarchy = "action_time"
    list_select_related = ["user", "content_type"]
    ordering = ("-action_time", "-id")
