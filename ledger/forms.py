"""Staff forms of the console: wallet credits and debits, transfers between merchants."""

from decimal import Decimal
from typing import Any

from django import forms

from merchants.models import Merchant

# Funding amounts are 14 digits, 2 of them cents.
MAX_AMOUNT = Decimal("999999999999.99")


def _amount() -> forms.DecimalField:
    return forms.DecimalField(
        min_value=Decimal("0.01"),
        max_value=MAX_AMOUNT,
        max_digits=14,
        decimal_places=2,
        help_text="USD, in whole cents.",
    )


def _merchant(label: str) -> forms.ModelChoiceField:
    return forms.ModelChoiceField(queryset=Merchant.objects.order_by("name"), label=label)


def _reason() -> forms.CharField:
    return forms.CharField(
        max_length=200,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Required; kept with the wallet transfer and in the audit log.",
    )


class WalletAdjustmentForm(forms.Form):
    CREDIT = "credit"
    DEBIT = "debit"

    merchant = _merchant("Merchant")
    direction = forms.ChoiceField(
        choices=[
            (CREDIT, "Credit: money in, to the spendable balance"),
            (DEBIT, "Debit: money out of the spendable balance"),
        ],
        widget=forms.RadioSelect,
    )
    amount = _amount()
    reason = _reason()


class InternalTransferForm(forms.Form):
    source = _merchant("From merchant")
    target = _merchant("To merchant")
    amount = _amount()
    reason = _reason()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        source, target = cleaned.get("source"), cleaned.get("target")
        if source is not None and source == target:
            self.add_error("target", "Choose another merchant than the sender.")
        return cleaned
