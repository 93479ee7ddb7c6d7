from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest

from core.models import ServiceSettings
from core.services import service_settings_cache_clear

# The service has no web site of its own; what staff look up beside the console is the API
# reference (what a merchant sent, what an error code means).
admin.site.site_url = "/docs/"


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
