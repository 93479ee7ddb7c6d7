"""The one clock of the service. In the sandbox it can be moved forward for every process."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from core.selectors import service_settings_get, service_settings_last_seen


def now() -> datetime:
    if not settings.SANDBOX:
        return timezone.now()
    return timezone.now() + timedelta(seconds=service_settings_get().clock_offset_seconds)


def now_last_seen() -> datetime | None:
    """The service clock by the switches this process read last, without I/O (None: it has read
    none yet): for a guess made before the request's own read (``merchants.views``)."""
    if not settings.SANDBOX:
        return timezone.now()
    switches = service_settings_last_seen()
    if switches is None:
        return None
    return timezone.now() + timedelta(seconds=switches.clock_offset_seconds)
