"""A merchant's callback endpoint for benchmarks: answers every webhook 200 (approving every
withdrawal) from its own process, keeping connections open as merchants' web servers do.

    python bench/receiver.py PORT"""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Approve(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Approve).serve_forever()
