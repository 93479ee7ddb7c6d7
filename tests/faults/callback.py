"""The merchant's callback endpoint as a real HTTP server on a fixed loopback port: it can be
taken down and brought back on the same URL, and it can hold requests open (``hold``) so a test
knows the sender is in the middle of one."""

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.faults.processes import free_port
from tests.withdrawals.receiver import Received

HOLD_SECONDS = 30.0  # a held request is released by the test long before this


class CallbackServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self.received: list[Received] = []
        self.answer: Callable[[Received], tuple[int, bytes]] = lambda _: (200, b"{}")
        self._holding: Callable[[Received], bool] | None = None
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # --- what arrived ----------------------------------------------------------------------

    def ids(self, event_type: str | None = None) -> list[str]:
        return [r.json["id"] for r in self.received if event_type in (None, r.json.get("type"))]

    def count(self, event_id: str) -> int:
        return sum(1 for r in self.received if r.json.get("id") == event_id)

    # --- holding requests open ---------------------------------------------------------------

    def hold(self, matching: Callable[[Received], bool]) -> None:
        """Requests ``matching`` are recorded, then left unanswered until ``release()``."""
        self._released.clear()
        self._holding = matching

    def release(self) -> None:
        self._holding = None
        self._released.set()

    def _wait_if_held(self, got: Received) -> None:
        matching = self._holding
        if matching is not None and matching(got):
            self._released.wait(HOLD_SECONDS)

    # --- up and down -------------------------------------------------------------------------

    def start(self) -> None:
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                got = Received(
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length),
                )
                state.received.append(got)
                state._wait_if_held(got)
                status, body = state.answer(got)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # answering a sender that was killed meanwhile fails; that is the point

        self._server = Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        """Down: the port refuses connections."""
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
