"""Every hand-off a module declares is a member the port requires and is bound by its app, under
the name of a Celery task that exists, and no binding names work nobody declared."""

import sys

from config.celery import app
from core.handoffs import HANDOFFS, Handoff
from tests.errorflow import PACKAGES

PROJECT = (
    "core",
    "config",
    "merchants",
    "wallet",
    "ledger",
    "trading",
    "crypto",
    "feed",
    "sandbox",
)


def declared_handoffs() -> dict[Handoff, str]:
    """Each Handoff constant of the loaded project modules, with where it is declared."""
    found: dict[Handoff, str] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PACKAGES:
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, Handoff) and attribute.isupper():
                found.setdefault(value, f"{name}.{attribute}")
    return found


def test_every_declared_handoff_is_required_and_bound_and_nothing_else():
    declared = declared_handoffs()
    assert len(declared) >= 7
    assert set(HANDOFFS.required) == set(declared)
    assert set(HANDOFFS.bindings) == set(declared)


def test_every_handoff_names_a_celery_task():
    app.loader.import_default_modules()
    missing = [handoff.task for handoff in HANDOFFS.bindings if handoff.task not in app.tasks]
    assert missing == []
