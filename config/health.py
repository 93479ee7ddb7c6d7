"""``GET /health``: the database, the cache and the broker, without authentication; with the
time (real time, not the sandbox clock: monitors compare it with their own), the process's
uptime, whether staff switched maintenance mode on (decisions section 11) and where the deposit
scanner of each real EVM chain is (decisions section 12), read from the database: no node is
asked on this path.

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
from typing import Annotated, Any, Literal, TypedDict

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection, connections
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.celery import app as celery_app
from core.api.docs import OperationDoc
from core.api.views import ApiView
from core.db import pooled_connections_recheck
from core.errors import DomainError
from core.selectors import maintenance_is_on
from core.shapes import Doc
from crypto.selectors import chain_scan_states

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


class ChainScan(TypedDict):
    firstBlock: int | None
    startedAt: datetime | None
    lastScannedBlock: int | None
    head: int | None
    lagBlocks: int | None
    lagSeconds: int | None
    lastScanAt: datetime | None


def _chain_scans() -> dict[str, ChainScan]:
    return {
        state.chain: {
            "firstBlock": state.first_block,
            "startedAt": state.started_at,
            "lastScannedBlock": state.last_scanned_block,
            "head": state.head,
            "lagBlocks": state.lag_blocks,
            "lagSeconds": state.lag_seconds,
            "lastScanAt": state.last_scan_at,
        }
        for state in chain_scan_states()
    }


CHECKS: dict[str, Callable[[], None]] = {"database": _database, "cache": _cache, "broker": _broker}
CHAINS = "chains"  # a read beside the checks: it shows, it never fails the answer

_probes: dict[str, Future[Any]] = {}
_probes_lock = threading.Lock()
_executor = ThreadPoolExecutor(max_workers=len(CHECKS) + 1, thread_name_prefix="health")


def _run(read: Callable[[], Any]) -> Any:
    try:
        return read()
    finally:
        connections.close_all()  # this thread's database connection goes back to the pool


def _probe(name: str, read: Callable[[], Any]) -> Future[Any]:
    with _probes_lock:
        running = _probes.get(name)
        if running is None or running.done():
            running = _probes[name] = _executor.submit(_run, read)
        return running


def health_checks() -> tuple[dict[str, str], dict[str, ChainScan]]:
    """Each check's state: ``ok``, ``unavailable`` (it failed) or ``timeout`` (no answer in
    time); and the chains' scanners, read in the same wait (none when the read failed)."""
    probes = {name: _probe(name, check) for name, check in CHECKS.items()}
    scans = _probe(CHAINS, _chain_scans)
    wait([*probes.values(), scans], timeout=settings.HEALTH_TIMEOUT_SECONDS)
    chains: dict[str, ChainScan] = {}
    if scans.done() and scans.exception() is None:
        chains = scans.result()
    else:
        logger.warning("health: the chains' scanners could not be read in time")
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
    return checks, chains


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
    chains: dict[str, ChainScan]


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

            `chains` shows the deposit scanner of each real EVM chain (empty on the sandbox's
            chains) as its last step stored it: the block scanning began at (`firstBlock`,
            `startedAt`; earlier blocks are never credited), the last block read
            (`lastScannedBlock`), the node's head then (`head`), how far behind it the scanner
            was (`lagBlocks`, and `lagSeconds` of the chain's own time) and when a step last
            completed (`lastScanAt`: a scanner that stopped shows there, its lag frozen). Each
            is null until the chain's first scan. They never change `status`: alert on them.
        """,
        response={
            "status": "ok",
            "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
            "timestamp": "2026-05-02T12:00:00.000Z",
            "uptime": 86400,
            "maintenance": {"mode": "off"},
            "chains": {
                "ETH": {
                    "firstBlock": 22400000,
                    "startedAt": "2026-05-01T09:30:00.000Z",
                    "lastScannedBlock": 22407180,
                    "head": 22407183,
                    "lagBlocks": 3,
                    "lagSeconds": 36,
                    "lastScanAt": "2026-05-02T11:59:57.000Z",
                }
            },
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
        checks, chains = health_checks()
        if any(state != "ok" for state in checks.values()):
            raise DomainError("SERVICE_UNAVAILABLE", details={"checks": checks})
        answer: Health = {
            "status": "ok",
            "checks": checks,
            "timestamp": timezone.now(),
            "uptime": int(time.monotonic() - _STARTED),
            "maintenance": {"mode": "maintenance" if maintenance_is_on() else "off"},
            "chains": chains,
        }
        return Response(answer)
