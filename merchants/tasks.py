from celery import shared_task

from core import clock
from merchants.ratelimits import rate_limit_windows_prune
from merchants.services import idempotent_requests_prune


@shared_task(name="merchants.prune_rate_limit_windows", time_limit=60)
def prune_rate_limit_windows() -> int:
    return rate_limit_windows_prune()


@shared_task(name="merchants.prune_idempotent_requests", time_limit=60)
def prune_idempotent_requests() -> int:
    """Idempotency keys older than 24 hours (their answers are no longer replayed)."""
    return idempotent_requests_prune(now=clock.real_now())
