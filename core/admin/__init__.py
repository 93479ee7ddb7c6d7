"""Core's pages of the staff console: the switches and the staff actions' record; and
``staff``, the staff actions every app's pages offer. The site itself, whose home is the
attention board, is ``core.admin_site`` (with ``core.admin_board``), outside this package:
Django builds the site before it imports the apps' admin modules, this one among them."""

from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest

from core.admin_display import ReadOnlyAdmin, json_readonly
from core.models import ServiceSettings, StaffAction
from core.services import service_settings_cache_clear


@admin.register(ServiceSettings)
class ServiceSettingsAdmin(admin.ModelAdmin):
    ordering = ("-updated_at", "-id")
    list_display = ["__str__", "maintenance", "updated_at"]
    readonly_fields = ["clock_offset_seconds", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not ServiceSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: ServiceSettings, form: ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        service_settings_cache_clear()


@admin.register(StaffAction)
class StaffActionAdmin(ReadOnlyAdmin):
    """Every action staff took through the services, with their reason. Nobody edits it."""

    ordering = ("-created_at", "-id")
    list_display = ["created_at", "user", "action", "subject_type", "subject_id", "reason"]
    list_filter = ["action", "subject_type", "user"]
    search_fields = ["subject_id", "user", "reason"]
    date_hierarchy = "created_at"
    fields = readonly_fields = (
        "created_at",
        "user",
        "action",
        "subject_type",
        "subject_id",
        "reason",
        "detail_json",
    )
    detail_json = json_readonly("detail")
