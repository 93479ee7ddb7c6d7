"""The one place failures become the error envelope: a ``DomainError`` with its catalog status
and ``Retry-After``, DRF's own refusals, a lost database or Redis."""

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, HttpResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.api.rendering import envelope_response
from core.db import pooled_connections_recheck, transaction_conflict
from core.errors import DomainError, validation_error

logger = logging.getLogger(__name__)


def error_body(error: DomainError) -> dict[str, Any]:
    """The envelope's ``error``: code, key and message, with fields and details when given."""
    body: dict[str, Any] = {"code": error.spec.code, "key": error.key, "message": error.message}
    if error.fields is not None:
        body["fields"] = error.fields
    if error.details is not None:
        body["details"] = error.details
    return body


def error_headers(error: DomainError) -> dict[str, str]:
    return {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}


def error_response(error: DomainError) -> HttpResponse:
    """The error envelope outside DRF views (middleware, URL-level 404, crashes)."""
    return envelope_response(error_body(error), error.spec.status, error_headers(error))


def _flatten(detail: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """DRF's nested error detail to (dotted path, first reason) pairs: ``items.0.price``."""
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            name = "body" if key in ("non_field_errors", "__all__") and not path else str(key)
            if key in ("non_field_errors", "__all__") and path:
                yield from _flatten(value, path)
            else:
                yield from _flatten(value, f"{path}.{name}" if path else name)
    elif isinstance(detail, list):
        if detail and all(isinstance(entry, (str, drf.ErrorDetail)) for entry in detail):
            yield path or "body", str(detail[0])
        else:
            for index, entry in enumerate(detail):
                if entry:
                    yield from _flatten(entry, f"{path}.{index}" if path else str(index))
    else:
        yield path or "body", str(detail)


def database_unavailable(exc: Exception) -> DomainError:
    """A lost database connection: a retryable 503, and the pool rid of its dead connections."""
    logger.warning("database unavailable: %s", exc)
    pooled_connections_recheck()
    return DomainError("SERVICE_UNAVAILABLE", retry_after=5)


# Redis (cache, rate limits) refusing connections or not answering within its socket timeout.
REDIS_UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError)


def redis_unavailable(exc: Exception) -> DomainError:
    """A Redis that cannot be reached: the same retryable 503 as a lost database."""
    logger.warning("redis unavailable: %s", exc)
    return DomainError("SERVICE_UNAVAILABLE", retry_after=5)


def as_domain_error(exc: Exception) -> DomainError:
    """The catalog entry any failure is answered with (logged when it is not a refusal)."""
    if isinstance(exc, DomainError):
        return exc
    if isinstance(exc, drf.ValidationError):
        return validation_error(dict(_flatten(exc.detail)))
    if isinstance(exc, drf.ParseError):
        return validation_error({"body": f"Malformed JSON: {exc.detail}"})
    if isinstance(exc, drf.UnsupportedMediaType):
        return DomainError("UNSUPPORTED_MEDIA_TYPE")
    if isinstance(exc, drf.MethodNotAllowed):
        return DomainError("METHOD_NOT_ALLOWED")
    if isinstance(exc, (drf.NotFound, Http404)):
        return DomainError("NOT_FOUND")
    if isinstance(exc, drf.NotAuthenticated):
        return DomainError("UNAUTHORIZED")
    if isinstance(exc, (drf.PermissionDenied, PermissionDenied)):
        return DomainError("FORBIDDEN", "Permission denied.")
    if isinstance(exc, OperationalError) and transaction_conflict(exc):
        # A deadlock or serialization failure: the database is there, this request lost a race.
        logger.warning("transaction conflict: %s", exc)
        return DomainError("TRANSACTION_CONFLICT", retry_after=1)
    if isinstance(exc, (OperationalError, InterfaceError)):
        return database_unavailable(exc)
    if isinstance(exc, REDIS_UNAVAILABLE):
        return redis_unavailable(exc)
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return DomainError("INTERNAL_ERROR")
    logger.exception("unhandled error")
    return DomainError("INTERNAL_ERROR")


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response:
    """Every failure inside a DRF view: roll back, then render the catalog entry."""
    set_rollback()
    error = as_domain_error(exc)
    return Response(error_body(error), status=error.spec.status, headers=error_headers(error))
