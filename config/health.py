"""``GET /health``: the database, the cache and the broker, without authentication."""

import logging
from collections.abc import Callable

from django.core.cache import cache
from django.db import DatabaseError, connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.exceptions import APIError
from config.api.views import ApiView
from config.celery import app as celery_app
from config.db import pooled_connections_recheck

logger = logging.getLogger(__name__)


def _database() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        pooled_connections_recheck()
        raise


def _cache() -> None:
    cache.set("health-probe", "ok", timeout=10)
    if cache.get("health-probe") != "ok":
        raise RuntimeError("cache did not keep a value")


def _broker() -> None:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


CHECKS: dict[str, Callable[[], None]] = {"database": _database, "cache": _cache, "broker": _broker}


class HealthApi(ApiView):
    authentication_classes = []
    permission_classes = []
    errors = ("SERVICE_UNAVAILABLE",)

    @extend_schema(
        operation_id="health",
        tags=["health"],
        responses=inline_serializer(
            "Health",
            {
                "status": serializers.CharField(),
                "checks": serializers.DictField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        checks: dict[str, str] = {}
        for name, check in CHECKS.items():
            try:
                check()
                checks[name] = "ok"
            except Exception as exc:
                logger.warning("health check %s failed: %s", name, exc)
                checks[name] = "unavailable"
        if any(state != "ok" for state in checks.values()):
            raise APIError("SERVICE_UNAVAILABLE", details={"checks": checks})
        return Response({"status": "ok", "checks": checks})
