"""A merchant's callback endpoint for benchmarks: answers every webhook 200 (approving every
withdrawal) from its own process, keeping connections open as merchants' web servers do.

It also counts what it got, per path and event type, with the time (Unix seconds) the last of
each type arrived: ``GET /stats`` answers ``{path: {type: [count, last_at]}}``, so a benchmark
knows when the last webhook of a load arrived (``bench/pipeline.py``).

    python bench/receiver.py PORT"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_received: dict[str, dict[str, list[float]]] = {}
_lock = threading.Lock()


class Approve(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        arrived = time.time()
        try:
            kind = str(json.loads(body).get("type", "?"))
        except (ValueError, AttributeError):
            kind = "?"
        with _lock:
            seen = _received.setdefault(self.path, {}).setdefault(kind, [0, 0.0])
            seen[0] += 1
            seen[1] = max(seen[1], arrived)
        self._answer(b"{}")

    def do_GET(self) -> None:
        with _lock:
            self._answer(json.dumps(_received).encode())

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Approve).serve_forever()
