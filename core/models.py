from django.db import models


class ServiceSettings(models.Model):
    """The one row of switches staff flip in the admin."""

    SINGLETON_ID = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_ID, editable=False)
    maintenance = models.BooleanField(
        default=False, help_text="Refuse every API call with 1007 SYSTEM_MAINTENANCE (HTTP 503)."
    )
    clock_offset_seconds = models.BigIntegerField(
        default=0, help_text="Sandbox only: how far the service clock runs ahead of real time."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # The table trading created before the switches moved here (core/migrations/0001).
        db_table = "trading_servicesettings"
        verbose_name = "service settings"
        verbose_name_plural = "service settings"

    def __str__(self) -> str:
        return "Service settings"
