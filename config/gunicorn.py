"""The web server's settings, the one place bin/start, the README's production command and the
fault tests take them from: ``gunicorn -c config/gunicorn.py --bind HOST:PORT
config.wsgi:application``. Options given on the command line win.

Request size: the application refuses a URL over 4096 characters and headers over 16 KiB in
all (``core.api.middleware``, the same under any server), in the error envelope. gunicorn reads
a request line of up to 8190 bytes (its maximum, so that the application's URL limit answers
first) and up to 100 header lines of 8190 bytes each; what it refuses itself, over those or
malformed, the worker class answers with the same envelope instead of gunicorn's HTML page."""

from typing import Any

from gunicorn.glogging import Logger

from core.context import RequestIdLogFilter
from core.logs import JsonFormatter, log_format

worker_class = "config.gunicorn_worker.EnvelopeThreadWorker"  # gthread
workers = 2
threads = 4

limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

loglevel = "warning"


class ServiceLogger(Logger):
    """gunicorn's own log (``gunicorn.error``: its start, workers booted, lost or timed out,
    requests it refused) in the service's format: one JSON object a line under
    ``LOG_FORMAT=json``. Each request's access line is the application's
    (``core.api.middleware``, the ``access`` logger), so gunicorn keeps none of its own."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        if log_format() == "json":
            for handler in self.error_log.handlers + self.access_log.handlers:
                handler.setFormatter(JsonFormatter())
                handler.addFilter(RequestIdLogFilter())


logger_class = ServiceLogger


def post_worker_init(worker: object) -> None:
    """Build the OpenAPI document in the background as a worker starts, so no request waits for
    it (config/openapi.py); the application is loaded by now."""
    import threading

    from config.openapi import openapi_document

    threading.Thread(target=openapi_document, name="openapi-build", daemon=True).start()


# Metrics (core.metrics.store): the master gives its workers a folder of their own before it
# forks them, and a worker that exits stops counting in the live gauges.
def on_starting(server: object) -> None:
    from core.metrics.store import role_start

    role_start("web")


def child_exit(server: object, worker: Any) -> None:
    from core.metrics.store import process_dead

    process_dead(worker.pid)
