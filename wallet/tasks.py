import logging

from celery import shared_task

from wallet.services.checks import wallet_check_run

logger = logging.getLogger(__name__)


@shared_task(name="wallet.check_invariants", time_limit=1800, soft_time_limit=1700)
def check_invariants() -> bool:
    """Beat's run of ``check_wallet``, stored for the console; broken books are logged too."""
    check, _ = wallet_check_run()
    if not check.is_clean:
        logger.error("wallet invariants broken: %s", check.problems)
    return check.is_clean
