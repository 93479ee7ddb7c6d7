"""Waxpeer's listing feed: a Socket.IO connection that reports each listing listed, repriced or
gone as it happens (the protocol and its sources: trading/marketplace/suppliers/waxpeer.py).

The connection is kept up for good: a refused, failed, dropped or silent one (nothing heard for
5 minutes) is made again after a wait doubling from 1 s up to ``reconnect_max`` seconds (back to
1 s once a connection held), and every connection subscribes again. What happens while it
is down is lost: the feed is not a log, so the catalog poll (``trading.suppliers_poll``) keeps
walking every item and corrects whatever the socket missed. Connecting (the websocket's opening
handshake, Engine.IO's open packet, Socket.IO's connect) ends within 10 s whole, whatever the
server drips (``core.http.deadline``). ``manage.py supplier_socket`` runs
it beside the workers (README, "Running in production")."""

import logging
import threading
import time
from collections.abc import Callable

import socketio
from socketio.exceptions import ConnectionError as SocketConnectionError

from core.http import DeadlineExceeded, DeadlineWebSocket, deadline
from trading.marketplace.suppliers.base import ListingChange
from trading.marketplace.suppliers.waxpeer import GAMES, SOCKET_EVENTS, socket_change

logger = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 10.0
WATCH_SECONDS = 1.0
# Waxpeer's feed carries many changes a minute: this long without one, the connection is taken
# for dead and made again.
SILENCE_MAX_SECONDS = 300.0


class WaxpeerSocket:
    """``on_change`` gets each change of a listing of ``games`` (called from the client's
    thread); ``on_state`` True once connected and subscribed, False when the connection ends.
    An exception either raises is logged and the next event is handled."""

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
        silence_max: float = SILENCE_MAX_SECONDS,
    ) -> None:
        self.url = url
        self.path = path
        self.api_key = api_key
        self.games = games
        self.on_change = on_change
        self.on_state = on_state
        self.reconnect_max = reconnect_max
        self.silence_max = silence_max
        self.ended = threading.Event()  # the connection is over: connect again
        self.heard_at = time.monotonic()
        # Reconnection is ``run``'s, not the client's: one loop for every way a connection ends
        # (the client does not come back by itself after the server's own disconnect).
        self.client = socketio.Client(
            reconnection=False,
            handle_sigint=False,
            websocket_extra_options={"class_": DeadlineWebSocket},
        )
        self.client.on("connect", self._subscribe)
        self.client.on("disconnect", self._dropped)
        for event in SOCKET_EVENTS:
            self.client.on(event, self._handler(event))

    def _subscribe(self) -> None:
        for game in self.games:
            self.client.emit("sub", {"name": GAMES[game], "value": True})

    def _dropped(self, reason: object = None) -> None:
        logger.warning("waxpeer socket dropped (%s)", reason)
        self.ended.set()

    def _handler(self, event: str) -> Callable[[object], None]:
        def handle(payload: object = None) -> None:
            self.heard_at = time.monotonic()
            change = socket_change(event, payload)
            if change is not None and change.game in self.games:
                self._tell(lambda: self.on_change(change))

        return handle

    def _tell(self, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception:
            logger.exception("waxpeer socket event not applied (the next poll corrects it)")

    def _connected(self, stop: threading.Event) -> None:
        """Until the connection ends, ``stop``, or a silence no busy feed keeps (a connection
        that no longer delivers: dropped on the other side in a way this side did not see)."""
        self.heard_at = time.monotonic()
        while not stop.wait(WATCH_SECONDS) and not self.ended.is_set():
            if time.monotonic() - self.heard_at > self.silence_max:
                logger.warning("waxpeer socket silent for %.0f s; reconnecting", self.silence_max)
                return

    def run(self, stop: threading.Event) -> None:
        """Connect and stay connected until ``stop`` is set."""
        wait = FIRST_RETRY_SECONDS
        while not stop.is_set():
            self.ended.clear()
            try:
                with deadline(CONNECT_TIMEOUT_SECONDS):
                    self.client.connect(
                        self.url,
                        headers={"authorization": self.api_key},
                        transports=["websocket"],
                        socketio_path=self.path,
                        wait_timeout=CONNECT_TIMEOUT_SECONDS,
                    )
            except (SocketConnectionError, DeadlineExceeded) as exc:
                logger.warning("waxpeer socket: no connection (%s); again in %.0f s", exc, wait)
                stop.wait(wait)
                wait = min(wait * 2, self.reconnect_max)
                continue
            wait = FIRST_RETRY_SECONDS
            self._tell(lambda: self.on_state(True))
            self._connected(stop)
            self.client.disconnect()
            self._tell(lambda: self.on_state(False))
            stop.wait(wait)
