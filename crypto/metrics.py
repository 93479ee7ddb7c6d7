"""The EVM deposit scanners' cursors in the metrics, read at scrape time
(core.metrics.SCRAPE_COLLECTORS); their lag behind the head is recorded by the scanner."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core import clock
from crypto.selectors import evm_scanner_cursors


def scanner_metrics() -> Iterator[Metric]:
    next_block = GaugeMetricFamily(
        "trading_evm_scanner_next_block",
        "The first block each chain's deposit scanner has not read yet.",
        labels=["chain"],
    )
    age = GaugeMetricFamily(
        "trading_evm_scanner_cursor_age_seconds",
        "Seconds since each chain's scanner cursor last moved (a block arrives every few "
        "seconds: a cursor that stands still is a scanner or a node that stopped).",
        labels=["chain"],
    )
    now = clock.now()
    for chain, block, moved_at in evm_scanner_cursors():
        next_block.add_metric([chain], block)
        age.add_metric([chain], (now - moved_at).total_seconds())
    yield next_block
    yield age
