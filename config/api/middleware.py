"""Request ids, maintenance mode, and the envelope for responses made outside DRF views."""

import logging
import sys
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

from config.api.context import current_request_id, end_request, start_request
from config.api.exceptions import (
    REDIS_UNAVAILABLE,
    APIError,
    database_unavailable,
    redis_unavailable,
    validation_error,
)
from config.api.rendering import envelope_response

API_PREFIXES = ("/auth/", "/secure/", "/client/", "/v1/", "/sandbox/")


class RequestIdLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id()
        return True


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = start_request()
        try:
            response = self.get_response(request)
        finally:
            end_request()
        response["X-Request-Id"] = request_id
        return response


class MaintenanceMiddleware:
    """Staff switch maintenance mode in the admin; API calls then get 1007 with HTTP 503."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from trading.selectors import maintenance_is_on

        if request.path.startswith(API_PREFIXES) and maintenance_is_on():
            error = APIError("SYSTEM_MAINTENANCE", headers={"Retry-After": "60"})
            return envelope_response(error.body(), error.status_code, error.headers)
        return self.get_response(request)


def _render(error: APIError) -> HttpResponse:
    return envelope_response(error.body(), error.status_code, error.headers)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _render(APIError("NOT_FOUND"))


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this while handling the exception: a database or Redis lost outside a DRF
    # view (in a middleware, e.g. the maintenance check) is the same retryable 503 as inside one.
    exc = sys.exc_info()[1]
    if isinstance(exc, (OperationalError, InterfaceError)):
        return _render(database_unavailable(exc))
    if isinstance(exc, REDIS_UNAVAILABLE):
        return _render(redis_unavailable(exc))
    return _render(APIError("INTERNAL_ERROR"))


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return _render(validation_error({"body": "The body is too large."}))
    return _render(validation_error({"body": "Bad request."}))


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _render(APIError("FORBIDDEN", "Permission denied."))
