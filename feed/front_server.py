"""The quick start's front serves clients directly, with no reverse proxy before it to bound what
they send: its HTTP/1.1 is uvicorn's h11 protocol with the two limits a public port needs.

- A request's head (request line and headers) of at most ``MAX_HEAD_BYTES``: h11 keeps no more
  of an unfinished head than that (its ``max_incomplete_event_size``), a finished one over it is
  refused too (h11 checks only what is still incomplete, so a head that came in one read of the
  socket, about 250 KB, would pass), and either is answered in the API's envelope, 400
  ``VALIDATION_FAILED`` naming the URL or the headers, as gunicorn's worker answers what it will
  not read (config/gunicorn_worker.py). httptools, uvicorn's default parser, has no limit: one
  120 MB header value was kept whole.
- The whole head within ``FEED_FRONT_HEAD_TIMEOUT_SECONDS`` of when the connection began to wait
  for it (it opened, or the previous answer was sent), else the connection is closed. uvicorn
  times only an idle keep-alive connection, and any byte stops that clock: a connection that
  sent nothing, or one header byte every few seconds (slowloris), stayed open for ever. The
  clock runs while a head is awaited and stops once it is read, so neither a slow answer nor a
  socket kept open by the feed is cut."""

import asyncio
from http import HTTPStatus
from typing import Any

import h11
from django.conf import settings
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from config import gunicorn as web_server
from core.api.middleware import MAX_HEADERS_BYTES
from feed.front import refusal

# What gunicorn reads of a request line, with its CRLF.
MAX_REQUEST_LINE_BYTES = web_server.limit_request_line + 2
# Every head the web server and the application take fits: the longest request line, and the
# application's 16 KiB of header names and values with each of gunicorn's 100 header lines'
# ": " and CRLF, and the blank line. One a little over it is refused by them, in the same
# envelope.
MAX_HEAD_BYTES = (
    MAX_REQUEST_LINE_BYTES + MAX_HEADERS_BYTES + web_server.limit_request_fields * 4 + 2
)
REASONS = {"url": "The URL is too long.", "headers": "The headers are too large."}


class BoundedHeadConnection(h11.Connection):
    """h11's server side, refusing a request head over ``MAX_HEAD_BYTES`` whether it is still
    coming or came whole; ``refused_part`` names the part to blame."""

    def __init__(self) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.refused_part: str | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            unread, _ = self.trailing_data
            if exc.error_status_hint == 431 and len(unread) > MAX_HEAD_BYTES:
                line_end = unread.find(b"\n")
                raise self._refuse(line_end + 1 if line_end >= 0 else len(unread)) from exc
            raise
        if isinstance(event, h11.Request):
            # As it came, but for optional spaces around the values.
            request_line = len(event.method) + len(event.target) + len(b"  HTTP/1.1\r\n")
            head = request_line + sum(len(n) + len(v) + 4 for n, v in event.headers) + 2
            if head > MAX_HEAD_BYTES:
                raise self._refuse(request_line)
        return event

    def _refuse(self, request_line_bytes: int) -> h11.RemoteProtocolError:
        self.refused_part = "url" if request_line_bytes > MAX_REQUEST_LINE_BYTES else "headers"
        return h11.RemoteProtocolError("Request head too large", error_status_hint=431)


class FrontProtocol(H11Protocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.conn: BoundedHeadConnection = BoundedHeadConnection()
        self.head_timeout: float = settings.FEED_FRONT_HEAD_TIMEOUT_SECONDS
        self.head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._time_the_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._time_the_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._time_the_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_the_clock()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """h11 refused the request: in the envelope when its head is over the limit, as uvicorn
        does otherwise."""
        part = self.conn.refused_part
        if part is None:
            super().send_400_response(msg)
            return
        self.logger.warning("Refused a request head over %d bytes (%s).", MAX_HEAD_BYTES, part)
        status, headers, body = refusal("VALIDATION_FAILED", {part: REASONS[part]})
        headers += [(b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        start = h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase)
        self.transport.write(self.conn.send(start))
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()

    def _time_the_head(self) -> None:
        """The clock runs while a request's head is awaited, from when the wait began: the
        bytes that come do not restart it."""
        awaiting_head = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if awaiting_head and self.head_deadline is None:
            self.head_deadline = self.loop.call_later(self.head_timeout, self.transport.close)
        elif not awaiting_head:
            self._stop_the_clock()

    def _stop_the_clock(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None
