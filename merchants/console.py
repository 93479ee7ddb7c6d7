"""The merchant in the staff console, as every app's admin uses it: its column in their lists and
the sections of its own page. Each app fills the section of the data it owns (balances from
wallet, recent trades from trading); the apps above merchants register theirs when Django loads
their admin modules, so merchants imports none of them."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from merchants.models import Merchant
from merchants.webhooks.selectors import webhook_health_get

RenderPanel = Callable[[Merchant], SafeString]


@dataclass(frozen=True)
class MerchantPanel:
    slug: str
    title: str
    position: int
    render: RenderPanel


# Sections of the merchant's page, by position (merchant_panel registers them).
MERCHANT_PANELS: list[MerchantPanel] = []


def merchant_panel(*, slug: str, title: str, position: int) -> Callable[[RenderPanel], RenderPanel]:
    """Registers ``render(merchant) -> HTML`` as a section of the merchant's change page."""

    def register(render: RenderPanel) -> RenderPanel:
        MERCHANT_PANELS.append(MerchantPanel(slug, title, position, render))
        MERCHANT_PANELS.sort(key=lambda panel: panel.position)
        return render

    return register


def merchant_link(merchant: Merchant) -> SafeString:
    url = reverse("admin:merchants_merchant_change", args=[merchant.pk])
    return format_html('<a href="{}">{}</a>', url, merchant.name)


@admin.display(description="merchant", ordering="merchant__name")
def merchant_column(row: Any) -> str:
    """A list column: the row's merchant by name (its id is on the merchant's page), linked.
    Rows without one (the service's own accounts) say so."""
    return "the service" if row.merchant is None else merchant_link(row.merchant)


def changelist_of(model: str, merchant: Merchant, **filters: str) -> str:
    """The admin list of ``model`` (``app_label.model_name``) cut to one merchant's rows."""
    app_label, model_name = model.split(".")
    query = "&".join(
        [f"merchant__id__exact={merchant.pk}", *(f"{k}={v}" for k, v in filters.items())]
    )
    return f"{reverse(f'admin:{app_label}_{model_name}_changelist')}?{query}"


@merchant_panel(slug="api-keys", title="API keys", position=20)
def api_keys_panel(merchant: Merchant) -> SafeString:
    # Prefix, scopes and dates only: the key itself is shown once, at creation, and never kept.
    keys = merchant.api_keys.order_by("-created_at", "-id")
    return render_to_string(
        "admin/merchants/merchant/api_keys.html",
        {
            "keys": keys,
            "all_keys": changelist_of("merchants.apikey", merchant),
            "add_key": f"{reverse('admin:merchants_apikey_add')}?merchant={merchant.pk}",
        },
    )


@merchant_panel(slug="webhooks", title="Webhook health", position=40)
def webhook_health_panel(merchant: Merchant) -> SafeString:
    return render_to_string(
        "admin/merchants/merchant/webhook_health.html",
        {
            "merchant": merchant,
            "health": webhook_health_get(merchant=merchant),
            "pending_events": changelist_of(
                "merchants.webhookevent", merchant, status__exact="pending"
            ),
            "failed_events": changelist_of(
                "merchants.webhookevent", merchant, status__exact="failed"
            ),
        },
    )
