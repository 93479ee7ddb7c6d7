"""The EVM deposit scanners in the metrics, read at scrape time (core.metrics.SCRAPE_COLLECTORS)
from what each scan step stores (``crypto.selectors.chain_scan_states``: no node is asked)."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core import clock
from crypto.selectors import chain_scan_states


def scanner_metrics() -> Iterator[Metric]:
    lag_blocks = GaugeMetricFamily(
        "trading_evm_scanner_lag_blocks",
        "Blocks between each chain's head and the last block its deposit scanner read, as the "
        "last scan step saw them.",
        labels=["chain"],
    )
    lag_seconds = GaugeMetricFamily(
        "trading_evm_scanner_lag_seconds",
        "The chain's time from the last block the scanner read to the head block.",
        labels=["chain"],
    )
    last_block = GaugeMetricFamily(
        "trading_evm_scanner_last_block",
        "The last block each chain's deposit scanner has read (every transfer up to it seen).",
        labels=["chain"],
    )
    age = GaugeMetricFamily(
        "trading_evm_scanner_last_scan_age_seconds",
        "Seconds since each chain's scanner last completed a step (beat sends one every 5 s: "
        "one that stops is a beat, worker or node that stopped).",
        labels=["chain"],
    )
    now = clock.now()
    for state in chain_scan_states():
        if state.lag_blocks is not None:
            lag_blocks.add_metric([state.chain], state.lag_blocks)
        if state.lag_seconds is not None:
            lag_seconds.add_metric([state.chain], state.lag_seconds)
        if state.last_scanned_block is not None:
            last_block.add_metric([state.chain], state.last_scanned_block)
        if state.last_scan_at is not None:
            age.add_metric([state.chain], (now - state.last_scan_at).total_seconds())
    yield from (lag_blocks, lag_seconds, last_block, age)
