from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app may use and that uses none of them: the clock, the switches, the error
    catalog with the domain error, the request context, database helpers, JSON formatting,
    metrics."""

    name = "core"
    verbose_name = "Service"

    def ready(self) -> None:
        from core.metrics import SCRAPE_COLLECTORS
        from core.metrics.broker import queue_metrics

        SCRAPE_COLLECTORS.append(queue_metrics)
