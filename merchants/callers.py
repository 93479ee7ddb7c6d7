"""The callers (API keys, API secrets, their merchants) each web process keeps between requests,
and how a change to one reaches every process (docs/decisions.md, "Per-request path")."""

import time
from collections.abc import Callable
from typing import Any

from django.db import transaction

from core.context import request_memo_peek, request_memo_set
from merchants.ratelimits import auth_epoch_bump


class CallerCache:
    """The rows that identify callers (API keys, API secrets, their merchants), kept in this
    process between requests, as converted values (each request builds its own instances).

    An entry serves a request only when the request's round trip to the shared state
    (``merchants.gate``) found the auth epoch this cache was filled under, and only for
    ``SECONDS`` after it was read from the database: a change that bumped the epoch is seen by the
    next request of every process. A bump lost to a Redis outage is made up for (``bump_owed``,
    and every process that met the outage drops its entries); only a row edited by hand, behind
    the services, waits for ``SECONDS``. Outside requests (workers, commands) it is not used at
    all."""

    # Re-reading every second cost most requests a database read of their own once many
    # merchants share a process (docs/decisions.md, "Per-request path"); the feed re-reads its
    # sockets' keys on the same period (FEED_RECHECK_FULL_SECONDS).
    SECONDS = 30.0
    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], tuple[float, Any]] = {}
        self.epoch: str | None = None  # None: not known yet
        # This process changed a caller and could not move the epoch: it does so at its next
        # round trip to the shared state (``merchants.gate``).
        self.bump_owed = False

    def epoch_seen(self, epoch: str) -> None:
        """The epoch a request's round trip read: entries of another epoch are dropped, and the
        cache serves the rest of this request."""
        if epoch != self.epoch:
            self._entries.clear()
            self.epoch = epoch
        request_memo_set(_CACHE_SERVES, epoch)

    def clear(self) -> None:
        """This process changed a caller: drop everything now (other processes see the epoch)."""
        self._entries.clear()
        self.epoch = None

    def serves(self) -> bool:
        return self.epoch is not None and request_memo_peek(_CACHE_SERVES) == self.epoch

    def get(self, kind: str, key: str) -> Any:
        """A fresh entry's values, or None (absent or too old)."""
        found = self._entries.get((kind, key))
        if found is None or time.monotonic() - found[0] > self.SECONDS:
            return None
        return found[1]

    def guess(self, kind: str, key: str) -> Any:
        """An entry's values whatever their age, or None: only for guessing who calls (the
        request's count then made in the gate's round trip is taken back if the guess was
        wrong). An entry past ``SECONDS`` is read again before it authenticates; refusing it
        here too would send that request to Redis twice."""
        found = self._entries.get((kind, key))
        return None if found is None else found[1]

    def put(self, kind: str, key: str, values: Any) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[(kind, key)] = (time.monotonic(), values)

    def set_in(self, kind: str, key: str, change: Callable[[Any], Any]) -> None:
        """Replace an entry's values by ``change(values)``, keeping its age."""
        found = self._entries.get((kind, key))
        if found is not None:
            self._entries[(kind, key)] = (found[0], change(found[1]))


_CACHE_SERVES = "merchants-caller-cache-epoch"
CALLERS = CallerCache()


def callers_changed() -> None:
    """An API key, an API secret or a merchant changed: every web process drops the callers it
    keeps (``CallerCache``), this one now and again at commit (a request may have kept the old
    rows meanwhile), the others at their next request once the commit bumped the auth epoch. A
    bump that fails (Redis away) is owed: this process makes it at its next round trip, and every
    process whose round trip failed meanwhile has dropped its callers."""

    def bump() -> None:
        CALLERS.clear()
        try:
            auth_epoch_bump()
        except Exception:
            CALLERS.bump_owed = True
            raise  # logged by on_commit(robust=True)

    CALLERS.clear()
    transaction.on_commit(bump, robust=True)
