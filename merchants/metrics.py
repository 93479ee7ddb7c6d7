"""The outbox in the metrics, read at scrape time (core.metrics.SCRAPE_COLLECTORS)."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core import clock
from merchants.webhooks.selectors import webhook_outbox_backlog


def outbox_metrics() -> Iterator[Metric]:
    pending = GaugeMetricFamily(
        "trading_webhook_outbox_pending",
        "Webhook events not yet delivered nor given up, by kind (approval or event).",
        labels=["kind"],
    )
    oldest = GaugeMetricFamily(
        "trading_webhook_outbox_oldest_pending_age_seconds",
        "Age of the oldest undelivered webhook event, by kind (0 when none waits).",
        labels=["kind"],
    )
    now = clock.now()
    for backlog in webhook_outbox_backlog():
        kind = "approval" if backlog.is_approval else "event"
        pending.add_metric([kind], backlog.pending)
        created = backlog.oldest_created_at
        oldest.add_metric([kind], (now - created).total_seconds() if created else 0.0)
    yield pending
    yield oldest
