"""Work a commit makes due, handed to a worker once the transaction commits. The module that makes
the work due declares it (a ``Handoff`` constant beside its services), which makes it a member the
port ``HANDOFFS`` requires; the app's ``AppConfig.ready`` binds how a worker gets it (a function of
its tasks module), ``manage.py check`` fails on a declared hand-off nothing binds
(``core.checks``), and services never import their tasks. A lost hand-off costs only time: the
sweeps find the work in the database.

A worker's task may instead keep the work it made due and do it itself when it is done
(``handoffs_followed``): one task and one broker round trip fewer. Only the outbox does, for the
events a webhook delivery emitted (the ``trade.pending`` of an approved withdrawal); work with a
time limit of its own (the purchase after an approval) gets its own task, since a followed run
would only have the limit of the task that follows it."""

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
from core.ports import Port

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Handoff:
    """One kind of work a commit makes due, named by the Celery task that does it.

    Declared as a constant and passed by reference, not spelled as a string at each use: a
    mistyped name then fails at import instead of losing every hand-off to its sweep, and each
    use is found from the declaration. Declaring one makes it a member ``HANDOFFS`` requires: the
    start-up check fails until its app binds a worker to it. (Naming the service function that
    does the work would be clearer still, but three of the seven run functions import the module
    that hands off to them: the purchase its approval, the deliveries the hand-over, the webhook
    delivery the outbox.)"""

    task: str

    def __post_init__(self) -> None:
        HANDOFFS.require(self)

    def __str__(self) -> str:
        return self.task


# Declared -> hands one id to a worker (bound by the app that owns the task).
HANDOFFS: Port[Handoff, Callable[[str], None]] = Port("hand-offs to workers", check_id="core.E006")

# (the request it was kept for, work) kept by the enclosing ``handoffs_followed`` block.
_followed: ContextVar[list[tuple[str, Callable[[], None]]] | None] = ContextVar(
    "followed", default=None
)


def handoff_on_commit(handoff: Handoff, subject_id: str) -> None:
    """Hand ``subject_id`` to the worker of ``handoff`` after the surrounding transaction
    commits (at once outside one)."""
    transaction.on_commit(lambda: HANDOFFS.implementation(handoff)(subject_id))


def handoff_follow(work: Callable[[], None]) -> bool:
    """Keep ``work`` for the end of the enclosing ``handoffs_followed`` block; False outside
    one (then the caller hands it to a worker). It runs under the request id in hand when it
    was kept (the ``trade.pending`` of an approval under the withdrawal's request, however its
    delivery came to run)."""
    followed = _followed.get()
    if followed is None:
        return False
    followed.append((current_request_id(), work))
    return True


@contextmanager
def handoffs_followed() -> Iterator[None]:
    """Work kept by ``handoff_follow`` inside the block runs when the block ends without an
    error, in this thread, outside any transaction. Work that fails is logged and left to its
    sweep, as a lost hand-off would be; so is work kept by a block that raised."""
    followed: list[tuple[str, Callable[[], None]]] = []
    token = _followed.set(followed)
    try:
        yield
    finally:
        _followed.reset(token)
    for request_id, work in followed:
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
