from datetime import timedelta
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from core import clock
from core.context import request_memo_forget
from core.models import ClockShift, ServiceSettings, StaffAction
from core.selectors import SETTINGS_CACHE_KEY
from core.staff import Staff


def service_settings_update(*, maintenance: bool | None = None) -> ServiceSettings:
    with transaction.atomic():
        row, _ = ServiceSettings.objects.select_for_update(no_key=True).get_or_create(
            id=ServiceSettings.SINGLETON_ID
        )
        if maintenance is not None:
            row.maintenance = maintenance
        row.save()
    service_settings_cache_clear()
    return row


def service_settings_cache_clear() -> None:
    """Drop the cached switches once the change is committed, so no reader re-caches old ones."""
    request_memo_forget(SETTINGS_CACHE_KEY)
    transaction.on_commit(lambda: cache.delete(SETTINGS_CACHE_KEY))


def service_clock_advance(*, minutes: int) -> ServiceSettings:
    """Sandbox only: move the service clock forward for every process."""
    with transaction.atomic():
        row, _ = ServiceSettings.objects.select_for_update(no_key=True).get_or_create(
            id=ServiceSettings.SINGLETON_ID
        )
        row.clock_offset_seconds += minutes * 60
        row.save()
        # Times stamped from now on run this far ahead (the trade pages tell them in real time).
        ClockShift.objects.update_or_create(
            service_from=timezone.now() + timedelta(seconds=row.clock_offset_seconds),
            defaults={"offset_seconds": row.clock_offset_seconds},
        )
    service_settings_cache_clear()
    return row


def staff_action_record(
    *, staff: Staff, action: str, subject_type: str, subject_id: str, **detail: Any
) -> StaffAction:
    """The record of a staff action, written by the service that does it in the transaction of
    its effect (so an action that failed leaves none)."""
    return StaffAction.objects.create(
        user=staff.user,
        action=action,
        subject_type=subject_type,
        subject_id=subject_id,
        reason=staff.reason,
        detail=detail,
        created_at=clock.now(),
    )
