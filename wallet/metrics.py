"""The wallet's invariant check in the metrics, read at scrape time from its last stored run
(core.metrics.SCRAPE_COLLECTORS): always exported, so an alert can tell a broken ledger, a check
that stopped running and one that never ran."""

import math
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core import clock
from wallet.selectors import INVARIANTS, wallet_check_last


def wallet_check_metrics() -> Iterator[Metric]:
    last = wallet_check_last()
    age = GaugeMetricFamily(
        "trading_wallet_check_age_seconds",
        "Seconds since check_wallet last ran (+Inf when no run is stored).",
    )
    age.add_metric([], (clock.now() - last.ran_at).total_seconds() if last else math.inf)
    problems = GaugeMetricFamily(
        "trading_wallet_check_problems",
        "Problems the last run of check_wallet found, by invariant (0 when none is stored).",
        labels=["invariant"],
    )
    for invariant in INVARIANTS:
        problems.add_metric([invariant], last.problems.get(invariant, 0) if last else 0)
    yield age
    yield problems
