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
from django.core.cache import cache
from django.utils import timezone

from core.context import request_memo
from core.models import ClockShift
from core.selectors import service_settings_get


def now() -> datetime:
    if not settings.SANDBOX:
        return timezone.now()
    return timezone.now() + timedelta(seconds=service_settings_get().clock_offset_seconds)


def real_now() -> datetime:
    """Real time, whatever the sandbox clock says: one merchant's ``/sandbox/clock/advance``
    never ends another's lease, key or pause early."""
    return timezone.now()


@dataclass(frozen=True)
class ClockShifts:
    """How far ahead of real time the service clock ran, from which service time on (oldest
    first; empty outside the sandbox, where the two are one). The clock only moves forward, so a
    service time belongs to the last shift that began at or before it, and so does a real time
    (a shift began at ``service_from - offset`` in real time); the service time is increasing in
    real time, and a window of real time is a window of service time."""

    shifts: tuple[tuple[datetime, int], ...] = ()

    def offset_at(self, service_time: datetime) -> int:
        starts = [start for start, _ in self.shifts]
        index = bisect_right(starts, service_time)
        return self.shifts[index - 1][1] if index else 0

    def real(self, service_time: datetime) -> datetime:
        """The real time at which the service clock showed ``service_time``."""
        return service_time - timedelta(seconds=self.offset_at(service_time))

    def service_time_at(self, real: datetime) -> datetime:
        """What the service clock showed at real time ``real``: what was stamped after ``real``
        is exactly what is stamped after this."""
        starts = [start - timedelta(seconds=offset) for start, offset in self.shifts]
        index = bisect_right(starts, real)
        return real + timedelta(seconds=self.shifts[index - 1][1] if index else 0)


# Kept under the offset they lead to: the row of the last shift is committed with that offset
# (``core.services.service_clock_advance``), so whoever reads the offset finds them all; and a
# new offset is a new key, nothing to clear. A day: the keys of old offsets go.
_SHIFTS_KEY = "core-clock-shifts:{offset}"
_SHIFTS_KEPT_SECONDS = 24 * 3600


def clock_shifts() -> ClockShifts:
    """The sandbox's moves of the clock (a handful: one per advance), once per request or task,
    from the shared cache: no query outside the sandbox, nor in one whose clock never moved, and
    one a day per offset otherwise."""
    if not settings.SANDBOX:
        return ClockShifts()
    offset = service_settings_get().clock_offset_seconds
    if not offset:  # never moved: it moves only forward
        return ClockShifts()
    key = _SHIFTS_KEY.format(offset=offset)
    return request_memo(key, lambda: _clock_shifts_load(key))


def _clock_shifts_load(key: str) -> ClockShifts:
    kept = cache.get(key)
    if isinstance(kept, ClockShifts):
        return kept
    rows = ClockShift.objects.order_by("service_from").values_list("service_from", "offset_seconds")
    shifts = ClockShifts(tuple(rows))
    cache.set(key, shifts, timeout=_SHIFTS_KEPT_SECONDS)
    return shifts
