"""Trades in flight in the metrics, read at scrape time (core.metrics.SCRAPE_COLLECTORS)."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from trading.trades.selectors import trades_in_flight_counts


def trades_metrics() -> Iterator[Metric]:
    in_flight = GaugeMetricFamily(
        "trading_trades_in_flight",
        "Trades not finished yet, by type (deposit, withdraw) and status.",
        labels=["type", "status"],
    )
    for (kind, status), count in sorted(trades_in_flight_counts().items()):
        in_flight.add_metric([kind, status], count)
    yield in_flight
