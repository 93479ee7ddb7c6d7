from django.apps import AppConfig


class MerchantsConfig(AppConfig):
    name = "merchants"
    verbose_name = "Merchants and API access"

    def ready(self) -> None:
        # Registers the check of the identity provider, the OpenAPI auth extensions, and the
        # outbox's hand-off to Celery.
        from merchants import checks, schema  # noqa: F401
        from merchants.webhooks import tasks  # noqa: F401
