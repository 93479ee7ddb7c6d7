from django.apps import AppConfig


class MerchantsConfig(AppConfig):
    name = "merchants"
    verbose_name = "Merchants and API access"

    def ready(self) -> None:
        # Registers the check of the identity provider, the OpenAPI auth extensions, and the
        # outbox's hand-off to Celery.
        from core.metrics import SCRAPE_COLLECTORS
        from merchants import checks, schema  # noqa: F401
        from merchants.metrics import outbox_metrics
        from merchants.webhooks import tasks  # noqa: F401

        SCRAPE_COLLECTORS.append(outbox_metrics)
