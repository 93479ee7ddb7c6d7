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


class ClockShift(models.Model):
    """Sandbox only: from ``service_from`` (a time on the service clock) on, the service clock ran
    ``offset_seconds`` ahead of real time. One row per move of the clock, so a time the service
    stamped can be told in real time however far the clock moved afterwards
    (``core.clock.ClockShifts``)."""

    service_from = models.DateTimeField(unique=True)
    offset_seconds = models.BigIntegerField()

    class Meta:
        ordering = ["service_from"]

    def __str__(self) -> str:
        return f"+{self.offset_seconds} s from {self.service_from:%Y-%m-%d %H:%M:%S}"


class StaffAction(models.Model):
    """What a staff member did from the console, to what, and why: written by the service that
    did it, in the transaction of its effect. ``subject_type`` and ``subject_id`` name the row
    acted on as webhooks name their subjects (``trade``, ``steam_bot``, ``address_allocation``,
    ...), so a trade's page shows the actions on it beside its events."""

    user = models.CharField(max_length=150, help_text="the staff user's name in the console")
    action = models.CharField(max_length=40)
    subject_type = models.CharField(max_length=32)
    subject_id = models.CharField(max_length=64)
    reason = models.CharField(max_length=500)
    detail = models.JSONField(default=dict, blank=True)
    # The service clock, as the events of the subject beside it.
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["subject_type", "subject_id", "created_at"])]

    def __str__(self) -> str:
        return f"{self.action} of {self.subject_type} {self.subject_id} by {self.user}"
