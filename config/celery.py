"""The Celery app ``config``: ``celery -A config worker --beat`` runs every worker and timer.
Its worker and beat log as the other processes do (``LOG_FORMAT``, each line with its request
id), and a task enqueued within a request runs under that request's id (docs/ops/logs.md)."""

import logging
import os
import time
from typing import Any

from celery import Celery, Task
from celery.apps.beat import Beat
from celery.apps.worker import Worker
from celery.schedules import crontab
from celery.signals import (
    beat_init,
    before_task_publish,
    celeryd_init,
    setup_logging,
    task_failure,
    task_postrun,
    task_prerun,
    task_retry,
    task_revoked,
    task_success,
    worker_process_shutdown,
)
from django.conf import settings
from kombu.utils.objects import cached_property

import config.broker  # noqa: F401 (registers the quick start's broker transport)
from core.context import current_request_id, task_ended, task_started
from core.db import db_pools_observe
from core.logs import logging_configure, stdout_logged
from core.metrics import CELERY_TASK_LAST_RUN, CELERY_TASK_LATENCY, CELERY_TASKS
from core.metrics.store import process_dead, role_start

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)


class JsonWorker(Worker):
    """``celery worker`` under ``LOG_FORMAT=json``: logging as settings.LOGGING makes it from
    its first line (Celery warns about running as root before Django configures anything), its
    banner one record instead of lines printed, and what Celery writes to standard output
    itself (its shutdown notices) turned into records (``core.logs.stdout_logged``)."""

    def on_before_init(self, quiet: bool = False, **kwargs: Any) -> None:
        logging_configure(settings.LOGGING)
        stdout_logged()
        super().on_before_init(quiet=quiet, **kwargs)

    def emit_banner(self) -> None:
        logger.info("%s", self.startup_info(artlines=False).strip())


class JsonBeat(Beat):
    """``celery beat`` under ``LOG_FORMAT=json``, as ``JsonWorker``: its banner, printed before
    any hook runs, is left out (as ``--quiet`` does); it logs its start itself."""

    def run(self) -> None:
        logging_configure(settings.LOGGING)
        stdout_logged()
        self.quiet = True
        super().run()


class ServiceCelery(Celery):
    """The programs ``celery worker`` and ``celery beat`` run, by ``LOG_FORMAT``."""

    @cached_property
    def Worker(self) -> type[Worker]:  # noqa: N802 (Celery's name)
        return self.subclass_with_self(JsonWorker if settings.LOG_FORMAT == "json" else Worker)

    @cached_property
    def Beat(self) -> type[Beat]:  # noqa: N802 (Celery's name)
        return self.subclass_with_self(JsonBeat if settings.LOG_FORMAT == "json" else Beat)


app = ServiceCelery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "sweep-webhooks": {"task": "webhooks.sweep", "schedule": 10.0},
    "sweep-purchases": {"task": "trading.sweep_purchases", "schedule": 30.0},
    "sweep-holds": {"task": "trading.sweep_holds", "schedule": 60.0},
    "sweep-cancels": {"task": "trading.sweep_cancels", "schedule": 30.0},
    "sweep-deposit-offers": {"task": "trading.sweep_deposit_offers", "schedule": 30.0},
    # The real suppliers (no-ops unless MARKETPLACE names them and they have credentials).
    "suppliers-poll": {"task": "trading.suppliers_poll", "schedule": 10.0},
    "suppliers-follow": {"task": "trading.suppliers_follow", "schedule": 15.0},
    "suppliers-balances": {"task": "trading.suppliers_balances", "schedule": 300.0},
    # The game platform's offers (Steam: each bot's, one task per bot; the sandbox has none).
    "poll-offers": {"task": "trading.poll_offers", "schedule": settings.STEAM_POLL_SECONDS},
    # Withdrawal items the bots hand over (own stock, supplier deliveries to our bots).
    "sweep-deliveries": {"task": "trading.sweep_deliveries", "schedule": 30.0},
    "sweep-verifications": {"task": "merchants.sweep_verifications", "schedule": 60.0},
    "crypto-sweep-deposits": {"task": "crypto.sweep_deposits", "schedule": 15.0},
    "crypto-sweep-withdrawals": {"task": "crypto.sweep_withdrawals", "schedule": 10.0},
    "crypto-evm-scan": {"task": "crypto.evm_scan", "schedule": 5.0},
    "crypto-evm-sweep-transactions": {"task": "crypto.evm_sweep_transactions", "schedule": 15.0},
    "crypto-evm-sweep-addresses": {"task": "crypto.evm_sweep_addresses", "schedule": 15.0},
    "crypto-evm-plan-sweeps": {"task": "crypto.evm_plan_sweeps", "schedule": 3600.0},
    "crypto-solana-scan": {"task": "crypto.solana_scan", "schedule": 5.0},
    "crypto-solana-sweep-transactions": {
        "task": "crypto.solana_sweep_transactions",
        "schedule": 10.0,
    },
    "crypto-solana-sweep-accounts": {"task": "crypto.solana_sweep_accounts", "schedule": 15.0},
    "crypto-solana-plan-sweeps": {"task": "crypto.solana_plan_sweeps", "schedule": 3600.0},
    "prune-idempotent-requests": {
        "task": "merchants.prune_idempotent_requests",
        "schedule": crontab(minute="*/10"),
    },
    "prune-rate-limit-windows": {
        "task": "merchants.prune_rate_limit_windows",
        "schedule": crontab(minute="*/10"),
    },
    "prune-identity-notifications": {
        "task": "merchants.prune_identity_notifications",
        "schedule": crontab(minute=17),
    },
    # The wallet's invariants, stored for the console's home (docs/admin.md).
    "check-wallet": {"task": "wallet.check_invariants", "schedule": settings.WALLET_CHECK_SECONDS},
    # Retention (docs/ops/retention.md): each run purges for RETENTION_RUN_SECONDS at most.
    "purge-ended-webhooks": {"task": "webhooks.purge_ended", "schedule": crontab(minute="*/10")},
    "purge-trade-events": {"task": "trading.purge_trade_events", "schedule": crontab(minute=37)},
    "purge-sessions": {"task": "core.purge_sessions", "schedule": crontab(minute=47)},
}
if settings.SANDBOX:
    app.conf.beat_schedule |= {
        "sandbox-autopilot": {"task": "sandbox.autopilot", "schedule": 2.0},
        "sandbox-crypto-autopilot": {"task": "sandbox.crypto_autopilot", "schedule": 2.0},
    }


# The message header naming the request a task was enqueued within (a task's own tasks pass on
# the id it runs under).
REQUEST_ID_HEADER = "request_id"


@before_task_publish.connect
def _with_request_id(headers: dict[str, Any], **_: Any) -> None:
    request_id = current_request_id()
    if request_id != "-":
        headers.setdefault(REQUEST_ID_HEADER, request_id)


# When each task in flight in this process started (perf_counter), for its duration.
_task_clock: dict[str, float] = {}


@task_prerun.connect
def _task_prerun(task_id: str, task: Task, **_: Any) -> None:
    task_started(task_id, request_id=getattr(task.request, REQUEST_ID_HEADER, None))
    _task_clock[task_id] = time.perf_counter()


@task_postrun.connect
def _task_postrun(task_id: str, task: Task, **_: Any) -> None:
    task_ended(task_id)
    started = _task_clock.pop(task_id, None)
    if started is not None:
        CELERY_TASK_LATENCY.labels(task.name).observe(time.perf_counter() - started)
    CELERY_TASK_LAST_RUN.labels(task.name).set(time.time())
    db_pools_observe()


# Task outcomes in the metrics (a retry is counted as one, and so is the run that ends it).
@task_success.connect
def _task_success(sender: Task, **_: Any) -> None:
    CELERY_TASKS.labels(sender.name, "success").inc()


@task_failure.connect
def _task_failure(sender: Task, **_: Any) -> None:
    CELERY_TASKS.labels(sender.name, "failure").inc()


@task_retry.connect
def _task_retry(sender: Task, **_: Any) -> None:
    CELERY_TASKS.labels(sender.name, "retry").inc()


@task_revoked.connect
def _task_revoked(request: Any, **_: Any) -> None:
    CELERY_TASKS.labels(getattr(request, "task", None) or "unknown", "revoked").inc()


@setup_logging.connect
def _logging_as_configured(loglevel: int | str | None = None, **_: Any) -> None:
    """Celery would put a text handler of its own on the root logger (a line without the
    request id): with a receiver of this signal it leaves logging as settings.LOGGING made it,
    and only takes the level its ``--loglevel`` names."""
    if loglevel:
        logging.getLogger().setLevel(loglevel)


# Each worker and beat keeps its metrics in a folder of its own (core.metrics.store): made when
# it starts, before any task module is imported; a pool process that exits stops its gauges.
@celeryd_init.connect
def _worker_metrics(**_: Any) -> None:
    role_start("worker")


@beat_init.connect
def _beat_metrics(**_: Any) -> None:
    role_start("beat")


@worker_process_shutdown.connect
def _pool_process_exit(pid: int, **_: Any) -> None:
    process_dead(pid)
