"""APIError and the one exception handler that renders every failure as the error envelope."""

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.db import pooled_connections_recheck, transaction_conflict
from core.errors import CATALOG, ErrorSpec

logger = logging.getLogger(__name__)

MAX_FIELDS = 20
FIELDS_NAMED_IN_MESSAGE = 5


class APIError(drf.APIException):
    """A catalog error. Raise it anywhere; the handler renders the envelope."""

    def __init__(
        self,
        key: str,
        message: str | list[str] | None = None,
        *,
        fields: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.spec: ErrorSpec = CATALOG[key]
        self.status_code = self.spec.status
        self.message = message if message is not None else self.spec.message
        self.fields = dict(fields) if fields is not None else None
        self.details = dict(details) if details is not None else None
        self.headers = dict(headers or {})
        super().__init__(detail=self.message)

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.spec.code,
            "key": self.spec.key,
            "message": self.message,
        }
        if self.fields is not None:
            error["fields"] = self.fields
        if self.details is not None:
            error["details"] = self.details
        return error


def validation_error(fields: Mapping[str, str]) -> APIError:
    """VALIDATION_FAILED with at most 20 dotted paths, the message naming the first five."""
    kept = dict(list(fields.items())[:MAX_FIELDS])
    named = list(kept)[:FIELDS_NAMED_IN_MESSAGE]
    more = len(fields) - len(named)
    message = "Invalid fields: " + ", ".join(named) + (f" (and {more} more)" if more > 0 else "")
    return APIError("VALIDATION_FAILED", message, fields=kept)


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


def database_unavailable(exc: Exception) -> APIError:
    """A lost database connection: a retryable 503, and the pool rid of its dead connections."""
    logger.warning("database unavailable: %s", exc)
    pooled_connections_recheck()
    return APIError("SERVICE_UNAVAILABLE", headers={"Retry-After": "5"})


# Redis (cache, rate limits) refusing connections or not answering within its socket timeout.
REDIS_UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError)


def redis_unavailable(exc: Exception) -> APIError:
    """A Redis that cannot be reached: the same retryable 503 as a lost database."""
    logger.warning("redis unavailable: %s", exc)
    return APIError("SERVICE_UNAVAILABLE", headers={"Retry-After": "5"})


def _as_api_error(exc: Exception) -> APIError:
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, drf.ValidationError):
        return validation_error(dict(_flatten(exc.detail)))
    if isinstance(exc, drf.ParseError):
        return validation_error({"body": f"Malformed JSON: {exc.detail}"})
    if isinstance(exc, drf.UnsupportedMediaType):
        return APIError("UNSUPPORTED_MEDIA_TYPE")
    if isinstance(exc, drf.MethodNotAllowed):
        return APIError("METHOD_NOT_ALLOWED")
    if isinstance(exc, (drf.NotFound, Http404)):
        return APIError("NOT_FOUND")
    if isinstance(exc, drf.NotAuthenticated):
        return APIError("UNAUTHORIZED")
    if isinstance(exc, (drf.PermissionDenied, PermissionDenied)):
        return APIError("FORBIDDEN", "Permission denied.")
    if isinstance(exc, OperationalError) and transaction_conflict(exc):
        # A deadlock or serialization failure: the database is there, this request lost a race.
        logger.warning("transaction conflict: %s", exc)
        return APIError("TRANSACTION_CONFLICT", headers={"Retry-After": "1"})
    if isinstance(exc, (OperationalError, InterfaceError)):
        return database_unavailable(exc)
    if isinstance(exc, REDIS_UNAVAILABLE):
        return redis_unavailable(exc)
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return APIError("INTERNAL_ERROR")
    logger.exception("unhandled error")
    return APIError("INTERNAL_ERROR")


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response:
    """Every failure inside a DRF view: roll back, then render the catalog entry."""
    set_rollback()
    error = _as_api_error(exc)
    return Response(error.body(), status=error.status_code, headers=error.headers)
