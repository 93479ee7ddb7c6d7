"""The service's Prometheus metrics (docs/ops/metrics.md lists them with what to read in each).

Two kinds:

- Recorded by the processes as things happen (requests, refusals, webhook attempts, tasks,
  trade moves, money moved, feed sockets): the objects below. Each is a few
  microseconds on the hot path (a lock and a write to a memory-mapped file in multiprocess mode,
  ``store``). Every one has labels, so that no value exists before a process first records one:
  a value made before ``store.role_start`` would land outside its tree's folder.
- Read at scrape time from the database and the broker (outbox depth and age, trades in flight,
  the EVM scanners' state, the broker's queue): the functions apps put in ``SCRAPE_COLLECTORS`` in
  their ``AppConfig.ready``, each a cheap indexed query, so none of it costs a request anything.

Names start with ``trading_``; durations are seconds, money is USD."""

import logging
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import REGISTRY, Collector

from core.metrics import store

logger = logging.getLogger(__name__)

# Request latencies: the API answers in milliseconds; the slowest documented answer (a
# dependency timing out) takes seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter(
    "trading_http_requests",
    "HTTP requests answered, by route (the URL pattern, not the path), method and status.",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "trading_http_request_duration_seconds",
    "Time from the request reaching Django to its response, by route and method.",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
)
RATE_LIMIT_REFUSALS = Counter(
    "trading_rate_limit_refusals",
    "Requests refused with RATE_LIMITED, by the rate-limit operation they counted against.",
    ["operation"],
)
WEBHOOK_ATTEMPTS = Counter(
    "trading_webhook_attempts",
    "Webhook delivery attempts recorded, by kind (approval or event) and what the attempt left "
    "the event: delivered, retry (due again later) or failed (given up).",
    ["kind", "outcome"],
)
APPROVAL_CALLBACK_LATENCY = Histogram(
    "trading_approval_callback_duration_seconds",
    "How long a merchant's approval callback took to answer, by what it answered (approved, "
    "rejected, or unanswered: an error, a timeout or a status that decides nothing).",
    ["answer"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0),
)
CELERY_TASKS = Counter(
    "trading_celery_tasks",
    "Celery tasks ended, by task name and outcome (success, failure, retry, revoked).",
    ["task", "outcome"],
)
CELERY_TASK_LATENCY = Histogram(
    "trading_celery_task_duration_seconds",
    "Time a Celery task ran, by task name.",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0),
)
CELERY_TASK_LAST_RUN = Gauge(
    "trading_celery_task_last_run_timestamp_seconds",
    "When a worker last finished each task (Unix time): the beat's sweeps every 10-60 s.",
    ["task"],
    multiprocess_mode="max",
)
TRADE_MOVES = Counter(
    "trading_trade_moves",
    "Trades that moved to a status (committed), by trade type and the status reached.",
    ["type", "status"],
)
MONEY_MOVED = Counter(
    "trading_money_moved_usd",
    "USD moved between wallet accounts by committed transfers, by transfer kind.",
    ["kind"],
)
FEED_SOCKETS = Gauge(
    "trading_feed_sockets",
    "Sockets open on the real-time feed processes, by who holds them (merchant or client).",
    ["holder"],
    multiprocess_mode="livesum",
)
FEED_DELIVERY_LATENCY = Histogram(
    "trading_feed_commit_to_send_seconds",
    "From the commit that published a feed message to the feed process sending it to its "
    "sockets, by event.",
    ["event"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
DB_POOL = Gauge(
    "trading_db_pool_connections",
    "The PostgreSQL connection pools of the processes, by database alias and state: size "
    "(open), in_use, waiting (requests queued for a connection), max.",
    ["alias", "state"],
    multiprocess_mode="livesum",
)
PLATFORM_FLEET = Gauge(
    "trading_platform_fleet_state",
    "The game platform's bot fleet as last reported to a request: 2 online, 1 degraded, 0 offline.",
    ["platform"],
    multiprocess_mode="mostrecent",
)
MARKETPLACE_AVAILABLE = Gauge(
    "trading_marketplace_available",
    "Whether the supplier marketplace's last answer was an answer (1) or unavailable (0).",
    ["marketplace"],
    multiprocess_mode="mostrecent",
)


def count_on_commit(counter: Counter, amount: float, *labels: str) -> None:
    """Count ``amount`` once the surrounding transaction commits (a rolled back change moved
    nothing); at once outside a transaction."""
    from django.db import transaction  # not at import: gunicorn's master imports this package

    child = counter.labels(*labels)
    transaction.on_commit(lambda: child.inc(amount))


# Scrape-time readings: each yields metric families (prometheus_client.core's *MetricFamily).
ScrapeCollector = Callable[[], Iterable[Metric]]
SCRAPE_COLLECTORS: list[ScrapeCollector] = []


class _ScrapeTime(Collector):
    def collect(self) -> Iterator[Metric]:
        for read in SCRAPE_COLLECTORS:
            try:
                yield from read()
            except Exception:  # one failing reading must not hide the others
                logger.exception("metrics: %s failed", getattr(read, "__name__", read))


class _Recorded(Collector):
    def __init__(self, root: store.Path) -> None:
        self.root = root

    def collect(self) -> Iterator[Metric]:
        return iter(store.merged(self.root))


def metrics_exposition() -> bytes:
    """The text a scrape gets: every process of this machine (this one's alone without
    multiprocess mode) and the scrape-time readings."""
    registry = CollectorRegistry()
    root = store.metrics_root()
    if root is not None:
        registry.register(_Recorded(root))
    else:
        registry.register(_Process())
    registry.register(_ScrapeTime())
    return generate_latest(registry)


class _Process(Collector):
    """This process's own metrics (no multiprocess folder): the client's default registry."""

    def collect(self) -> Iterator[Metric]:
        return iter(REGISTRY.collect())
