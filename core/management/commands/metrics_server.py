"""``manage.py metrics_server``: this machine's metrics on a port of their own, for a node that
runs no web server or keeps ``/metrics`` off its public port. It answers ``GET /metrics``
without a token: bind it to an address only Prometheus reaches."""

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.core.management.base import BaseCommand, CommandParser
from django.db import connections
from prometheus_client import CONTENT_TYPE_LATEST

from core.metrics import metrics_exposition


class MetricsHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.partition("?")[0] != "/metrics":
            self.send_error(404)
            return
        try:
            body = metrics_exposition()
        finally:
            connections.close_all()  # this thread's connections go back to the pool
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # a scrape every few seconds is not worth a log line


class Command(BaseCommand):
    help = "Serve this machine's metrics (every process's, and the scrape-time readings)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=9100)

    def handle(self, *args: object, **options: object) -> None:
        address = (str(options["host"]), int(str(options["port"])))
        server = ThreadingHTTPServer(address, MetricsHandler)
        server.daemon_threads = True
        self.stdout.write(f"metrics on http://{options['host']}:{options['port']}/metrics")
        server.serve_forever()
