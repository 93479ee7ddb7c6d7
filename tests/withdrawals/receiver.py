"""A real HTTP server on loopback that plays the merchant's callback endpoint."""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    client_port: int = 0  # one port per connection the sender opened

    @property
    def json(self) -> dict:
        return orjson.loads(self.body)

    def verifies(self, secret: str) -> bool:
        """Whether a receiver holding ``secret`` accepts it (the standardwebhooks library)."""
        try:
            Webhook(secret).verify(self.body, self.headers)
        except WebhookVerificationError:
            return False
        return True


@dataclass
class Receiver:
    """Answers each POST with ``answer(received) -> (status, body)``; keeps what it got."""

    url: str
    received: list[Received] = field(default_factory=list)
    answer: Callable[[Received], tuple[int, bytes]] = lambda _: (200, b"{}")
    answer_headers: dict[str, str] = field(default_factory=dict)  # sent with every answer

    def of_type(self, event_type: str) -> list[Received]:
        return [r for r in self.received if r.json.get("type") == event_type]


@contextmanager
def receiver(*, keep_alive: bool = False) -> Iterator[Receiver]:
    """HTTP/1.0 (a connection per request), or HTTP/1.1 keeping connections open."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            got = Received(
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length),
                client_port=self.client_address[1],
            )
            state.received.append(got)
            status, body = state.answer(got)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in state.answer_headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
