"""The staff console's rotations (docs/ops/rotation.md): each a plain admin action, listed on
the merchants' and the API keys' pages. The new secret or key is shown once, in the page's
message, and never written to the audit log."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.json import iso_ms
from merchants.models import ApiKey, Merchant
from merchants.rotation import ROTATION_OVERLAP, api_key_rotate, webhook_secret_rotate

HOURS = int(ROTATION_OVERLAP.total_seconds() // 3600)


@admin.action(
    description=f"Rotate the webhook secret (the old one signs beside it for {HOURS} hours)",
    permissions=["change"],
)
def rotate_webhook_secret(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Merchant]
) -> None:
    for merchant in queryset:
        rotated = webhook_secret_rotate(merchant=merchant)
        expires = rotated.previous_webhook_secret_expires_at
        until = iso_ms(expires) if expires else "now"
        modeladmin.log_change(
            request, merchant, f"Rotated the webhook secret; the old one signs until {until}."
        )
        modeladmin.message_user(
            request,
            f"{merchant.name}: new webhook secret (shown once, copy it now): "
            f"{rotated.webhook_secret}. The old one signs beside it until {until}.",
            messages.WARNING,
        )


@admin.action(
    description=f"Rotate the key (a new one; the old one works {HOURS} more hours)",
    permissions=["change"],
)
def rotate_api_key(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[ApiKey]
) -> None:
    for old in queryset.select_related("merchant"):
        try:
            key, raw_key = api_key_rotate(api_key=old)
        except ValueError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
            continue
        old.refresh_from_db()
        assert old.expires_at is not None
        until = iso_ms(old.expires_at)
        modeladmin.log_change(request, old, f"Rotated to {key.prefix}; works until {until}.")
        modeladmin.log_addition(request, key, f"Issued by the rotation of {old.prefix}.")
        modeladmin.message_user(
            request,
            f"{old.merchant.name}: new API key (shown once, copy it now): {raw_key}. "
            f"{old.prefix} keeps working until {until}.",
            messages.WARNING,
        )
