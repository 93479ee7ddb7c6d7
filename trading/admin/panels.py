"""Trading's sections of a merchant's page: its latest trades and its client risk policy."""

from dataclasses import fields
from decimal import Decimal, InvalidOperation

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from core.admin_display import json_block
from merchants.console import changelist_of, merchant_panel
from merchants.models import Merchant
from trading.models import Trade
from trading.risk import RiskPolicy

RECENT_TRADES = 10


@merchant_panel(slug="trades", title=f"Latest {RECENT_TRADES} trades", position=30)
def recent_trades_panel(merchant: Merchant) -> SafeString:
    trades = Trade.objects.filter(merchant=merchant).order_by("-created_at", "-id")
    return render_to_string(
        "admin/trading/merchant_trades.html",
        {
            "trades": trades[:RECENT_TRADES],
            "all_trades": changelist_of("trading.trade", merchant),
        },
    )


def _number(value: object) -> Decimal | None:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


@merchant_panel(slug="risk-policy", title="Client risk policy", position=50)
def risk_policy_panel(merchant: Merchant) -> SafeString:
    """Each number of the client collateral model as it applies to this merchant: its own
    override or the default. Keys the model does not know are ignored by it, so they are named."""
    overrides = merchant.risk_policy if isinstance(merchant.risk_policy, dict) else {}
    rows = [
        {
            "name": field.name,
            "value": _number(overrides[field.name]) if field.name in overrides else field.default,
            "overridden": field.name in overrides,
            "stored": overrides.get(field.name),
        }
        for field in fields(RiskPolicy)
    ]
    known = {row["name"] for row in rows}
    return render_to_string(
        "admin/trading/merchant_risk_policy.html",
        {
            "rows": rows,
            "ignored": sorted(set(overrides) - known),
            "stored": json_block(merchant.risk_policy),
        },
    )
