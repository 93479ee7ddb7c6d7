"""Daily statements in the staff console (docs/admin.md): a merchant's day from the ledger's
postings (``wallet_statement``), on a page and as CSV for finance. Routed by the accounts' admin
(``statement_urls``) and linked from the merchant's page."""

import csv
from datetime import timedelta
from decimal import Decimal
from io import StringIO

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from core import clock
from merchants.console import merchant_panel
from merchants.models import Merchant
from wallet.selectors import Statement, wallet_statement

VIEW_STATEMENTS = "wallet.view_account"
CSV_COLUMNS = [
    "merchant",
    "day",
    "line",
    "time",
    "account",
    "kind",
    "reference",
    "memo",
    "transfer",
    "amount",
    "balance",
]
# A cell a spreadsheet would take for a formula (OWASP, "CSV Injection") is written as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class StatementForm(forms.Form):
    merchant = forms.ModelChoiceField(queryset=Merchant.objects.order_by("name"))
    day = forms.DateField(help_text="UTC, YYYY-MM-DD")


def _text(value: str) -> str:
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _money(amount: Decimal) -> str:
    return f"{amount:.2f}"


def statement_csv(statement: Statement) -> str:
    """Opening rows (one per account), each movement with the account's balance after it,
    closing rows: what finance reconciles against the ledger."""
    out = StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    head = [str(statement.merchant.pk), statement.day.isoformat()]
    for account in statement.accounts:
        at = statement.starts.isoformat()
        writer.writerow(
            [*head, "opening", at, account.account, "", "", "", "", "", _money(account.opening)]
        )
    for line in statement.lines:
        writer.writerow(
            [
                *head,
                "movement",
                line.at.isoformat(),
                line.account,
                _text(line.kind),
                _text(line.reference),
                _text(line.memo),
                str(line.transfer_id),
                _money(line.amount),
                _money(line.balance),
            ]
        )
    for account in statement.accounts:
        at = statement.ends.isoformat()
        writer.writerow(
            [*head, "closing", at, account.account, "", "", "", "", "", _money(account.closing)]
        )
    return out.getvalue()


def statement_view(request: HttpRequest) -> HttpResponse:
    """``?merchant=<id>&day=YYYY-MM-DD`` (``&format=csv`` to download)."""
    if not request.user.has_perm(VIEW_STATEMENTS):
        raise PermissionDenied
    form = StatementForm(request.GET or None)
    statement = wallet_statement(**form.cleaned_data) if form.is_valid() else None
    if statement is not None and request.GET.get("format") == "csv":
        name = f"statement-{statement.merchant.pk}-{statement.day.isoformat()}.csv"
        response = HttpResponse(statement_csv(statement), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    context = {
        **admin.site.each_context(request),
        "title": "Daily statement",
        "form": form,
        "statement": statement,
        "csv_url": f"{request.path}?{urlencode({**request.GET.dict(), 'format': 'csv'})}",
    }
    return TemplateResponse(request, "admin/wallet/statement.html", context)


def statement_urls(site: admin.AdminSite) -> list[URLPattern]:
    return [path("statement/", site.admin_view(statement_view), name="wallet_statement")]


def statement_url(merchant: Merchant, day: object) -> str:
    query = urlencode({"merchant": str(merchant.pk), "day": str(day)})
    return f"{reverse('admin:wallet_statement')}?{query}"


@merchant_panel(slug="statements", title="Daily statements", position=15)
def statements_panel(merchant: Merchant) -> SafeString:
    today = clock.now().date()
    return render_to_string(
        "admin/wallet/merchant_statements.html",
        {
            "yesterday": statement_url(merchant, today - timedelta(days=1)),
            "today": statement_url(merchant, today),
            "pick": format_html("{}?merchant={}", reverse("admin:wallet_statement"), merchant.pk),
        },
    )
