"""Each supplier account's row: whether it may be used now (staff's switch, a pause after a 429
or maintenance), its health (last success, last failure, failures in a row) and the newest few
errors staff see in the admin."""

from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from django.db.models import F

from core import clock
from trading.marketplace.suppliers.base import SupplierRefusedError, SupplierUnavailableError
from trading.models import Supplier, SupplierError

ERRORS_KEPT = 20
# A 429 or a maintenance answer without Retry-After pauses the supplier this long.
DEFAULT_PAUSE = timedelta(seconds=30)
MAX_PAUSE = timedelta(minutes=10)

T = TypeVar("T")


def supplier_row(name: str) -> Supplier:
    row, _ = Supplier.objects.get_or_create(name=name)
    return row


def supplier_usable(row: Supplier) -> bool:
    """Staff's switch is on and no pause holds: a pause is the supplier's own rate limit, kept
    in real time (the sandbox clock never ends it early)."""
    return row.enabled and (row.paused_until is None or row.paused_until <= clock.real_now())


def supplier_ok(name: str) -> None:
    Supplier.objects.filter(name=name).update(last_ok_at=clock.now(), consecutive_failures=0)


def supplier_failed(name: str, operation: str, exc: Exception) -> None:
    """Record the failure; a rate limit or maintenance answer pauses the supplier."""
    now = clock.now()
    changes: dict[str, object] = {
        "last_error_at": now,
        "consecutive_failures": F("consecutive_failures") + 1,
    }
    if isinstance(exc, SupplierUnavailableError) and (
        exc.retry_after is not None or "429" in str(exc) or "maintenance" in str(exc)
    ):
        pause = timedelta(seconds=exc.retry_after) if exc.retry_after else DEFAULT_PAUSE
        changes["paused_until"] = clock.real_now() + min(pause, MAX_PAUSE)
    supplier_row(name)
    Supplier.objects.filter(name=name).update(**changes)
    SupplierError.objects.create(
        supplier_id=name, at=now, operation=operation, message=str(exc)[:500]
    )
    stale = SupplierError.objects.filter(supplier_id=name).order_by("-at", "-id")[ERRORS_KEPT:]
    SupplierError.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()


def supplier_call(name: str, operation: str, call: Callable[[], T]) -> T:
    """Run one call to the supplier, recording its health either way (errors re-raised; a
    refusal is an answer, so the supplier is healthy)."""
    try:
        answer = call()
    except SupplierRefusedError:
        supplier_ok(name)
        raise
    except Exception as exc:
        supplier_failed(name, operation, exc)
        raise
    supplier_ok(name)
    return answer
