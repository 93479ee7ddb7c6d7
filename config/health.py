"""``GET /health``: the database, the cache and the broker, without authentication; with the
time (real time, not the sandbox clock: monitors compare it with their own), the process's
uptime and whether staff switched maintenance mode on (decisions section 11).

Each check runs in a thread of its own and the answer waits at most ``HEALTH_TIMEOUT_SECONDS``:
a dependency that accepts connections and never answers shows as ``timeout`` instead of holding
the request (a few such calls used to take every thread of a web worker). A probe still running
from an earlier call is waited on again, not started twice, so at most one probe per check runs
in a process."""

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import datetime
from typing import Annotated, Literal, TypedDict

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection, connections
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.docs import OperationDoc
from config.api.views import ApiView
from config.celery import app as celery_app
from core.db import pooled_connections_recheck
from core.errors import DomainError
from core.selectors import maintenance_is_on
from core.shapes import Doc

logger = logging.getLogger(__name__)
_STARTED = time.monotonic()


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

_probes: dict[str, Future[None]] = {}
_probes_lock = threading.Lock()
_executor = ThreadPoolExecutor(max_workers=len(CHECKS), thread_name_prefix="health")


def _run(check: Callable[[], None]) -> None:
    try:
        check()
    finally:
        connections.close_all()  # this thread's database connection goes back to the pool


def _probe(name: str, check: Callable[[], None]) -> Future[None]:
    with _probes_lock:
        running = _probes.get(name)
        if running is None or running.done():
            running = _probes[name] = _executor.submit(_run, check)
        return running


def health_checks() -> dict[str, str]:
    """Each check's state: ``ok``, ``unavailable`` (it failed) or ``timeout`` (no answer in
    time)."""
    probes = {name: _probe(name, check) for name, check in CHECKS.items()}
    wait(probes.values(), timeout=settings.HEALTH_TIMEOUT_SECONDS)
    checks: dict[str, str] = {}
    for name, probe in probes.items():
        if not probe.done():
            logger.warning("health check %s did not answer in time", name)
            checks[name] = "timeout"
        elif (error := probe.exception()) is not None:
            logger.warning("health check %s failed: %s", name, error)
            checks[name] = "unavailable"
        else:
            checks[name] = "ok"
    return checks


class Maintenance(TypedDict):
    # A string, as the original service's SDK types it (decisions section 11).
    mode: Annotated[
        Literal["off", "maintenance"],
        Doc('"maintenance" while staff have maintenance mode on, else "off".'),
    ]


class Health(TypedDict):
    status: str
    checks: dict[str, str]
    timestamp: datetime
    uptime: int  # whole seconds since this process started
    maintenance: Maintenance


class HealthApi(ApiView):
    authentication_classes = []
    permission_classes = []
    errors = ("SERVICE_UNAVAILABLE",)
    doc = OperationDoc(
        summary="Check that the service can serve",
        description="""
            For load balancers and monitoring: 200 when the database, the cache and the broker
            all answer, else 503 `SERVICE_UNAVAILABLE` with `details.checks` naming each one's
            state (`ok`, `unavailable`, or `timeout` when it did not answer within 2 seconds).
            It needs no credentials, answers within about 2 seconds whatever hangs, and stays up
            during maintenance mode, when the API routes answer `SYSTEM_MAINTENANCE`:
            `maintenance.mode` says whether it is on: `"maintenance"`, else `"off"`. `timestamp`
            is the server's time (real time, whatever the sandbox clock says) and `uptime` the
            seconds since the answering process started.
        """,
        response={
            "status": "ok",
            "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
            "timestamp": "2026-05-02T12:00:00.000Z",
            "uptime": 86400,
            "maintenance": {"mode": "off"},
        },
        error_details={
            "SERVICE_UNAVAILABLE": {
                "checks": {"database": "ok", "cache": "timeout", "broker": "unavailable"}
            }
        },
    )

    @extend_schema(
        operation_id="health",
        tags=["health"],
        responses=Health,
    )
    def get(self, request: Request) -> Response:
        checks = health_checks()
        if any(state != "ok" for state in checks.values()):
            raise DomainError("SERVICE_UNAVAILABLE", details={"checks": checks})
        answer: Health = {
            "status": "ok",
            "checks": checks,
            "timestamp": timezone.now(),
            "uptime": int(time.monotonic() - _STARTED),
            "maintenance": {"mode": "maintenance" if maintenance_is_on() else "off"},
        }
        return Response(answer)
