"""A web server for the quick start's front to forward to, on a Unix socket as bin/start's
gunicorn is: it keeps every request's head as it arrived and answers as a test needs.

- ``/login/<who>`` sets a session cookie for ``who`` (``Set-Cookie``), as the admin's login does,
  and answers credentials for ``who`` (``Authentication-Info``);
- ``/held`` answers once the test sets ``release``;
- any other path answers the request's headers as JSON, gzip-compressed when the request's
  ``Accept-Encoding`` takes gzip (as the API's ``/openapi.json`` does); each answer also
  carries a header its ``Connection`` names (``X-Upstream-Hop``), which ends at the front."""

import gzip
import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.feed.harness import WAIT_SECONDS


@dataclass(frozen=True)
class Seen:
    """One request as the upstream read it: headers in order, names in lower case."""

    path: str
    headers: tuple[tuple[str, str], ...]

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]

    @property
    def names(self) -> set[str]:
        return {name for name, _ in self.headers}


@dataclass
class Upstream:
    socket_path: Path
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def api_upstream(self) -> str:
        return f"unix:{self.socket_path}"

    def seen_at(self, path: str) -> list[Seen]:
        return [request for request in self.seen if request.path == path]


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def upstream(socket_path: Path) -> Iterator[Upstream]:
    state = Upstream(socket_path)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # connections kept, as gunicorn keeps them

        def do_GET(self) -> None:
            state.seen.append(
                Seen(self.path, tuple((k.lower(), v) for k, v in self.headers.items()))
            )
            if self.path == "/held":
                state.release.wait(WAIT_SECONDS)
            self.send_response(200)
            if self.path.startswith("/login/"):
                who = self.path.removeprefix("/login/").partition("?")[0]
                self.send_header("Set-Cookie", f"sessionid={who}-session; Path=/; HttpOnly")
                self.send_header("Authentication-Info", f'nextnonce="{who}-nonce"')
            body = json.dumps({"headers": self.headers.items()}).encode()
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                body = gzip.compress(body)
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Vary", "Accept-Encoding")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "keep-alive, X-Upstream-Hop")
            self.send_header("X-Upstream-Hop", "for the front only")
            self.end_headers()
            self.wfile.write(body)

        def address_string(self) -> str:
            return "front"  # a Unix socket's peer has no address

        def log_message(self, *args: object) -> None:
            pass

    server = _UnixHTTPServer(str(socket_path), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
