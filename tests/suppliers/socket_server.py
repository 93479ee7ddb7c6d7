"""A recorded Waxpeer listing socket: a python-socketio server (Engine.IO 4, path
``/socket.io/``) on loopback that answers as Waxpeer's listing feed does (the protocol and its
sources are in trading/marketplace/suppliers/waxpeer.py): the API key in the ``authorization``
header (refused otherwise), ``sub`` with ``{name: <game>, value: true}`` joining that game's
stream, then ``new`` / ``update`` / ``removed`` events of the games subscribed to. The test
emits events, drops every connection (the client must come back and subscribe again), and can
start it late (the client must keep trying)."""

import asyncio
import threading
from typing import Any

import socketio
import uvicorn

from tests.faults.processes import free_port


class RecordedWaxpeerSocket:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.connects = 0
        self.refused = 0
        self.subscriptions: list[tuple[str, dict[str, Any]]] = []  # (sid, data)
        self.sids: set[str] = set()
        self.sio = socketio.AsyncServer(async_mode="asgi")
        self.sio.on("connect", self._connect)
        self.sio.on("disconnect", self._disconnect)
        self.sio.on("sub", self._sub)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    async def _connect(self, sid: str, environ: dict[str, Any], auth: object = None) -> bool:
        if environ.get("HTTP_AUTHORIZATION") != self.api_key:
            self.refused += 1
            return False
        self.connects += 1
        self.sids.add(sid)
        return True

    async def _disconnect(self, sid: str, *reason: object) -> None:
        self.sids.discard(sid)

    async def _sub(self, sid: str, data: dict[str, Any]) -> None:
        self.subscriptions.append((sid, data))
        if data.get("value"):
            await self.sio.enter_room(sid, str(data.get("name")))

    # ---- run by the test ------------------------------------------------------------------

    def start(self) -> "RecordedWaxpeerSocket":
        app = socketio.ASGIApp(self.sio, socketio_path="socket.io")
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        ready = threading.Event()

        def serve() -> None:
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            assert self.server is not None
            self.loop.call_soon(ready.set)
            self.loop.run_until_complete(self.server.serve())

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(10)

    def _run(self, work: Any) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(10)

    def emit(self, event: str, payload: dict[str, Any], game: str = "csgo") -> None:
        """An event to every socket subscribed to ``game``."""
        self._run(self.sio.emit(event, payload, room=game))

    def drop_all(self) -> None:
        """Every connection cut from this side (a deploy at the supplier, a network blip)."""
        for sid in list(self.sids):
            self._run(self.sio.disconnect(sid))

    def subscribed(self, game: str = "csgo") -> int:
        return sum(1 for _, data in self.subscriptions if data == {"name": game, "value": True})
