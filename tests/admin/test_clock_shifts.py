"""A time the sandbox's service clock stamped is told in real time however far the clock moved
afterwards: each move is kept (``ClockShift``), and a time belongs to the shift in force when
it was stamped. Outside the sandbox the two clocks are one."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from core.admin_display import console_time
from core.clock import ClockShifts, clock_shifts
from core.models import ClockShift
from core.selectors import service_settings_get
from core.services import service_clock_advance

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


def test_a_time_belongs_to_the_shift_in_force_when_it_was_stamped():
    # 29 minutes ahead from 03:29 service time, 8 days more from 11:00 service time.
    shifts = ClockShifts(
        ((T0 + timedelta(minutes=29), 29 * 60), (T0 + timedelta(hours=8), 8 * 86400))
    )

    assert shifts.real(T0) == T0
    assert shifts.real(T0 + timedelta(minutes=40)) == T0 + timedelta(minutes=11)
    assert shifts.real(T0 + timedelta(hours=9)) == T0 + timedelta(hours=9) - timedelta(days=8)
    assert ClockShifts().real(T0) == T0


def test_a_real_time_tells_what_the_service_clock_showed_then():
    # Advanced 29 minutes at 03:00 real time, and 8 days more a day later.
    shifts = ClockShifts(
        (
            (T0 + timedelta(minutes=29), 29 * 60),
            (T0 + timedelta(days=9, minutes=29), 8 * 86400 + 29 * 60),
        )
    )

    assert shifts.service_time_at(T0 - timedelta(seconds=1)) == T0 - timedelta(seconds=1)
    assert shifts.service_time_at(T0) == T0 + timedelta(minutes=29)
    assert shifts.service_time_at(T0 + timedelta(hours=2)) == T0 + timedelta(hours=2, minutes=29)
    assert shifts.service_time_at(T0 + timedelta(days=1)) == T0 + timedelta(days=9, minutes=29)
    for real in (T0 - timedelta(hours=1), T0, T0 + timedelta(hours=23), T0 + timedelta(days=2)):
        assert shifts.real(shifts.service_time_at(real)) == real
    assert ClockShifts().service_time_at(T0) == T0


def test_the_shifts_are_read_once_per_offset_and_never_while_the_clock_never_moved(
    django_assert_num_queries, django_capture_on_commit_callbacks
):
    def advance(minutes: int) -> None:
        with django_capture_on_commit_callbacks(execute=True):  # the switches' cache refreshed
            service_clock_advance(minutes=minutes)
        service_settings_get()  # as every request reads them

    service_settings_get()
    with django_assert_num_queries(0):
        assert clock_shifts() == ClockShifts()
    advance(29)
    with django_assert_num_queries(1):
        clock_shifts()
    with django_assert_num_queries(0):
        assert [offset for _, offset in clock_shifts().shifts] == [29 * 60]
    advance(60)
    assert [offset for _, offset in clock_shifts().shifts] == [29 * 60, 89 * 60]


def test_each_advance_is_kept_and_the_console_shows_both_clocks(settings):
    before = timezone.now()
    service_clock_advance(minutes=29)
    service_clock_advance(minutes=60)

    assert list(ClockShift.objects.values_list("offset_seconds", flat=True)) == [29 * 60, 89 * 60]
    stamped = before + timedelta(minutes=89, seconds=10)  # stamped after both moves
    shifts = clock_shifts()
    assert shifts.real(stamped) == before + timedelta(seconds=10)
    shown = console_time(stamped)
    assert f'datetime="{(before + timedelta(seconds=10)).isoformat()}"' in shown
    assert "service clock" in shown
    assert "1 h 29 min ahead" in shown


def test_outside_the_sandbox_a_time_is_shown_once(settings):
    settings.SANDBOX = False
    service_clock_advance(minutes=29)

    assert "service clock" not in console_time(T0)
    assert clock_shifts().real(T0) == T0
