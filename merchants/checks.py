from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from core.adapters import adapter_check


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """The identity provider: unset (a warning), not loadable (an error), or loadable but
    missing settings it needs (a warning naming them, ``missing_settings`` of its adapter: it
    is as unconfigured as an unset one, and a deployment's other work goes on)."""
    problems = adapter_check(
        "IDENTITY_PROVIDER", answer="VERIFICATION_NOT_AVAILABLE", check_id="merchants.001"
    )
    if problems or not settings.IDENTITY_PROVIDER:
        return problems
    adapter = import_string(settings.IDENTITY_PROVIDER)
    missing: list[str] = getattr(adapter, "missing_settings", list)()
    if not missing:
        return []
    return [
        checks.Warning(
            f"IDENTITY_PROVIDER={settings.IDENTITY_PROVIDER} needs {', '.join(missing)}: "
            "verification starts answer VERIFICATION_NOT_AVAILABLE and its notifications are "
            "refused until they are set.",
            hint="Set them in the environment (README, 'Identity verification with Sumsub').",
            id="merchants.W002",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def callback_networks_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """Callbacks to private networks are for staging and one-machine checks, not production."""
    if not settings.CALLBACK_ALLOW_PRIVATE_NETWORKS:
        return []
    return [
        checks.Warning(
            "CALLBACK_ALLOW_PRIVATE_NETWORKS is on: merchants' callback URLs may be http and may "
            "reach private and loopback addresses (this network, cloud metadata endpoints).",
            hint="Unset it in production; it is meant for staging and end-to-end checks.",
            id="merchants.W003",
        )
    ]
