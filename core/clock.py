"""The service's two clocks (docs/decisions.md, "Clocks").

``now()`` is the service clock: the time of the trading world (trade deadlines, holds and
protection, autoCancel, cancel windows, approval timeouts, retries and sweeps, caches, the
sandbox's simulated outside world). In the sandbox it runs ahead of real time by
``ServiceSettings.clock_offset_seconds``, which ``POST /sandbox/clock/advance`` moves forward for
every merchant at once.

``real_now()`` is real time, which nothing moves: whatever guards money or fairness reads it
(Idempotency-Keys and their leases, delivery and send leases, a provider's pause after a 429,
the replay window of a provider's notifications, times an outside system compares with its own
clock). Outside the sandbox the two are the same."""

from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from core.models import ClockShift
from core.selectors import service_settings_get, service_settings_last_seen


def now() -> datetime:
    if not settings.SANDBOX:
        return timezone.now()
    return timezone.now() + timedelta(seconds=service_settings_get().clock_offset_seconds)


def real_now() -> datetime:
    """Real time, whatever the sandbox clock says: one merchant's ``/sandbox/clock/advance``
    never ends another's lease, key or pause early."""
    return timezone.now()


def now_last_seen() -> datetime | None:
    """The service clock by the switches this process read last, without I/O (None: it has read
    none yet): for a guess made before the request's own read (``merchants.views``)."""
    if not settings.SANDBOX:
        return timezone.now()
    switches = service_settings_last_seen()
    if switches is None:
        return None
    return timezone.now() + timedelta(seconds=switches.clock_offset_seconds)


@dataclass(frozen=True)
class ClockShifts:
    """How far ahead of real time the service clock ran, from which service time on (oldest
    first; empty outside the sandbox, where the two are one). The clock only moves forward, so a
    service time belongs to the last shift that began at or before it."""

    shifts: tuple[tuple[datetime, int], ...] = ()

    def offset_at(self, service_time: datetime) -> int:
        starts = [start for start, _ in self.shifts]
        index = bisect_right(starts, service_time)
        return self.shifts[index - 1][1] if index else 0

    def real(self, service_time: datetime) -> datetime:
        """The real time at which the service clock showed ``service_time``."""
        return service_time - timedelta(seconds=self.offset_at(service_time))


def clock_shifts() -> ClockShifts:
    """The sandbox's moves of the clock (a handful: one per advance)."""
    if not settings.SANDBOX:
        return ClockShifts()
    rows = ClockShift.objects.order_by("service_from").values_list("service_from", "offset_seconds")
    return ClockShifts(tuple(rows))
