"""The Celery queue in the metrics, read from the broker at scrape time: tasks waiting in the
queue, and tasks a worker has taken and not yet acknowledged (``acks_late``: running, or held by
a worker that died, until the broker's visibility timeout gives them back)."""

from collections.abc import Iterator
from functools import cache

import redis
from django.conf import settings
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

# kombu's Redis transport: the queue is a list named after it, taken messages a hash.
UNACKED_KEY = "unacked"


@cache
def _broker(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, **settings.REDIS_CLIENT_OPTIONS)


def queue_metrics() -> Iterator[Metric]:
    url: str = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return  # the quick start's folder broker has no queue to count
    queue: str = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
    broker = _broker(url)
    with broker.pipeline(transaction=False) as pipe:
        pipe.llen(queue)
        pipe.hlen(UNACKED_KEY)
        waiting, taken = pipe.execute()
    tasks = GaugeMetricFamily(
        "trading_celery_queue_tasks",
        "Celery tasks on the broker, by queue and state: waiting (not taken yet) or taken "
        "(by a worker, not acknowledged yet).",
        labels=["queue", "state"],
    )
    tasks.add_metric([queue, "waiting"], waiting)
    tasks.add_metric([queue, "taken"], taken)
    yield tasks
