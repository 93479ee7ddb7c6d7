"""The outside systems (game platform, supplier marketplace, chains, identity provider) are
adapters named by a setting (a dotted path). Unset, the domain uses its "unconfigured" adapter,
which answers every call with its interface's unavailable error, and ``manage.py check`` warns."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string


def adapter_load(setting: str, unconfigured: Callable[[], Any]) -> Any:
    """An instance of the adapter the setting names, or of ``unconfigured`` when it is unset."""
    path: str = getattr(settings, setting)
    return import_string(path)() if path else unconfigured()


def adapter_check(setting: str, *, answer: str, check_id: str) -> list[checks.CheckMessage]:
    """A warning (``<app>.W<n>``) when the setting is unset, an error (``<app>.E<n>``) when it
    names something that cannot be loaded."""
    app, number = check_id.split(".")
    path: str = getattr(settings, setting)
    if not path:
        return [
            checks.Warning(
                f"{setting} is not set: every call to this outside system answers {answer}.",
                hint="Set it to the dotted path of its adapter (SANDBOX=true: the sandbox's).",
                id=f"{app}.W{number}",
            )
        ]
    try:
        import_string(path)
    except Exception as exc:  # whatever stops it loading (a wrong path, the sandbox not installed)
        return [
            checks.Error(
                f"{setting}={path} cannot be loaded: {exc}",
                hint="The sandbox's adapters need SANDBOX=true.",
                id=f"{app}.E{number}",
            )
        ]
    return []
