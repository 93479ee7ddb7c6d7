"""Request ids, request limits, maintenance mode, and the envelope for responses made outside
DRF views."""

import logging
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import get_bytes_from_wsgi
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.encoding import escape_uri_path
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from core.api.exceptions import (
    REDIS_UNAVAILABLE,
    database_unavailable,
    error_response,
    redis_unavailable,
)
from core.api.routes import request_route
from core.api.views import ApiView
from core.context import end_request, start_request
from core.errors import DomainError, validation_error
from core.logs import LOG_FIELDS
from core.selectors import maintenance_is_on

# One line per request answered (docs/ops/logs.md): a logger of its own, so that a deployment
# can route or silence it apart from the rest.
access_logger = logging.getLogger("access")

API_PREFIXES = ("/auth/", "/secure/", "/client/", "/v1/", "/sandbox/")

# The application's own limits, the same under any web server (config/gunicorn.py lets requests
# over them through to here, up to its own limits).
# Characters of the path and the query, both percent-decoded: the OpenAPI document bounds
# parameters in characters, so a URL within its maxLengths is within this however it is encoded.
MAX_URL_LENGTH = 4096
MAX_HEADERS_BYTES = 16 * 1024  # names and values of all headers together
NOT_TEXT = "Must be UTF-8 text without NUL characters."


class RequestIdMiddleware:
    """The request's id for its answer and every line it logs, and its access line once it is
    answered (every answer: a 401 and a 429 alike; its merchant once authenticated)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        request_id = start_request(request.META.get("HTTP_X_REQUEST_ID"))
        try:
            response = self.get_response(request)
            response["X-Request-Id"] = request_id
            access_log(request, response, time.perf_counter() - started)
        finally:
            end_request()
        return response


def access_log(request: HttpRequest, response: HttpResponse, seconds: float) -> None:
    """``GET /v1/trades/T1 200 12.3 ms``; as JSON, the fields apart: the route is the URL
    pattern the metrics count it under. The path is percent-encoded again (a decoded line
    break would start a forged line of its own), the query string left out (it may hold a
    trade URL's token)."""
    if not access_logger.isEnabledFor(logging.INFO):
        return
    duration_ms = round(seconds * 1000, 1)
    path = escape_uri_path(request.path)
    access_logger.info(
        "%s %s %s %s ms",
        request.method,
        path,
        response.status_code,
        duration_ms,
        extra={
            LOG_FIELDS: {
                "method": request.method,
                "path": path,
                "route": request_route(request),
                "status": response.status_code,
                "durationMs": duration_ms,
                # The caller's address as the API keys' IP lists see it (NUM_PROXIES); DRF
                # reads only the request's META for it.
                "client": BaseThrottle().get_ident(cast(Request, request)),
            }
        },
    )


class RequestLimitsMiddleware:
    """Refuses, before routing or authentication look at it, a request no view should have to
    handle: a URL or headers over the limits above, a declared body over
    DATA_UPLOAD_MAX_MEMORY_SIZE (which Django itself checks only when a view reads the body), a
    body in a transfer coding (chunked: Django would read it as empty), or a path or query that
    is not UTF-8 text without NUL (PostgreSQL text cannot hold NUL; Django
    would pass it on to every lookup). VALIDATION_FAILED, ``fields`` naming the part."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = _part_refused(request)
        if refused is not None:
            field, reason = refused
            return error_response(validation_error({field: reason}))
        return self.get_response(request)


def _part_refused(request: HttpRequest) -> tuple[str, str] | None:
    """The first part of the request over its limit, as (field, reason), or None."""
    meta = request.META
    # The path as Django decoded it: bytes that are not UTF-8 are kept as %XX there, which is
    # text that names nothing; a NUL stays a NUL.
    path = request.path_info
    query = get_bytes_from_wsgi(meta, "QUERY_STRING", "")
    if len(path) + len(_decoded(query)) > MAX_URL_LENGTH:
        return "url", f"The URL is longer than {MAX_URL_LENGTH} characters."
    if _headers_bytes(meta) > MAX_HEADERS_BYTES:
        return "headers", f"The headers are larger than {MAX_HEADERS_BYTES} bytes."
    body_refused = _declared_body_refused(meta)
    if body_refused is not None:
        return "body", body_refused
    if meta.get("HTTP_TRANSFER_ENCODING"):
        # Django reads a body by its Content-Length only: a chunked one would be read as empty.
        return "body", "Send the body with a Content-Length; a transfer coding is not read."
    if "\x00" in path:
        return "path", NOT_TEXT
    for name, value in _query_pairs(query):
        if not _is_text(value) or not _is_text(name):
            return (name.decode() if _is_text(name) and name else "query"), NOT_TEXT
    return None


def _decoded(query: bytes) -> str:
    return _unquote(query).decode(errors="replace")


def _headers_bytes(meta: Mapping[str, Any]) -> int:
    return sum(
        len(name) + len(value)
        for name, value in meta.items()
        if name.startswith("HTTP_") or name in ("CONTENT_TYPE", "CONTENT_LENGTH")
    )


def _declared_body_refused(meta: Mapping[str, Any]) -> str | None:
    """Why the declared body is refused: a Content-Length that is not a number of bytes
    (Django's ``request.body`` raises ValueError on one; gunicorn refuses it first, a test client
    or another server may not), or one over DATA_UPLOAD_MAX_MEMORY_SIZE."""
    declared = meta.get("CONTENT_LENGTH") or "0"
    if not (declared.isascii() and declared.isdigit()):
        return "Content-Length is not a number of bytes."
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return "The body is too large." if limit is not None and int(declared) > limit else None


def _query_pairs(query: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Names and values percent-decoded as QueryDict decodes them, but left as bytes (QueryDict
    replaces what is not UTF-8)."""
    if not query:
        return
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        yield _unquote(name), _unquote(value)


def _unquote(part: bytes) -> bytes:
    return unquote_to_bytes(part.replace(b"+", b" "))


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return b"\x00" not in raw


class OutsideApi:
    """Mixed into a middleware that serves the admin and the docs (sessions, CSRF, the admin's
    user, messages): it runs for every request but the API's, which take no cookie and whose
    views are CSRF-exempt, and would only pay for its setup. (Subclasses of Django's own, so the
    admin's checks still find them.)"""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(API_PREFIXES):
            response: HttpResponse = self.get_response(request)  # type: ignore[attr-defined]
        else:
            response = super().__call__(request)  # type: ignore[misc]
        return response

    def process_view(
        self, request: HttpRequest, view: Callable[..., HttpResponse], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        process = getattr(super(), "process_view", None)
        if process is None or request.path_info.startswith(API_PREFIXES):
            return None
        answer: HttpResponse | None = process(request, view, args, kwargs)
        return answer


class SessionsOutsideApi(OutsideApi, SessionMiddleware):
    pass


class CsrfOutsideApi(OutsideApi, CsrfViewMiddleware):  # type: ignore[misc]
    pass


class AuthenticationOutsideApi(OutsideApi, AuthenticationMiddleware):
    pass


class MessagesOutsideApi(OutsideApi, MessageMiddleware):
    pass


class MaintenanceMiddleware:
    """Staff switch maintenance mode in the admin; API calls then get 1007 with HTTP 503. Views
    that read the switch themselves (``ApiView.checks_maintenance``: the merchant and client
    endpoints, in their one round trip to Redis) are left to do so; an API path no route takes
    is checked by ``not_found``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view: Callable[..., HttpResponse],
        args: Any,
        kwargs: Any,
    ) -> HttpResponse | None:
        view_class = getattr(view, "view_class", None)
        checked = (
            isinstance(view_class, type)
            and issubclass(view_class, ApiView)
            and view_class.checks_maintenance
        )
        return None if checked else _maintenance_answer(request)


def _maintenance_answer(request: HttpRequest) -> HttpResponse | None:
    if request.path.startswith(API_PREFIXES) and maintenance_is_on():
        return error_response(DomainError("SYSTEM_MAINTENANCE", retry_after=60))
    return None


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _maintenance_answer(request) or error_response(DomainError("NOT_FOUND"))


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this while handling the exception: a database or Redis lost outside a DRF
    # view (in a middleware, e.g. the maintenance check) is the same retryable 503 as inside one.
    exc = sys.exc_info()[1]
    if isinstance(exc, (OperationalError, InterfaceError)):
        return error_response(database_unavailable(exc))
    if isinstance(exc, REDIS_UNAVAILABLE):
        return error_response(redis_unavailable(exc))
    return error_response(DomainError("INTERNAL_ERROR"))


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return error_response(validation_error({"body": "The body is too large."}))
    return error_response(validation_error({"body": "Bad request."}))


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(DomainError("FORBIDDEN", "Permission denied."))
