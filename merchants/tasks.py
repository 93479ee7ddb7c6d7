from celery import shared_task

from merchants.ratelimits import rate_limit_windows_prune


@shared_task(name="merchants.prune_rate_limit_windows", time_limit=60)
def prune_rate_limit_windows() -> int:
    return rate_limit_windows_prune()
