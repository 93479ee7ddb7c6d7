from importlib import import_module

from django.apps import AppConfig

# The sub-packages keep their tables beside their code, in the app's label; Django imports only
# ``merchants.models`` by itself.
SUBPACKAGE_MODELS = ("merchants.webhooks.models", "merchants.verification.models")


class MerchantsConfig(AppConfig):
    name = "merchants"
    verbose_name = "Merchants and API access"

    def import_models(self) -> None:
        super().import_models()
        for module in SUBPACKAGE_MODELS:
            import_module(module)

    def ready(self) -> None:
        # Registers the check of the identity provider, the OpenAPI auth extensions and the
        # sub-packages' tasks; binds the outbox's hand-off to Celery.
        from core.handoffs import HANDOFFS
        from core.metrics import SCRAPE_COLLECTORS
        from merchants import checks, schema  # noqa: F401
        from merchants.metrics import outbox_metrics
        from merchants.verification import tasks as verification_tasks  # noqa: F401
        from merchants.webhooks.outbox import WEBHOOK_DELIVERY
        from merchants.webhooks.tasks import enqueue_delivery

        HANDOFFS.bind(WEBHOOK_DELIVERY, enqueue_delivery)
        SCRAPE_COLLECTORS.append(outbox_metrics)
