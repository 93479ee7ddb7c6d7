"""Waxpeer's listing feed: a Socket.IO connection that reports each listing listed, repriced or
gone as it happens (the protocol and its sources: trading/marketplace/suppliers/waxpeer.py).

The connection is kept up for good: a refused or failed first connection is tried again with a
doubling wait (up to ``reconnect_max`` seconds), a dropped one is reconnected by the client
itself with the same backoff, and every (re)connection subscribes again. What happens while it
is down is lost: the feed is not a log, so the catalog poll (``trading.suppliers_poll``) keeps
walking every item and corrects whatever the socket missed. ``manage.py supplier_socket`` runs
it beside the workers (README, "Running in production")."""

import logging
import threading
from collections.abc import Callable

import socketio
from socketio.exceptions import ConnectionError as SocketConnectionError

from trading.marketplace.suppliers.base import ListingChange
from trading.marketplace.suppliers.waxpeer import GAMES, SOCKET_EVENTS, socket_change

logger = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 10.0
WATCH_SECONDS = 1.0


class WaxpeerSocket:
    """``on_change`` gets each change of a listing of ``games``; ``on_state`` True once
    subscribed, False when the connection drops. Both are called from the client's thread;
    an exception they raise is logged and the next event is handled."""

    def __init__(
        self,
        *,
        url: str,
        path: str,
        api_key: str,
        games: tuple[int, ...],
        on_change: Callable[[ListingChange], None],
        on_state: Callable[[bool], None],
        reconnect_max: float = 30.0,
    ) -> None:
        self.url = url
        self.path = path
        self.api_key = api_key
        self.games = games
        self.on_change = on_change
        self.on_state = on_state
        self.reconnect_max = reconnect_max
        self.ended = threading.Event()  # the server closed the connection: connect again
        self.client = socketio.Client(
            reconnection=True,
            reconnection_attempts=0,  # for good
            reconnection_delay=FIRST_RETRY_SECONDS,
            reconnection_delay_max=reconnect_max,
            handle_sigint=False,
        )
        self.client.on("connect", self._subscribe)
        self.client.on("disconnect", self._dropped)
        for event in SOCKET_EVENTS:
            self.client.on(event, self._handler(event))

    def _subscribe(self) -> None:
        for game in self.games:
            self.client.emit("sub", {"name": GAMES[game], "value": True})
        self._tell(lambda: self.on_state(True))

    def _dropped(self, reason: object = None) -> None:
        # The client reconnects by itself after a lost connection, not after the server's own
        # disconnect (Socket.IO's rule): then ``run`` connects again.
        if reason == self.client.reason.SERVER_DISCONNECT:
            self.ended.set()
        logger.warning("waxpeer socket dropped (%s); reconnecting", reason)
        self._tell(lambda: self.on_state(False))

    def _handler(self, event: str) -> Callable[[object], None]:
        def handle(payload: object = None) -> None:
            change = socket_change(event, payload)
            if change is not None and change.game in self.games:
                self._tell(lambda: self.on_change(change))

        return handle

    def _tell(self, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception:
            logger.exception("waxpeer socket event not applied (the next poll corrects it)")

    def run(self, stop: threading.Event) -> None:
        """Connect and stay connected until ``stop`` is set."""
        wait = FIRST_RETRY_SECONDS
        while not stop.is_set():
            self.ended.clear()
            try:
                self.client.connect(
                    self.url,
                    headers={"authorization": self.api_key},
                    transports=["websocket"],
                    socketio_path=self.path,
                    wait_timeout=CONNECT_TIMEOUT_SECONDS,
                )
            except SocketConnectionError as exc:
                logger.warning("waxpeer socket: no connection (%s); again in %.0f s", exc, wait)
                stop.wait(wait)
                wait = min(wait * 2, self.reconnect_max)
                continue
            wait = FIRST_RETRY_SECONDS
            # Connected (the client comes back by itself from a lost connection) until the
            # server ends it; looked at every second.
            while not stop.wait(WATCH_SECONDS) and not self.ended.is_set():
                pass
            if self.ended.is_set() and not stop.is_set():
                self.client.disconnect()  # let go of what is left before connecting again
                stop.wait(wait)
        self.client.disconnect()
