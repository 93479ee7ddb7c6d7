from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class CoreConfig(AppConfig):
    """What every app may use and that uses none of them: the clock, the switches, the error
    catalog with the domain error, the request context, database helpers, JSON formatting,
    metrics."""

    name = "core"
    verbose_name = "Service"

    def ready(self) -> None:
        from core import checks  # noqa: F401 (fails the start on a port left unbound)
        from core.metrics import SCRAPE_COLLECTORS
        from core.metrics.broker import queue_metrics

        SCRAPE_COLLECTORS.append(queue_metrics)


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """Django's admin with the console's site (its home is the attention board), named in
    ``INSTALLED_APPS`` instead of ``django.contrib.admin``."""

    # Not core's own configuration: Django picks CoreConfig for "core".
    default = False
    default_site = "core.admin_site.ConsoleSite"
