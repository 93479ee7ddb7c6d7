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
        # Registers the check of the identity provider, the OpenAPI auth extensions, the
        # outbox's hand-off to Celery and the sub-packages' tasks.
        from core.metrics import SCRAPE_COLLECTORS
        from merchants import checks, schema  # noqa: F401
        from merchants.metrics import outbox_metrics
        from merchants.verification import tasks as verification_tasks  # noqa: F401
        from merchants.webhooks import tasks as webhook_tasks  # noqa: F401

        SCRAPE_COLLECTORS.append(outbox_metrics)
