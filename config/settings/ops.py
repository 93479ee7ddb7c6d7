"""Running the service: logs, metrics, health, errors to Sentry and the retention of rows that
only record what happened."""

import os

from django.core.exceptions import ImproperlyConfigured

from config.settings.api import SPECTACULAR_SETTINGS
from config.settings.environment import env_float, env_int
from core.logs import log_format

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
# Log lines as text (``line``, the default) or one JSON object per line (``json``: time, level,
# logger, message, requestId, merchantId, tradeId and taskId when known, exception), in every
# process alike (docs/ops/logs.md).
try:
    LOG_FORMAT = log_format()
except ValueError as refused:
    raise ImproperlyConfigured(str(refused)) from refused
LOGGING_CONFIG = "core.logs.logging_configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.context.RequestIdLogFilter"}},
    "formatters": {
        "line": {
            "format": "%(asctime)s %(levelname)s %(name)s requestId=%(request_id)s %(message)s",
        },
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        # solana-py's HTTP client logs every request at INFO.
        "httpx2": {"level": "WARNING"},
    },
}

# GET /metrics answers a Prometheus sending this bearer token; unset, the route answers 404
# (``manage.py metrics_server`` serves them on a private port instead). docs/ops/metrics.md.
# Two tokens, comma-separated, while Prometheus moves to a new one (docs/ops/rotation.md).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# GET /health answers within this, whatever its checks are waiting for.
HEALTH_TIMEOUT_SECONDS = env_float("HEALTH_TIMEOUT_SECONDS", 2.0)

# Errors to Sentry (config/sentry.py) when a DSN is given; nothing is sent without one.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
if SENTRY_DSN:
    from config.sentry import sentry_init

    sentry_init(
        dsn=SENTRY_DSN,
        environment=os.environ.get("SENTRY_ENVIRONMENT", "production"),
        release=f"trading-service@{SPECTACULAR_SETTINGS['VERSION']}",
        traces_sample_rate=env_float("SENTRY_TRACES_SAMPLE_RATE", 0.0),
    )

# Retention (docs/ops/retention.md): how long rows that only record what happened are kept
# before the beat's purges delete them, in days (0: kept for ever). A trade, its items and
# every money row (transfers, postings, fundings, deposits, cashouts) are never purged.
# Delivered and given-up webhook events with their delivery attempts (a pending one stays):
RETENTION_WEBHOOK_EVENTS_DAYS = env_int("RETENTION_WEBHOOK_EVENTS_DAYS", 90)
# A finished trade's timeline (its events), past the time disputes about it can still come;
# the moves into and out of a hold stay, as check_wallet reads them:
RETENTION_TRADE_EVENTS_DAYS = env_int("RETENTION_TRADE_EVENTS_DAYS", 730)
# Each purge deletes this many rows per transaction, and goes on for at most this long a run.
RETENTION_BATCH_ROWS = env_int("RETENTION_BATCH_ROWS", 1000)
RETENTION_RUN_SECONDS = env_float("RETENTION_RUN_SECONDS", 20.0)
if min(RETENTION_WEBHOOK_EVENTS_DAYS, RETENTION_TRADE_EVENTS_DAYS) < 0:
    raise ImproperlyConfigured("RETENTION_*_DAYS are days to keep rows (0: for ever).")
if RETENTION_BATCH_ROWS < 1 or RETENTION_RUN_SECONDS < 0:
    raise ImproperlyConfigured(
        "RETENTION_BATCH_ROWS must be 1 or more, RETENTION_RUN_SECONDS 0 or more."
    )
