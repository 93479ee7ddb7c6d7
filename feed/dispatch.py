"""From the bus to the sockets of this process: merchant events (``trade``, ``deposit``) to the
merchant's sockets in order per trade or deposit, ``market`` events to the sockets subscribed to
the game, priced with each merchant's fee; ``access`` changes re-check a merchant's sockets.

Slow consumers: a socket with ``backlog_soft`` packets waiting gets no more market events (the
(game, source) is noted and a ``sync`` sent once it has caught up); one with ``backlog_hard``
waiting is disconnected, so a stuck client never holds the feed's memory (it reconnects and
refetches; merchant events are never dropped for a socket that stays)."""

import json
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any, Protocol

import orjson

from core.json import dumps
from core.metrics import FEED_DELIVERY_LATENCY
from feed.sockets import FeedSocket, Registry
from trading.market.shapes import market_item_priced, market_sync_json
from trading.marketplace.base import Delivery

logger = logging.getLogger(__name__)

SOURCES = tuple(delivery.value for delivery in Delivery)
# How many trades and deposits the order guard remembers (the least recently changed go first).
ORDER_MEMORY = 100_000


class Sink(Protocol):
    """Where packets go: engine.io sockets in the server, a recorder in unit tests."""

    def backlog(self, eio_sid: str) -> int | None:
        """Packets waiting for the socket; None when it is gone."""

    async def send(self, eio_sid: str, packet: str) -> None: ...

    async def close(self, eio_sid: str) -> None:
        """Close a socket that cannot keep up."""


class OrderGuard:
    """The last sequence sent per trade or deposit: a message older than one already sent
    arrived late (two processes committed one after the other and published the other way
    round) and is dropped, as the newer one already shows the whole object."""

    def __init__(self, memory: int = ORDER_MEMORY) -> None:
        self.memory = memory
        self.last: OrderedDict[str, int] = OrderedDict()

    def admit(self, key: str, sequence: int) -> bool:
        last = self.last.get(key)
        if last is not None and sequence <= last:
            return False
        self.last[key] = sequence
        self.last.move_to_end(key)
        if len(self.last) > self.memory:
            self.last.popitem(last=False)
        return True


def event_packet(event: str, data: bytes) -> str:
    """A Socket.IO EVENT packet on the main namespace, the data passed through as written."""
    return "2[" + orjson.dumps(event).decode() + "," + data.decode() + "]"


def _delay_observe(event: str, header: dict[str, Any]) -> None:
    """From the commit that published the message (its ``committedAt``) to now, when it has
    been handed to this process's sockets."""
    committed = header.get("committedAt")
    if isinstance(committed, (int, float)):
        FEED_DELIVERY_LATENCY.labels(event).observe(max(0.0, time.time() - committed))


class Dispatcher:
    def __init__(
        self,
        *,
        registry: Registry,
        sink: Sink,
        access_changed: Callable[[str], Awaitable[None]],
        backlog_soft: int,
        backlog_hard: int,
    ) -> None:
        self.registry = registry
        self.sink = sink
        self.access_changed = access_changed
        self.backlog_soft = backlog_soft
        self.backlog_hard = backlog_hard
        self.order = OrderGuard()
        self.stats: Counter[str] = Counter()

    async def deliver(self, payload: bytes) -> None:
        """One message from the bus. Never raises: a bad message is logged and skipped."""
        head, _, data = payload.partition(b"\n")
        try:
            header = orjson.loads(head)
            kind = header["kind"]
            if kind == "merchant":
                await self._to_merchant(header, data)
                _delay_observe(str(header["event"]), header)
            elif kind == "market":
                await self._to_market(header, data)
                _delay_observe("market", header)
            elif kind == "access":
                await self.access_changed(str(header["merchantId"]))
        except Exception:
            self.stats["malformed"] += 1
            logger.exception("feed: cannot dispatch a message")

    async def _to_merchant(self, header: dict[str, Any], data: bytes) -> None:
        if not self.order.admit(str(header["order"]), int(header["sequence"])):
            self.stats["late"] += 1
            return
        packet = event_packet(str(header["event"]), data)
        for socket in self.registry.of_merchant(str(header["merchantId"])):
            if await self._backlog(socket) is not None:
                await self.sink.send(socket.eio_sid, packet)
                self.stats["sent"] += 1

    async def _to_market(self, header: dict[str, Any], data: bytes) -> None:
        game = int(header["game"])
        watchers = self.registry.watching(game)
        if not watchers:
            return
        body = json.loads(data, parse_float=Decimal)
        source = body.get("source")
        sourcing = header.get("sourcingPrice")
        packets: dict[Decimal, str] = {}
        for socket in watchers:
            if (game, source) in socket.missed:
                continue  # it will refetch anyway
            backlog = await self._backlog(socket)
            if backlog is None:
                continue
            if backlog >= self.backlog_soft:
                socket.missed.add((game, source))
                self.stats["dropped"] += 1
                continue
            packet = packets.get(socket.fee_rate)
            if packet is None:
                packet = packets[socket.fee_rate] = self._market_packet(
                    body, data, game=game, sourcing=sourcing, fee_rate=socket.fee_rate
                )
            await self.sink.send(socket.eio_sid, packet)
            self.stats["sent"] += 1

    @staticmethod
    def _market_packet(
        body: dict[str, Any], data: bytes, *, game: int, sourcing: str | None, fee_rate: Decimal
    ) -> str:
        if sourcing is None:
            return event_packet("market", data)
        priced = {
            **body,
            "item": market_item_priced(
                body["item"], game=game, sourcing=Decimal(sourcing), fee_rate=fee_rate
            ),
        }
        return event_packet("market", dumps(priced))

    async def _backlog(self, socket: FeedSocket) -> int | None:
        """The packets waiting for the socket; None when it is gone, or too far behind (it is
        then closed)."""
        backlog = self.sink.backlog(socket.eio_sid)
        if backlog is not None and backlog >= self.backlog_hard:
            self.stats["closed_slow"] += 1
            logger.info("feed: closing socket %s (%s packets behind)", socket.sid, backlog)
            await self.sink.close(socket.eio_sid)
            return None
        return backlog

    async def resumed(self) -> None:
        """The bus is read again after a gap: every market subscriber may have missed events."""
        for socket in list(self.registry.sockets.values()):
            socket.missed |= {(game, source) for game in socket.games for source in SOURCES}
        await self.send_owed_syncs()

    async def send_owed_syncs(self) -> None:
        """A ``sync`` to each socket that missed market events and has caught up since."""
        for socket in list(self.registry.sockets.values()):
            if not socket.missed:
                continue
            backlog = self.sink.backlog(socket.eio_sid)
            if backlog is None or backlog >= self.backlog_soft // 2:
                continue
            for game, source in sorted(socket.missed):
                sync = market_sync_json(game=game, reason="feed", source=source)
                await self.sink.send(socket.eio_sid, event_packet("market", dumps(sync)))
                self.stats["syncs"] += 1
            socket.missed.clear()
