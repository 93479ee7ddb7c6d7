from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app may use and that uses none of them: the clock, the switches, the error
    catalog with the domain error, the request context, database helpers, JSON formatting."""

    name = "core"
    verbose_name = "Service"
