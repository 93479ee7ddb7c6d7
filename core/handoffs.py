"""Work a commit makes due, handed to a worker once the transaction commits. Services name the
work; each app's tasks module registers how a worker gets it (imported by the app's
``AppConfig.ready``, so every process has it), and services never import their tasks. A lost
hand-off costs only time: the sweeps find the work in the database."""

from collections.abc import Callable

from django.db import transaction

# Work name (the Celery task's name) -> hands one id to a worker.
HANDOFFS: dict[str, Callable[[str], None]] = {}


def handoff_register(name: str, hand_off: Callable[[str], None]) -> None:
    HANDOFFS[name] = hand_off


def handoff_on_commit(name: str, subject_id: str) -> None:
    """Hand ``subject_id`` to the worker of ``name`` after the surrounding transaction commits
    (at once outside one)."""
    transaction.on_commit(lambda: HANDOFFS[name](subject_id))
