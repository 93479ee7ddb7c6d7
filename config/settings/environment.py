"""Reading a setting from the environment: an unset or empty variable gives the default; a
number that is not one stops the start with the variable's name."""

import os

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}.") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}.") from None


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list, each entry stripped, empty entries left out."""
    return [entry.strip() for entry in os.environ.get(name, default).split(",") if entry.strip()]
