"""The one clock of the service. In the sandbox it can be moved forward for every process."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from core.selectors import service_settings_get


def now() -> datetime:
    if not settings.SANDBOX:
        return timezone.now()
    return timezone.now() + timedelta(seconds=service_settings_get().clock_offset_seconds)
