"""The web server's settings, the one place bin/start, the README's production command and the
fault tests take them from: ``gunicorn -c config/gunicorn.py --bind HOST:PORT
config.wsgi:application``. Options given on the command line win.

Request size: the application refuses a URL over 4096 characters and headers over 16 KiB in
all (``config.api.middleware``, the same under any server), in the error envelope. gunicorn reads
a request line of up to 8190 bytes (its maximum, so that the application's URL limit answers
first) and up to 100 header lines of 8190 bytes each; what it refuses itself, over those or
malformed, the worker class answers with the same envelope instead of gunicorn's HTML page."""

from typing import Any

worker_class = "config.gunicorn_worker.EnvelopeThreadWorker"  # gthread
workers = 2
threads = 4

limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

loglevel = "warning"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms requestId=%({x-request-id}o)s'


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
