"""The quick start's front (``manage.py feed --api-upstream``, run so by ``bin/start``): one port
that answers as production's reverse proxy does, ``/socket.io/`` by this feed process itself and
every other request forwarded to the web server. The original SDK opens its Socket.IO client on
the API's own origin (shared decisions, section 11), so it works against the quick start
unchanged. Production has its reverse proxy there instead (README, "Production"); this is not
meant to replace it.

The forwarding is plain HTTP/1.1 to gunicorn (over a Unix socket in the quick start): the
request's body read whole (the API's bodies are small and bounded, and gunicorn hands Django no
chunked body), its client address appended to ``X-Forwarded-For`` as nginx's
``$proxy_add_x_forwarded_for`` does, the answer streamed back as it comes.

A forwarder keeps nothing between callers: each request carries its own client's headers and
nothing else (no cookie jar, no credentials, no header the client did not send; aiohttp would
add its own ``Accept-Encoding``, and answers came gzip-compressed to clients that never asked),
and each answer goes back to its own client only. The HTTP server in front of this app bounds a
request's head in size and time (feed/front_server.py)."""

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import aiohttp
import socketio

from core.errors import CATALOG
from core.json import dumps
from feed.server import FeedServer

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

# Headers of one connection, not of the request (RFC 9110, section 7.6.1; with those its
# Connection header names), and the length, which the forwarded request sets itself.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
# Far above the API's own upload limit (it answers VALIDATION_FAILED for what is over it).
MAX_BODY_BYTES = 16 * 1024 * 1024
# The web server's answer may take as long as a request may; connecting must be quick.
TIMEOUT = aiohttp.ClientTimeout(total=None, connect=5, sock_read=120)
# Headers aiohttp writes itself when a request has none: the client's go as sent, or not at all.
AS_THE_CLIENT_SENT = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")


class ApiForwarder:
    """An ASGI app forwarding every HTTP request to ``upstream``: ``unix:/path/web.sock`` or
    ``http://host:port``."""

    def __init__(self, upstream: str) -> None:
        self.socket_path = upstream.removeprefix("unix:") if upstream.startswith("unix:") else ""
        self.base = "http://quickstart" if self.socket_path else upstream.rstrip("/")
        self.session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        connector = (
            aiohttp.UnixConnector(path=self.socket_path)
            if self.socket_path
            else aiohttp.TCPConnector()
        )
        # Bodies pass through as they are (compressed or not); redirects reach the client. No
        # cookie jar: one kept every Set-Cookie and sent it with everybody's requests (a staff
        # login made the admin anyone's); no credentials or proxies from the environment.
        self.session = aiohttp.ClientSession(
            connector=connector,
            timeout=TIMEOUT,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=AS_THE_CLIENT_SENT,
            trust_env=False,
        )

    async def stop(self) -> None:
        if self.session is not None:
            await self.session.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # A WebSocket anywhere but /socket.io/: nothing of the API takes one.
            await send({"type": "websocket.close", "code": 1000})
            return
        body = await _body(receive)
        if body is None:
            await _refuse(send, "VALIDATION_FAILED", {"body": "The body is too large."})
            return
        assert self.session is not None, "started by the ASGI lifespan"
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        try:
            async with self.session.request(
                scope["method"],
                self.base + target.decode("latin-1"),
                headers=_forwarded_headers(scope),
                data=body or None,  # no length on a request that has no body
                allow_redirects=False,
            ) as answer:
                dropped = _hop_by_hop(answer.raw_headers) - {"content-length"}
                await send(
                    {
                        "type": "http.response.start",
                        "status": answer.status,
                        "headers": [
                            (name.lower(), value)
                            for name, value in answer.raw_headers
                            if name.decode("latin-1").lower() not in dropped
                        ],
                    }
                )
                async for chunk in answer.content.iter_any():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
        except (aiohttp.ClientError, TimeoutError) as exc:
            logger.warning("front: the web server did not answer: %s", exc)
            await _refuse(send, "SERVICE_UNAVAILABLE", None)


async def _body(receive: Receive) -> bytes | None:
    """The whole request body, or None past ``MAX_BODY_BYTES``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _hop_by_hop(headers: Iterable[tuple[bytes, bytes]]) -> frozenset[str]:
    """The names (lower case) of the headers that end at this hop: ``HOP_BY_HOP`` and every
    option of the message's ``Connection`` headers (RFC 9110, section 7.6.1)."""
    options = frozenset(
        option.strip().lower()
        for name, value in headers
        if name.lower() == b"connection"
        for option in value.decode("latin-1").split(",")
    )
    return HOP_BY_HOP | options


def _forwarded_headers(scope: Scope) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    forwarded_for = ""
    dropped = _hop_by_hop(scope["headers"])
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        if name.lower() in dropped:
            continue
        if name.lower() == "x-forwarded-for":
            forwarded_for = f"{forwarded_for}, {value}" if forwarded_for else value
        else:
            headers.append((name, value))
    client = scope.get("client")
    peer = str(client[0]) if client else ""
    headers.append(("X-Forwarded-For", f"{forwarded_for}, {peer}" if forwarded_for else peer))
    return headers


def refusal(
    key: str, fields: dict[str, str] | None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The API's error envelope, for what the front answers itself: status, headers, body."""
    spec = CATALOG[key]
    error: dict[str, Any] = {"code": spec.code, "key": spec.key, "message": spec.message}
    if fields is not None:
        error["fields"] = fields
    request_id = str(uuid.uuid4())
    body = dumps({"requestId": request_id, "success": False, "error": error})
    headers = [(b"content-type", b"application/json"), (b"x-request-id", request_id.encode())]
    if spec.status == 503:
        headers.append((b"retry-after", b"5"))
    return spec.status, headers, body


async def _refuse(send: Send, key: str, fields: dict[str, str] | None) -> None:
    status, headers, body = refusal(key, fields)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def front_app(server: FeedServer, *, api_upstream: str) -> socketio.ASGIApp:
    """The feed's Socket.IO at ``/socket.io/``, everything else forwarded to the API."""
    forwarder = ApiForwarder(api_upstream)

    async def start() -> None:
        await forwarder.start()
        await server.start()

    async def stop() -> None:
        await server.stop()
        await forwarder.stop()

    return socketio.ASGIApp(
        server.sio,
        other_asgi_app=forwarder,
        socketio_path="socket.io",
        on_startup=start,
        on_shutdown=stop,
    )
