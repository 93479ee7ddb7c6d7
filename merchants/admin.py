import ipaddress
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from core import clock
from core.admin.staff import StaffOperation, StaffOperationsAdmin
from core.admin_board import AttentionRow, board_section
from core.admin_display import IndentedJSONField, ReadOnlyInline, json_readonly, readable_fields
from core.staff import Staff
from merchants.admin_rotation import rotate_api_key, rotate_webhook_secret
from merchants.console import MERCHANT_PANELS, merchant_column
from merchants.models import ApiKey, ApiSecret, Client, Merchant, Scope
from merchants.selectors import (
    merchants_callbacks_disabled,
    merchants_webhooks_failed,
    merchants_webhooks_retrying,
)
from merchants.services import (
    api_key_create,
    api_key_revoke,
    api_secret_rotate,
    callers_changed,
    merchant_create,
    webhook_event_resend_by_staff,
)
from merchants.webhooks.models import WebhookDelivery, WebhookEvent


def _failed_since() -> Any:
    return clock.now() - timedelta(days=settings.CONSOLE_WEBHOOK_FAILED_DAYS)


# What the home counts of merchants' webhooks, and the list filter it links to.
WEBHOOK_TROUBLE = {
    "retrying": ("retrying a failed delivery", merchants_webhooks_retrying),
    "failed": ("given up on lately", lambda: merchants_webhooks_failed(since=_failed_since())),
    "disabled": ("callback disabled (410 Gone)", merchants_callbacks_disabled),
}


class WebhookTroubleFilter(admin.SimpleListFilter):
    title = "webhooks"
    parameter_name = "webhooks"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(key, label) for key, (label, _) in WEBHOOK_TROUBLE.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> QuerySet[Merchant]:
        if self.value() in WEBHOOK_TROUBLE:
            return queryset & WEBHOOK_TROUBLE[str(self.value())][1]()
        return queryset


@board_section(slug="webhooks", title="Merchants' webhooks", position=20)
def webhook_trouble() -> list[AttentionRow]:
    listing = reverse("admin:merchants_merchant_changelist")
    notes = {
        "retrying": "merchants whose event waits for its next attempt",
        "failed": f"merchants with an event whose every retry failed, within "
        f"{settings.CONSOLE_WEBHOOK_FAILED_DAYS} days",
        "disabled": "merchants sent nothing until a URL is set again",
    }
    rows = []
    for key, (label, merchants) in WEBHOOK_TROUBLE.items():
        count = merchants().count()
        rows.append(
            AttentionRow(
                label=label,
                count=count,
                url=f"{listing}?webhooks={key}",
                alert=count > 0,
                note=notes[key],
            )
        )
    return rows


@admin.register(Merchant)
class MerchantAdmin(admin.ModelAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["name", "id", "status", "is_verified", "instant_deposits_enabled", "created_at"]
    list_filter = ["status", WebhookTroubleFilter, "is_verified", "instant_deposits_enabled"]
    search_fields = ["name", "id"]
    exclude = ["webhook_secret", "previous_webhook_secret"]
    # Setting a callback URL sends a test event: network I/O that must not run inside the
    # admin's transaction, so it is done with `manage.py set_callback_url`.
    readonly_fields = ["callback_url", "callback_disabled_at", "previous_webhook_secret_expires_at"]
    actions = ["rotate_api_secret", rotate_webhook_secret]
    formfield_overrides = {models.JSONField: {"form_class": IndentedJSONField}}

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Merchant | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context["merchant_panels"] = [
                {"slug": panel.slug, "title": panel.title, "html": panel.render(obj)}
                for panel in MERCHANT_PANELS
            ]
        return super().render_change_form(request, context, add, change, form_url, obj)

    # Wallets, trades and fundings keep the merchant; staff disable it (status) instead.
    def has_delete_permission(self, request: HttpRequest, obj: Merchant | None = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: Merchant, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            callers_changed()
            return
        # A new merchant gets its webhook secret and first API secret as create_merchant's do;
        # the form's other fields (fees, margin, status, ...) are then saved onto that row.
        created = merchant_create(
            name=obj.name,
            is_verified=obj.is_verified,
            instant_deposits_enabled=obj.instant_deposits_enabled,
        )
        obj.pk, obj.webhook_secret, obj.created_at = (
            created.pk,
            created.webhook_secret,
            created.created_at,
        )
        obj._state.adding = False
        super().save_model(request, obj, form, change)
        messages.warning(
            request, f"Webhook secret (shown once, copy it now): {created.webhook_secret}"
        )

    @admin.action(
        description="Rotate the API secret (old tokens stay valid for 24 hours)",
        permissions=["change"],
    )
    def rotate_api_secret(self, request: HttpRequest, queryset: QuerySet[Merchant]) -> None:
        for merchant in queryset:
            api_secret_rotate(merchant=merchant)
            self.log_change(request, merchant, "Rotated the API secret.")
        self.message_user(request, f"Rotated {queryset.count()} API secret(s).")


class ApiKeyForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, initial=[Scope.CORE_ACCESS]
    )
    ip_whitelist = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One CIDR per line; empty allows every address.",
    )

    class Meta:
        model = ApiKey
        fields = ["merchant", "name", "is_admin", "scopes", "ip_whitelist"]

    def clean_ip_whitelist(self) -> list[str]:
        cidrs = [line.strip() for line in self.cleaned_data["ip_whitelist"].split() if line.strip()]
        for cidr in cidrs:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError as exc:
                raise forms.ValidationError(f"{cidr}: {exc}") from exc
        return cidrs


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    form = ApiKeyForm
    ordering = ("-created_at", "-id")
    list_display = [
        "prefix",
        merchant_column,
        "name",
        "is_admin",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
        "expires_at",
    ]
    list_filter = ["is_admin", "revoked_at"]
    search_fields = ["prefix", "merchant__name", "name"]
    list_select_related = ["merchant"]
    actions = ["revoke", rotate_api_key]

    # Keys are revoked, not deleted, so their history (created, last used, revoked) stays.
    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False

    def get_readonly_fields(
        self, request: HttpRequest, obj: ApiKey | None = None
    ) -> tuple[str, ...]:
        if obj is None:
            return ()
        return (
            "merchant",
            "prefix",
            "is_admin",
            "scopes",
            "ip_whitelist",
            "created_at",
            "last_used_at",
            "revoked_at",
            "expires_at",
        )

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("merchant", "name", "is_admin", "scopes", "ip_whitelist")
        return ("name", *self.get_readonly_fields(request, obj))

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is not None:
            kwargs["form"] = forms.ModelForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(
        self, request: HttpRequest, obj: ApiKey, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        key, raw_key = api_key_create(
            merchant=form.cleaned_data["merchant"],
            scopes=form.cleaned_data["scopes"],
            ip_whitelist=form.cleaned_data["ip_whitelist"],
            is_admin=form.cleaned_data["is_admin"],
            name=form.cleaned_data["name"],
        )
        obj.pk = key.pk
        obj.prefix = key.prefix
        messages.warning(request, f"New API key (shown once, copy it now): {raw_key}")

    @admin.action(description="Revoke selected keys (takes effect at once)", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            api_key_revoke(api_key=key)
            self.log_change(request, key, "Revoked.")
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


@admin.register(ApiSecret)
class ApiSecretAdmin(admin.ModelAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["id", merchant_column, "created_at", "expires_at"]
    list_select_related = ["merchant"]
    readonly_fields = ["merchant", "created_at"]
    exclude = ["secret"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: ApiSecret, form: forms.ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        callers_changed()


@admin.register(Client)
class ClientAdmin(admin.ModelAdmin):
    ordering = ("-created_at", "-id")
    list_display = ["platform_id", merchant_column, "client_id", "kyc_level", "updated_at"]
    list_select_related = ["merchant"]
    search_fields = ["platform_id", "client_id", "kyc_hash"]
    list_filter = ["kyc_level"]
    readonly_fields = [f.name for f in Client._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


DELIVERY_FIELDS = (
    "attempt",
    "created_at",
    "url",
    "status_code",
    "latency_ms",
    "error",
    "response_excerpt",
)


class WebhookDeliveryInline(ReadOnlyInline):
    model = WebhookDelivery
    fields = DELIVERY_FIELDS
    readonly_fields = DELIVERY_FIELDS


def _resend(event: WebhookEvent, staff: Staff) -> str:
    webhook_event_resend_by_staff(event=event, staff=staff)
    return "re-sending (same id and body)."


RESEND = StaffOperation(
    name="resend",
    label="Re-send the webhook",
    permission="merchants.resend_webhook",
    explanation=(
        "The event goes to the merchant's callback URL again with the same id and body and a "
        "fresh retry budget; its earlier attempts stay listed. Approval callbacks are never "
        "re-sent (the withdrawal has been decided)."
    ),
    perform=_resend,
    offered=lambda event: not event.is_approval and event.status != WebhookEvent.Status.PENDING,
)


@admin.register(WebhookEvent)
class WebhookEventAdmin(StaffOperationsAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "type",
        "attempts",
        merchant_column,
        "created_at",
        "next_attempt_at",
    ]
    list_filter = ["status", "is_approval", "subject_type"]
    search_fields = ["id", "subject_id", "merchant__name"]
    inlines = [WebhookDeliveryInline]
    fields = readonly_fields = readable_fields(WebhookEvent)
    payload_json = json_readonly("payload")
    list_select_related = ["merchant"]
    staff_operations = (RESEND,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    # The outbox is the record of what merchants were told; events are re-sent, never deleted.
    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
