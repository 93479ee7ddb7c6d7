"""Requests in the metrics: by route (the URL pattern Django resolved, never the raw path, so
the series stay as many as the routes), method and status, and their latency."""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from core.api.routes import request_route
from core.db import db_pools_observe
from core.metrics import HTTP_LATENCY, HTTP_REQUESTS

# Any other method (anyone may send any token there) is counted as one.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class RequestMetricsMiddleware:
    """First in the chain, so it times every other middleware and sees every answer (Django
    turns an exception raised below into a response before it gets here)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        route = request_route(request)
        method = request.method if request.method in METHODS else "other"
        HTTP_REQUESTS.labels(route, method, str(response.status_code)).inc()
        HTTP_LATENCY.labels(route, method).observe(elapsed)
        db_pools_observe()
        return response
