"""The open sockets of this feed process: per merchant (the merchant's room) and per game of the
market they subscribed to."""

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar

from core.metrics import FEED_SOCKETS

K = TypeVar("K")


@dataclass(eq=False)
class FeedSocket:
    sid: str
    eio_sid: str
    merchant_id: str
    key_id: int
    address: str
    fee_rate: Decimal
    games: set[int] = field(default_factory=set)
    # (game, source) of the market events dropped for this socket: a sync is owed for each.
    missed: set[tuple[int, str]] = field(default_factory=set)


class Registry:
    def __init__(self) -> None:
        self.sockets: dict[str, FeedSocket] = {}
        self._merchants: defaultdict[str, dict[str, FeedSocket]] = defaultdict(dict)
        self._games: defaultdict[int, dict[str, FeedSocket]] = defaultdict(dict)

    def __len__(self) -> int:
        return len(self.sockets)

    def add(self, socket: FeedSocket) -> None:
        if socket.sid not in self.sockets:
            FEED_SOCKETS.labels("merchant").inc()
        self.sockets[socket.sid] = socket
        self._merchants[socket.merchant_id][socket.sid] = socket

    def remove(self, sid: str) -> FeedSocket | None:
        socket = self.sockets.pop(sid, None)
        if socket is None:
            return None
        FEED_SOCKETS.labels("merchant").dec()
        _discard(self._merchants, socket.merchant_id, sid)
        for game in socket.games:
            _discard(self._games, game, sid)
        return socket

    def get(self, sid: str) -> FeedSocket | None:
        return self.sockets.get(sid)

    def of_merchant(self, merchant_id: str) -> list[FeedSocket]:
        return list(self._merchants.get(merchant_id, {}).values())

    def watching(self, game: int) -> list[FeedSocket]:
        return list(self._games.get(game, {}).values())

    def merchants(self) -> dict[str, list[str]]:
        """Each merchant with open sockets here, and their sids."""
        return {merchant: list(sockets) for merchant, sockets in self._merchants.items()}

    def subscribe(self, socket: FeedSocket, game: int) -> None:
        socket.games.add(game)
        self._games[game][socket.sid] = socket

    def unsubscribe(self, socket: FeedSocket, game: int) -> None:
        socket.games.discard(game)
        socket.missed = {(g, source) for g, source in socket.missed if g != game}
        _discard(self._games, game, socket.sid)


def _discard(index: defaultdict[K, dict[str, FeedSocket]], key: K, sid: str) -> None:
    members = index.get(key)
    if members is not None:
        members.pop(sid, None)
        if not members:
            del index[key]
