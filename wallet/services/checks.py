"""The wallet's invariant check as a recorded run: ``check_wallet`` and beat's
``wallet.check_invariants`` both store what they found, so the console can say when the books
were last proven and what broke."""

import time

from django.db import transaction

from core import clock
from wallet.models import WalletCheck
from wallet.selectors import INVARIANTS, InvariantReport, wallet_invariants_check

# Runs kept: six weeks of beat's hourly check.
KEPT_RUNS = 1000


def wallet_check_run() -> tuple[WalletCheck, InvariantReport]:
    """Check the invariants (a read of every posting: minutes on a large ledger, so outside any
    transaction), then store the run and drop the oldest beyond ``KEPT_RUNS``."""
    started = time.perf_counter()
    report = wallet_invariants_check()
    problems = {name: getattr(report, name) for name in INVARIANTS if getattr(report, name)}
    with transaction.atomic():
        check = WalletCheck.objects.create(
            ran_at=clock.now(),
            seconds=round(time.perf_counter() - started, 3),
            is_clean=report.clean,
            problems=problems,
        )
        kept = WalletCheck.objects.order_by("-ran_at", "-id").values("id")[:KEPT_RUNS]
        WalletCheck.objects.exclude(id__in=kept).delete()
    return check, report
