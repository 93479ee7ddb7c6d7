"""The one clock of the service. In the sandbox it can be moved forward for every process."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone


def now() -> datetime:
    if not settings.SANDBOX:
        return timezone.now()
    from trading.selectors import service_settings_get

    return timezone.now() + timedelta(seconds=service_settings_get().clock_offset_seconds)
