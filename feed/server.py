"""The feed process (docs/feed.md): a python-socketio ``AsyncServer`` (Engine.IO 4, path
``/socket.io/``) served as an ASGI app by ``manage.py feed``.

A socket's API key is checked before the client is told it is connected: admitted, it is in its
merchant's room from its first moment and may ``subscribe`` to a game's market; refused, it is
accepted all the same and disconnected without any event, as the original service does. The bus
delivers what web and worker processes published after their commits; a re-check every
``FEED_RECHECK_SECONDS`` (and at once when a key is revoked) closes sockets whose key no longer
passes: it re-reads the keys when the auth epoch moved (a key, secret or merchant changed) and
every ``FEED_RECHECK_FULL_SECONDS`` in any case, so a quiet service does not re-read a thousand
keys every two seconds (that read, in the database thread, held up the event loop)."""

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import orjson
import socketio
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, close_old_connections
from engineio import packet as eio_packet

from core.json import dumps
from feed.access import (
    access_epoch,
    grants_recheck,
    socket_address,
    socket_grant,
    socket_key,
)
from feed.bus import FeedSource, RedisSource, SpoolSource
from feed.dispatch import Dispatcher, event_packet
from feed.limits import SocketLimit
from feed.packets import MAX_MESSAGE_BYTES, BoundedJson, FeedPacket
from feed.sockets import FeedSocket, Registry
from trading.games import GAMES
from trading.market.shapes import market_sync_json

logger = logging.getLogger(__name__)

NAMESPACE = "/"
# Owed market syncs go out this often once their socket has caught up.
SYNC_SECONDS = 0.5
SOCKET_LIMIT_CODE = "FEED_SOCKET_LIMIT"
# A refused socket is disconnected this long after it was accepted (see ``_refuse``).
REFUSAL_DELAY_SECONDS = 0.2
# How long closing a session waits for its last packet to leave (see ``_disconnect_within``).
CLOSE_WAIT_SECONDS = 1.0

T = TypeVar("T")


async def in_database(function: Callable[..., T], /, **kwargs: Any) -> T:
    """Run database work in the one database thread, with fresh connections as a request has."""

    def run() -> T:
        close_old_connections()
        try:
            return function(**kwargs)
        finally:
            close_old_connections()

    return await sync_to_async(run, thread_sensitive=True)()


class EngineSink:
    """Packets straight onto engine.io sockets: encoded once per event, queued per socket."""

    def __init__(self, sio: socketio.AsyncServer) -> None:
        self.sio = sio

    def backlog(self, eio_sid: str) -> int | None:
        socket = self.sio.eio.sockets.get(eio_sid)
        if socket is None or socket.closed:
            return None
        return int(socket.queue.qsize())

    async def send(self, eio_sid: str, packet: str) -> None:
        await self.sio.eio.send_packet(eio_sid, eio_packet.Packet(eio_packet.MESSAGE, packet))

    async def close(self, eio_sid: str) -> None:
        # The transport is cut: the client reconnects by itself and refetches.
        self.sio.start_background_task(self.sio.eio.disconnect, eio_sid)


def _market_game(data: object) -> int | None:
    """The game of ``{ market: { game } }`` (730 or "730", 252490 or "252490")."""
    market = data.get("market") if isinstance(data, dict) else None
    game = market.get("game") if isinstance(market, dict) else None
    if isinstance(game, str) and game.isdigit():
        game = int(game)
    return game if isinstance(game, int) and game in GAMES else None


MARKET_INPUT_ERROR = {
    "error": {
        "code": "VALIDATION_FAILED",
        "message": 'Send { "market": { "game": "730" } } (730 or 252490).',
    }
}


class FeedServer:
    def __init__(self) -> None:
        self.sio = socketio.AsyncServer(
            async_mode="asgi",
            cors_allowed_origins=settings.FEED_CORS_ALLOWED_ORIGINS or None,
            logger=False,
            engineio_logger=False,
            serializer=FeedPacket,
            json=BoundedJson,
            max_http_buffer_size=MAX_MESSAGE_BYTES,
        )
        self.sio.eio.on("message", self._closing_on_refusal(self.sio.eio.handlers["message"]))
        self.sio.eio.on("disconnect", self._forgetting(self.sio.eio.handlers["disconnect"]))
        self.sio.eio.disconnect = self._disconnect_within(self.sio.eio.disconnect, self.sio.eio)
        self.registry = Registry()
        self.sink = EngineSink(self.sio)
        self.stats: Counter[str] = Counter()
        on_redis = settings.FEED_BUS == "redis"
        self.limit = SocketLimit(
            cap=settings.FEED_MAX_SOCKETS_PER_MERCHANT,
            redis_url=settings.FEED_REDIS_URL if on_redis else None,
            namespace=settings.FEED_CHANNEL,
        )
        self.dispatcher = Dispatcher(
            registry=self.registry,
            sink=self.sink,
            access_changed=self.recheck_merchant,
            backlog_soft=settings.FEED_SOCKET_BACKLOG,
            backlog_hard=settings.FEED_SOCKET_BACKLOG_MAX,
        )
        self.source: FeedSource = (
            RedisSource(settings.FEED_REDIS_URL, settings.FEED_CHANNEL)
            if on_redis
            else SpoolSource(settings.FEED_SPOOL_DIR)
        )
        self.tasks: list[asyncio.Task[None]] = []
        # The auth epoch at the last re-read of the keys, when that was (None: not yet), and
        # how many there were.
        self.checked_epoch: str | None = None
        self.checked_at: float | None = None
        self.rechecks = 0
        self.refusals: set[asyncio.Task[None]] = set()
        self.sio.on("connect", self.on_connect)
        self.sio.on("disconnect", self.on_disconnect)
        self.sio.on("subscribe", self.on_subscribe)
        self.sio.on("unsubscribe", self.on_unsubscribe)

    def asgi_app(self) -> socketio.ASGIApp:
        return socketio.ASGIApp(
            self.sio,
            other_asgi_app=self.health,
            socketio_path="socket.io",
            on_startup=self.start,
            on_shutdown=self.stop,
        )

    # Life cycle.

    async def start(self) -> None:
        self.tasks = [
            asyncio.create_task(self.source.run(self.dispatcher.deliver, self.dispatcher.resumed)),
            asyncio.create_task(self._every(settings.FEED_RECHECK_SECONDS, self._recheck_all)),
            asyncio.create_task(self._every(SYNC_SECONDS, self.dispatcher.send_owed_syncs)),
        ]

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.limit.close()

    @staticmethod
    async def _every(seconds: float, work: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await work()
            except Exception:
                logger.exception("feed: periodic work failed")

    # Socket events.

    async def on_connect(self, sid: str, environ: dict[str, Any], auth: object = None) -> bool:
        """Decided before the client hears it is connected, so a client that is told
        ``connect`` is already in its merchant's room. A refused socket is accepted all the
        same, and disconnected a moment later without any event."""
        eio_sid = self.sio.manager.eio_sid_from_sid(sid, NAMESPACE)
        address = socket_address(environ)
        try:
            grant = await in_database(
                socket_grant, raw_key=socket_key(environ, auth), address=address
            )
        except DatabaseError:
            logger.warning("feed: database unavailable; closing the socket", exc_info=True)
            self._refuse(sid, cut=eio_sid)  # the client reconnects by itself
            return True
        if grant is None:
            self.stats["refused"] += 1
            self._refuse(sid)
            return True
        if not await self.limit.admit(grant.merchant_id, sid):
            self.stats["over_cap"] += 1
            cap = settings.FEED_MAX_SOCKETS_PER_MERCHANT
            self._refuse(
                sid,
                error={
                    "code": SOCKET_LIMIT_CODE,
                    "message": f"This merchant already has {cap} sockets open.",
                    "limit": cap,
                },
            )
            return True
        if self.sink.backlog(eio_sid) is None:
            await self.limit.release(grant.merchant_id, sid)  # gone while we looked it up
            return False
        self.registry.add(
            FeedSocket(
                sid=sid,
                eio_sid=eio_sid,
                merchant_id=grant.merchant_id,
                key_id=grant.key_id,
                address=address,
                fee_rate=grant.fee_rate,
            )
        )
        self.stats["connected"] += 1
        return True

    def _closing_on_refusal(
        self, handle: Callable[[str, str | bytes], Awaitable[None]]
    ) -> Callable[[str, str | bytes], Awaitable[None]]:
        """python-socketio's handler of a socket's messages, closing the socket of a message it
        cannot take (malformed, or refused by feed.packets) where python-socketio would log it and
        read on: the reference Socket.IO server closes such a connection too (socket.io,
        packages/socket.io/lib/client.ts: ``ondata`` -> ``onerror`` -> ``conn.close()``). Only
        that socket goes; a client reconnects by itself."""

        async def handle_or_close(eio_sid: str, data: str | bytes) -> None:
            try:
                await handle(eio_sid, data)
            except Exception as exc:
                self.stats["refused_messages"] += 1
                logger.info("feed: a socket's message was refused, closing it: %r", str(exc)[:200])
                await self.sink.close(eio_sid)

        return handle_or_close

    def _forgetting(
        self, handle: Callable[[str, object], Awaitable[None]]
    ) -> Callable[[str, object], Awaitable[None]]:
        """python-socketio's handler of a closing Engine.IO session, forgetting the session
        first. python-engineio keeps a closed session among its sessions until its service task
        or a later request finds it, and that request (a long-polling client's own CLOSE, then
        any POST or poll of the session) failed with a 500 and a traceback; forgotten, it is
        told the session is unknown (400). A poll already waiting still gets what was queued."""

        async def forget_and_handle(eio_sid: str, reason: object) -> None:
            self.sio.eio.sockets.pop(eio_sid, None)
            await handle(eio_sid, reason)

        return forget_and_handle

    @staticmethod
    def _disconnect_within(
        disconnect: Callable[[str | None], Awaitable[None]], engine: Any
    ) -> Callable[[str | None], Awaitable[None]]:
        """python-engineio's ``disconnect``, waiting at most CLOSE_WAIT_SECONDS for the
        session's CLOSE packet to leave, then ending its transport. python-engineio waits until
        the packet has left, which on long-polling is the client's next poll: a client that
        never polled again held the wait, its session and the request that closed it forever
        (about 22 KB each, measured: one POST of a packet Engine.IO refuses made one). And it
        left a websocket open after its CLOSE packet for as long as the client kept sending."""

        async def disconnect_within(sid: str | None = None) -> None:
            if sid is None:  # every session, at shutdown
                await disconnect(sid)
                return
            session = engine.sockets.get(sid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(disconnect(sid), CLOSE_WAIT_SECONDS)
            if session is not None:
                session.queue.put_nowait(None)  # the transport's writer ends, and closes it

        return disconnect_within

    def _refuse(self, sid: str, *, error: dict[str, Any] | None = None, cut: str = "") -> None:
        """Disconnect a socket that was accepted but may not stay (after ``error``, if given;
        ``cut``: by closing its transport, which clients retry). Not at once: python-socketio's
        client ignores a disconnect that arrives before its ``connect()`` has returned, and
        would then believe itself connected."""

        async def refuse() -> None:
            await asyncio.sleep(REFUSAL_DELAY_SECONDS)
            if error is not None:
                await self.sio.emit("error", error, to=sid)
            if cut:
                await self.sio.eio.disconnect(cut)
            else:
                await self.sio.disconnect(sid)

        task = asyncio.create_task(refuse())
        self.refusals.add(task)
        task.add_done_callback(self.refusals.discard)

    async def on_disconnect(self, sid: str, reason: object = None) -> None:
        socket = self.registry.remove(sid)
        if socket is not None:
            await self.limit.release(socket.merchant_id, sid)

    async def on_subscribe(self, sid: str, data: object = None) -> dict[str, Any] | None:
        socket, game = self._market_request(sid, data)
        if socket is None or game is None:
            return None if socket is None else MARKET_INPUT_ERROR
        self.registry.subscribe(socket, game)
        # The answer tells it to fetch the market now, which covers anything it missed before.
        socket.missed = {(g, source) for g, source in socket.missed if g != game}
        sync = market_sync_json(game=game, reason="subscribe")
        await self.sink.send(socket.eio_sid, event_packet("market", dumps(sync)))
        return dict(sync)

    async def on_unsubscribe(self, sid: str, data: object = None) -> dict[str, Any] | None:
        socket, game = self._market_request(sid, data)
        if socket is None or game is None:
            return None if socket is None else MARKET_INPUT_ERROR
        self.registry.unsubscribe(socket, game)
        return {"market": {"game": str(game)}, "subscribed": False}

    def _market_request(self, sid: str, data: object) -> tuple[FeedSocket | None, int | None]:
        """The admitted socket asking (None for one being refused: it gets no answer) and the
        game of its ``{ market: { game } }`` (None when there is none it can have)."""
        return self.registry.get(sid), _market_game(data)

    # Access re-checks.

    async def _recheck_all(self) -> None:
        for socket in list(self.registry.sockets.values()):
            if self.sink.backlog(socket.eio_sid) is None:  # gone without a disconnect event
                await self.on_disconnect(socket.sid)
        epoch = await in_database(access_epoch)
        now = time.monotonic()
        stale = (
            epoch is None
            or epoch != self.checked_epoch
            or self.checked_at is None
            or now - self.checked_at >= settings.FEED_RECHECK_FULL_SECONDS
        )
        if stale and await self.recheck(self.registry.sockets.values()):
            self.checked_epoch, self.checked_at = epoch, now
            self.rechecks += 1
        await self.limit.renew(self.registry.merchants())

    async def recheck_merchant(self, merchant_id: str) -> None:
        await self.recheck(self.registry.of_merchant(merchant_id))

    async def recheck(self, sockets: Iterable[FeedSocket]) -> bool:
        """Close the sockets whose key no longer passes; note fee changes of the others. False
        when the keys could not be read."""
        sockets = list(sockets)
        if not sockets:
            return True
        try:
            verdicts = await in_database(
                grants_recheck, holders=[(s.key_id, s.address) for s in sockets]
            )
        except DatabaseError:
            logger.warning("feed: cannot re-check sockets (database unavailable)", exc_info=True)
            return False
        for socket in sockets:
            if self.registry.get(socket.sid) is None:
                continue
            grant = verdicts[(socket.key_id, socket.address)]
            if grant is None:
                self.stats["revoked"] += 1
                await self.sio.disconnect(socket.sid)
            else:
                socket.fee_rate = grant.fee_rate
        return True

    # Health (not routed to the feed by the reverse proxy; for local checks and the bench).

    async def health(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/health":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = orjson.dumps(
            {
                "status": "ok" if self.source.connected else "degraded",
                "bus": {"kind": settings.FEED_BUS, "connected": self.source.connected},
                "sockets": len(self.registry),
                "events": dict(self.dispatcher.stats),
                "connections": dict(self.stats),
                "rechecks": self.rechecks,
            }
        )
        await send(
            {
                "type": "http.response.start",
                "status": 200 if self.source.connected else 503,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})
