"""Work a commit makes due, handed to a worker once the transaction commits. The module that makes
the work due declares it (a ``Handoff`` constant beside its services); the app's tasks module
registers how a worker gets it (imported by the app's ``AppConfig.ready``, so every process has
it), and services never import their tasks. A lost hand-off costs only time: the sweeps find the
work in the database.

A worker's task may instead keep the work it made due and do it itself when it is done
(``handoffs_followed``): one task and one broker round trip fewer, for work that comes right
after the task's own (a withdrawal's purchase after its approval, and the ``trade.pending``
webhook the approval emitted)."""

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError

from core.context import context_request_bound, current_request_id

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Handoff:
    """One kind of work a commit makes due, named by the Celery task that does it.

    Declared as a constant and passed by reference, not spelled as a string at each use: a
    mistyped name then fails at import instead of losing every hand-off to its sweep, and each
    use is found from the declaration. (Naming the service function that does the work would be
    clearer still, but three of the seven run functions import the module that hands off to them:
    the purchase its approval, the deliveries the hand-over, the webhook delivery the outbox.)"""

    task: str


# Declared -> hands one id to a worker.
HANDOFFS: dict[Handoff, Callable[[str], None]] = {}

# (runs after the rest, the request it was kept for, work) kept by the enclosing
# ``handoffs_followed`` block.
_followed: ContextVar[list[tuple[bool, str, Callable[[], None]]] | None] = ContextVar(
    "followed", default=None
)


def handoff_register(handoff: Handoff, hand_off: Callable[[str], None]) -> None:
    HANDOFFS[handoff] = hand_off


def handoff_on_commit(handoff: Handoff, subject_id: str) -> None:
    """Hand ``subject_id`` to the worker of ``handoff`` after the surrounding transaction
    commits (at once outside one)."""
    transaction.on_commit(lambda: HANDOFFS[handoff](subject_id))


def handoff_follow(work: Callable[[], None], *, after_the_rest: bool = False) -> bool:
    """Keep ``work`` for the end of the enclosing ``handoffs_followed`` block; False outside
    one (then the caller hands it to a worker). Work ``after_the_rest`` runs once the other
    kept work is done (a webhook delivery, which waits on the merchant, after a purchase). It
    runs under the request id in hand when it was kept (an approval's purchase under the
    withdrawal's request, however its delivery came to run)."""
    followed = _followed.get()
    if followed is None:
        return False
    followed.append((after_the_rest, current_request_id(), work))
    return True


@contextmanager
def handoffs_followed() -> Iterator[None]:
    """Work kept by ``handoff_follow`` inside the block runs when the block ends without an
    error, in this thread, outside any transaction. Work that fails is logged and left to its
    sweep, as a lost hand-off would be; so is work kept by a block that raised."""
    followed: list[tuple[bool, str, Callable[[], None]]] = []
    token = _followed.set(followed)
    try:
        yield
    finally:
        _followed.reset(token)
    for _, request_id, work in sorted(followed, key=lambda kept: kept[0]):
        try:
            with context_request_bound(request_id):
                work()
        except Exception:
            logger.exception("work after the task failed; it is left to its sweep")


def enqueue(task: Task, *args: Any) -> None:
    """Hand work that a commit made due to a worker. A broker that cannot take it (down, or not
    answering within its socket timeout) loses only this hint: the work is in the database, where
    the beat sweeps find it again, and the request whose transaction committed still succeeds."""
    try:
        task.apply_async(args)
    except OperationalError as exc:
        logger.warning("broker unavailable, %s%r is left to its sweep: %s", task.name, args, exc)
