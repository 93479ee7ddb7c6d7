"""Settings read from the environment.

With DATABASE_URL unset the service runs in quick-start mode: an SQLite file, a file cache and a
file-system Celery broker under ``var/``, all shared by the web, worker and beat processes.
"""

import json
import os
import secrets
import string
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.api.docs import API_DESCRIPTION
from core.logs import log_format

BASE_DIR = Path(__file__).resolve().parent.parent
# Absolute, whatever the environment gives (bin/start's default is the relative "var"): every
# path below derives from it, and Django warns about a relative file cache (caches.W003) in
# every command.
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var")).absolute()


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}.") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}.") from None


DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
QUICKSTART = not DATABASE_URL
# Only the quick start keeps files under VAR_DIR (its cache and broker among them): a deployment
# shares them between machines through Redis and writes nothing there.
if not QUICKSTART and not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL must be set when DATABASE_URL is set.")
# The simulated outside world (the ``sandbox`` app, its ``/sandbox/`` helpers and the defaults of
# the outside systems below): bin/start and bin/test turn it on.
SANDBOX = env_bool("SANDBOX", False)
DEBUG = env_bool("DEBUG", False)
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()


def _secret_key() -> str:
    configured = os.environ.get("SECRET_KEY")
    if configured:
        return configured
    if not QUICKSTART:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set.")
    # Quick start: one generated key kept beside the SQLite file, so sessions survive restarts.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]
# How many reverse proxies sit in front of the web workers; their X-Forwarded-For entries are
# trusted to find the client address used by API key IP whitelists.
NUM_PROXIES = env_int("NUM_PROXIES", 0)


# -- A deployment behind a TLS-terminating proxy (docs/ops/deploy-checks.md) ---------------------
# A deployment is PostgreSQL without the sandbox. It answers only the host names it is given, is
# reached over HTTPS only, and tells browsers so; the quick start and the sandbox serve plain
# HTTP on loopback and take any host name. Each setting can be turned by the environment.
DEPLOYED = not QUICKSTART and not SANDBOX


def _allowed_hosts() -> list[str]:
    hosts = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]
    if hosts or not DEPLOYED:
        return hosts or ["*"]
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set when DATABASE_URL is set without the sandbox: the host names "
        "the service answers to, comma-separated (e.g. api.example.com)."
    )


def _proxy_ssl_header() -> tuple[str, str] | None:
    """The header the TLS proxy sets to ``https`` on what reached it over TLS (and removes from
    what clients send), when the operator names one: the service can then tell HTTPS from HTTP
    behind it (a redirect, HSTS, secure cookies and the admin's CSRF origin check need that)."""
    name = os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip()
    if not name:
        return None
    if not all(c.isascii() and (c.isalnum() or c == "-") for c in name):
        raise ImproperlyConfigured(
            "SECURE_PROXY_SSL_HEADER must be a header name such as X-Forwarded-Proto, not "
            f"{name!r}."
        )
    return "HTTP_" + name.upper().replace("-", "_"), "https"


ALLOWED_HOSTS = _allowed_hosts()
SECURE_PROXY_SSL_HEADER = _proxy_ssl_header()
# Plain HTTP is redirected to HTTPS, but for the probes, which ask from inside the network.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", DEPLOYED)
SECURE_REDIRECT_EXEMPT = [r"^health$", r"^metrics$"]
# HSTS for a year on this host; its subdomains and the browsers' preload list only when the
# domain's owner says so (both reach beyond this service and take months to undo).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if DEPLOYED else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# The admin's session and CSRF cookies never travel over plain HTTP.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", DEPLOYED)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", DEPLOYED)

INSTALLED_APPS = [
    # django.contrib.admin with the console's home (docs/admin.md).
    "core.apps.ConsoleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "merchants",
    "trading",
    "wallet",
    "crypto",
    "ledger",
    "feed",
    *(["sandbox"] if SANDBOX else []),
]

MIDDLEWARE = [
    "core.api.metrics.RequestMetricsMiddleware",
    "core.api.middleware.RequestIdMiddleware",
    "core.api.middleware.RequestLimitsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The admin's and the docs' middleware, skipped for API paths (core.api.middleware).
    "core.api.middleware.SessionsOutsideApi",
    "django.middleware.common.CommonMiddleware",
    "core.api.middleware.CsrfOutsideApi",
    "core.api.middleware.AuthenticationOutsideApi",
    "core.api.middleware.MessagesOutsideApi",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.api.middleware.MaintenanceMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _databases() -> dict[str, Any]:
    if QUICKSTART:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        return {
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": VAR_DIR / "trading.sqlite3",
                "OPTIONS": {
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                    "transaction_mode": "IMMEDIATE",
                    "timeout": 20,
                },
            }
        }
    return {"default": _postgresql(DATABASE_URL)}


def _postgresql(url: str) -> dict[str, Any]:
    config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=0))
    if config["ENGINE"] != "django.db.backends.postgresql":
        return config
    options = config.setdefault("OPTIONS", {})
    if env_bool("DB_POOL", True):
        options["pool"] = {
            "min_size": env_int("DB_POOL_MIN_SIZE", 2),
            "max_size": env_int("DB_POOL_MAX_SIZE", 20),
            "timeout": env_int("DB_POOL_TIMEOUT", 10),
        }
    if DATABASE_TRANSACTION_POOLING:
        # Behind PgBouncer in transaction mode consecutive transactions may run on different
        # server connections: nothing may be prepared on one and used on another.
        options["prepare_threshold"] = None
        config["DISABLE_SERVER_SIDE_CURSORS"] = True
    elif DB_PREPARE_THRESHOLD:
        # Parameters sent apart from the statement (psycopg's server-side binding, not Django's
        # default of quoting them into the text) and each statement prepared on a connection
        # once it ran there this many times: PostgreSQL then neither parses nor plans it again.
        # A buy cost the database 45 % less CPU so (bench/README.md, "The buy, end to end").
        options["server_side_binding"] = True
        options["prepare_threshold"] = DB_PREPARE_THRESHOLD
    return config


# PostgreSQL is reached through a pooler in transaction mode (PgBouncer's pool_mode =
# transaction): no session state may outlive a transaction (docs/decisions.md, "Operations at
# scale"). Every SET and advisory lock of the service is transaction-scoped already; this also
# turns off the server-side cursors of QuerySet.iterator() and psycopg's prepared statements.
DATABASE_TRANSACTION_POOLING = env_bool("DATABASE_TRANSACTION_POOLING", False)
# Runs of one statement on a connection before psycopg prepares it there; 0: never (Django's
# client-side binding). Not used behind a transaction pooler (above).
DB_PREPARE_THRESHOLD = env_int("DB_PREPARE_THRESHOLD", 5)


DATABASES = _databases()


# Read replicas (streaming copies of the primary): heavy reads that may be a moment stale go to
# them (core.db.replica_reads: trade history pages, ledger lists, the market); everything that
# writes, or must see what was just written, stays on the primary.
def _replicas() -> dict[str, Any]:
    urls = [u.strip() for u in os.environ.get("DATABASE_REPLICA_URLS", "").split(",")]
    # TEST MIRROR: under pytest a replica is the test database itself, not one to create.
    return {
        f"replica{n}": _postgresql(u) | {"TEST": {"MIRROR": "default"}}
        for n, u in enumerate(filter(None, urls))
    }


if not QUICKSTART:
    DATABASES |= _replicas()
DATABASE_ROUTERS = ["core.db.ReplicaRouter"]
# The ledger's covering index (ledger.Funding) is PostgreSQL's; SQLite builds it without the
# columns that ride along, which costs the quick start nothing but the warning (models.W040).
# security.W003 looks for Django's CsrfViewMiddleware by its dotted path; ours is its subclass
# CsrfOutsideApi, which checks every form of the admin and the docs (API views take no cookie
# and are CSRF-exempt): docs/ops/deploy-checks.md.
SILENCED_SYSTEM_CHECKS = ["security.W003", *(["models.W040"] if QUICKSTART else [])]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


# Every Redis client (cache, rate limits, broker) gives up on a Redis that refuses or does not
# answer within these, so a call fails fast (503) instead of holding a web thread for minutes.
REDIS_CLIENT_OPTIONS = {
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT_SECONDS", 1.0),
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT_SECONDS", 1.0),
}
# GET /metrics answers a Prometheus sending this bearer token; unset, the route answers 404
# (``manage.py metrics_server`` serves them on a private port instead). docs/ops/metrics.md.
# Two tokens, comma-separated, while Prometheus moves to a new one (docs/ops/rotation.md).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# GET /health answers within this, whatever its checks are waiting for.
HEALTH_TIMEOUT_SECONDS = env_float("HEALTH_TIMEOUT_SECONDS", 2.0)


# Cached values are pickles of this code's classes (a price book's reference, an inventory's
# quotes, a trade-URL check): a release that moves or reshapes a cached class bumps this, so
# its processes never read what the previous release wrote (a pickle naming a module that is
# gone fails every read of its key until it expires). 2: trading reorganised by flow. 3: an
# inventory's snapshot keeps its assets pickled apart, and its quotes are kept rendered.
CACHE_FORMAT = 3


def _caches() -> dict[str, Any]:
    if REDIS_URL:
        return {
            "default": {
                "BACKEND": "config.cache.SharedClientRedisCache",
                "LOCATION": REDIS_URL,
                "KEY_PREFIX": "ts",
                "VERSION": CACHE_FORMAT,
                "OPTIONS": REDIS_CLIENT_OPTIONS,
            }
        }
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "VERSION": CACHE_FORMAT,
        }
    }


CACHES = _caches()

# The real-time feed (docs/feed.md): web and worker processes publish committed changes on the
# feed bus, every feed process (``manage.py feed``) reads it. Redis pub/sub when Redis is
# configured, else the quick start's spool folder. Redis pub/sub channels ignore the database
# number, so the default channel carries it: deployments sharing a Redis by database stay apart.
FEED_BUS = os.environ.get("FEED_BUS") or ("redis" if REDIS_URL else "spool")
if FEED_BUS not in ("redis", "spool"):
    raise ImproperlyConfigured("FEED_BUS must be redis or spool.")
FEED_REDIS_URL = os.environ.get("FEED_REDIS_URL") or REDIS_URL
if FEED_BUS == "redis" and not FEED_REDIS_URL:
    raise ImproperlyConfigured("FEED_BUS=redis needs REDIS_URL (or FEED_REDIS_URL).")
FEED_CHANNEL = os.environ.get("FEED_CHANNEL") or (
    "trading-feed:db" + (urlparse(FEED_REDIS_URL).path.strip("/") or "0")
)
FEED_SPOOL_DIR = Path(os.environ.get("FEED_SPOOL_DIR") or VAR_DIR / "feed")
# A publish waits at most this long for the bus; after a failure publishing pauses this long
# (the events meanwhile are counted as lost), so a bus that is down never slows a request.
FEED_PUBLISH_TIMEOUT_SECONDS = env_float("FEED_PUBLISH_TIMEOUT_SECONDS", 0.25)
FEED_PUBLISH_PAUSE_SECONDS = env_float("FEED_PUBLISH_PAUSE_SECONDS", 5.0)
# Open sockets per merchant, service-wide (counted in Redis; per feed process on the spool).
FEED_MAX_SOCKETS_PER_MERCHANT = env_int("FEED_MAX_SOCKETS_PER_MERCHANT", 100)
# How often a feed process looks whether its sockets' keys may have changed (the auth epoch),
# and re-reads them all when they may have; and how often it re-reads them all anyway (rows
# edited behind the services' back bump no epoch).
FEED_RECHECK_SECONDS = env_float("FEED_RECHECK_SECONDS", 2.0)
FEED_RECHECK_FULL_SECONDS = env_float("FEED_RECHECK_FULL_SECONDS", 30.0)
# Packets waiting for one socket: above the first, its market events are dropped (it gets a
# ``sync`` once it has caught up); above the second, the socket is disconnected.
FEED_SOCKET_BACKLOG = env_int("FEED_SOCKET_BACKLOG", 100)
FEED_SOCKET_BACKLOG_MAX = env_int("FEED_SOCKET_BACKLOG_MAX", 1000)
# Browser origins allowed to open sockets (comma-separated); none: only non-browser clients and
# same-origin pages.
FEED_CORS_ALLOWED_ORIGINS = [
    o.strip() for o in os.environ.get("FEED_CORS_ALLOWED_ORIGINS", "").split(",") if o.strip()
]
# The quick start's front (feed/front_server.py): a connection whose request head has not
# arrived whole this long after it began to wait for one is closed.
FEED_FRONT_HEAD_TIMEOUT_SECONDS = env_float("FEED_FRONT_HEAD_TIMEOUT_SECONDS", 10.0)
if FEED_FRONT_HEAD_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured("FEED_FRONT_HEAD_TIMEOUT_SECONDS must be above 0.")

# Celery: the broker is Redis when configured, else a folder shared by every local process.
# config/broker.py. A host named (the transport's own default), or kombu warns of its absence on
# every connection a process makes.
CELERY_BROKER_URL = REDIS_URL or "atomicfs://localhost//"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = (
    {"visibility_timeout": 3600, **REDIS_CLIENT_OPTIONS}
    if REDIS_URL
    else {
        "data_folder_in": str(VAR_DIR / "broker"),
        "data_folder_out": str(VAR_DIR / "broker"),
        "processed_folder": str(VAR_DIR / "broker-processed"),
        "store_processed": False,
        # Exchange tables; kombu's default is ./control, i.e. wherever a process was started.
        "control_folder": str(VAR_DIR / "broker-control"),
    }
)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 60
CELERY_TASK_SOFT_TIME_LIMIT = 45
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Beat keeps its schedule in memory: every entry is a periodic sweep of the database, so a
# restarted beat loses at most one period, and it needs no writable file (no var/ in production).
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"

# Merchants' callback URLs: outside the sandbox they must be https on public addresses; this lets
# http and private or loopback receivers through (a staging receiver on a private network, an
# end-to-end check on one machine). ``manage.py check --deploy`` warns while it is on.
CALLBACK_ALLOW_PRIVATE_NETWORKS = env_bool("CALLBACK_ALLOW_PRIVATE_NETWORKS", False)
# One merchant's webhook and approval deliveries in flight at once, service-wide: the share of the
# workers a merchant whose receiver is slow can hold (each attempt ends within 10 s). More wait,
# due, for one of them to end (docs/decisions.md, "One merchant's share of the workers").
WEBHOOK_DELIVERIES_PER_MERCHANT = env_int("WEBHOOK_DELIVERIES_PER_MERCHANT", 2)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# Filled by collectstatic when deploying; at run time it is only read.
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or VAR_DIR / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["core.api.rendering.EnvelopeRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.rendering.DecimalJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.rendering.JSONOnlyNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_THROTTLE_CLASSES": [],
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.EnvelopeAutoSchema",
    "UNAUTHENTICATED_USER": None,
    "NUM_PROXIES": NUM_PROXIES,
    "COERCE_DECIMAL_TO_STRING": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Trading Service API",
    "DESCRIPTION": API_DESCRIPTION,
    "VERSION": "0.8.3",
    # 3.1: its schemas are JSON Schema 2020-12 and it has `webhooks` (docs/decisions.md,
    # "OpenAPI 3.1").
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {},
    # Our choices are their own labels: "* `730` - 730" would only repeat the enum.
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "APPEND_COMPONENTS": {},
    # Descriptions come from each view's ``doc`` (core/api/docs.py); docstrings speak to
    # developers and never reach the document.
    "DISABLE_DOCSTRING_DESCRIPTIONS": True,
    "POSTPROCESSING_HOOKS": [
        "merchants.schema.add_security_schemes",
        "core.api.schema.rate_limit_descriptions",
        "config.openapi_webhooks.add_webhooks",
    ],
}

# Where trade URLs point; the platform id is PLATFORM_ID_BASE + partner.
TRADE_URL_HOST = os.environ.get("TRADE_URL_HOST", "steamcommunity.com")
PLATFORM_ID_BASE = 76561197960265728
CLIENT_TOKEN_TTL_SECONDS = 24 * 3600

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


def _outside_system(name: str, sandbox: str) -> str:
    """The dotted path of an outside system's adapter (each behind an interface in the domain):
    the sandbox's by default with SANDBOX, else none: the domain's "unconfigured" adapter then
    answers every call as unavailable, and ``manage.py check`` warns."""
    return os.environ.get(name) or (sandbox if SANDBOX else "")


GAME_PLATFORM = _outside_system("GAME_PLATFORM", "sandbox.platform.SandboxPlatform")
MARKETPLACE = _outside_system("MARKETPLACE", "sandbox.marketplace.SandboxMarketplace")
# The real supplier marketplaces (MARKETPLACE=trading.marketplace.suppliers.marketplace.
# SupplierMarketplace): which ones, their hosts (a proxy or a test server may stand in) and
# credentials (from the environment only), and every call's timeouts. docs/suppliers.md.
MARKETPLACE_SUPPLIERS = [
    s.strip()
    for s in os.environ.get("MARKETPLACE_SUPPLIERS", "waxpeer,dmarket").split(",")
    if s.strip()
]
WAXPEER_API_URL = os.environ.get("WAXPEER_API_URL", "https://api.waxpeer.com")
WAXPEER_API_KEY = os.environ.get("WAXPEER_API_KEY", "")
# Waxpeer's listing socket (Socket.IO over websocket), read by ``manage.py supplier_socket``.
WAXPEER_SOCKET_URL = os.environ.get("WAXPEER_SOCKET_URL", "https://waxpeer.com")
WAXPEER_SOCKET_PATH = os.environ.get("WAXPEER_SOCKET_PATH", "socket.io")
DMARKET_API_URL = os.environ.get("DMARKET_API_URL", "https://api.dmarket.com")
DMARKET_PUBLIC_KEY = os.environ.get("DMARKET_PUBLIC_KEY", "")
DMARKET_SECRET_KEY = os.environ.get("DMARKET_SECRET_KEY", "")
# The Steam id of our bot linked to the DMarket account: DMarket delivers there, the bot hands
# the item to the recipient (docs/suppliers.md). DMarket is not used without it.
DMARKET_BOT_STEAM_ID = os.environ.get("DMARKET_BOT_STEAM_ID", "")
SUPPLIER_CONNECT_TIMEOUT_SECONDS = env_float("SUPPLIER_CONNECT_TIMEOUT_SECONDS", 3.0)
SUPPLIER_READ_TIMEOUT_SECONDS = env_float("SUPPLIER_READ_TIMEOUT_SECONDS", 15.0)
IDENTITY_PROVIDER = _outside_system("IDENTITY_PROVIDER", "sandbox.identity.SandboxIdentityProvider")
# Sumsub (IDENTITY_PROVIDER=merchants.verification.sumsub.SumsubIdentityProvider): the API's
# host, the app token and its secret key (requests are signed with it), the webhook's secret key
# (its notifications are signed with it), the verification level applicants are created at, the
# timeout of each call and the lifetime of the WebSDK tokens and links handed out.
SUMSUB_BASE_URL = os.environ.get("SUMSUB_BASE_URL", "https://api.sumsub.com")
SUMSUB_APP_TOKEN = os.environ.get("SUMSUB_APP_TOKEN", "")
SUMSUB_SECRET_KEY = os.environ.get("SUMSUB_SECRET_KEY", "")
SUMSUB_WEBHOOK_SECRET = os.environ.get("SUMSUB_WEBHOOK_SECRET", "")
SUMSUB_LEVEL_NAME = os.environ.get("SUMSUB_LEVEL_NAME", "")
SUMSUB_TIMEOUT_SECONDS = env_float("SUMSUB_TIMEOUT_SECONDS", 10.0)
SUMSUB_SDK_TOKEN_TTL_SECONDS = env_int("SUMSUB_SDK_TOKEN_TTL_SECONDS", 1800)
INVENTORY_CACHE_SECONDS = 15 * 60
# A deposit's trade offer is withdrawn (the deposit declined) if the owner leaves it this long.
DEPOSIT_OFFER_MINUTES = env_int("DEPOSIT_OFFER_MINUTES", 15)
# Sandbox only: move the simulated world one step per item after this many idle seconds (0: off).
SANDBOX_AUTOPILOT_SECONDS = env_int("SANDBOX_AUTOPILOT_SECONDS", 0)
TRADE_URL_CHECK_CACHE_SECONDS = 3600

# Secrets stored in the database (bot secrets and sessions) are sealed with these Fernet keys
# (comma-separated; the first seals, all open: rotate by putting a new key first).
SECRETS_ENCRYPTION_KEYS = [
    key.strip() for key in os.environ.get("SECRETS_ENCRYPTION_KEYS", "").split(",") if key.strip()
]
# The Steam adapter (GAME_PLATFORM=trading.platform.steam.SteamPlatform, docs/steam.md): every
# host configurable, so a test server or a proxy stands in; every call with a timeout.
STEAM_WEB_API_URL = os.environ.get("STEAM_WEB_API_URL", "https://api.steampowered.com")
STEAM_COMMUNITY_URL = os.environ.get("STEAM_COMMUNITY_URL", "https://steamcommunity.com")
STEAM_LOGIN_URL = os.environ.get("STEAM_LOGIN_URL", "https://api.steampowered.com")
# A Web API key (ISteamUser/GetPlayerBans); without one the calls use a bot's access token.
STEAM_WEB_API_KEY = os.environ.get("STEAM_WEB_API_KEY", "")
STEAM_TIMEOUT_SECONDS = env_float("STEAM_TIMEOUT_SECONDS", 10.0)
# 429 and 5xx answers are tried again this many times, waiting BACKOFF * 2^n seconds (or the
# answer's Retry-After, capped at 30 s); then the bot is marked rate limited for a while.
STEAM_RETRIES = env_int("STEAM_RETRIES", 3)
STEAM_BACKOFF_SECONDS = env_float("STEAM_BACKOFF_SECONDS", 1.0)
STEAM_RATE_LIMIT_PAUSE_SECONDS = env_int("STEAM_RATE_LIMIT_PAUSE_SECONDS", 120)
# Offers the bots sent are polled this often (beat), each bot by one worker at a time.
STEAM_POLL_SECONDS = env_float("STEAM_POLL_SECONDS", 15.0)
# A delivery offer (a withdrawal's items sent to the user) is cancelled after this long.
STEAM_DELIVERY_OFFER_MINUTES = env_int("STEAM_DELIVERY_OFFER_MINUTES", 24 * 60)

# Crypto: the chains behind one interface (CRYPTO_CHAINS), the network whose tokens are credited,
# and the HD key every deposit address is derived from.
CRYPTO_CHAINS = _outside_system("CRYPTO_CHAINS", "sandbox.chains.SandboxChains")
# With a node gateway (EVM, Solana): the gateway of the chains it has no node for.
CRYPTO_OTHER_CHAINS = _outside_system("CRYPTO_OTHER_CHAINS", "sandbox.chains.SandboxChains")
CRYPTO_ENABLED = env_bool("CRYPTO_ENABLED", True)
CRYPTO_NETWORK = os.environ.get("CRYPTO_NETWORK", "testnet" if SANDBOX else "mainnet")
if CRYPTO_NETWORK not in ("mainnet", "testnet"):
    raise ImproperlyConfigured("CRYPTO_NETWORK must be mainnet or testnet.")
# The well-known development mnemonic (its keys are public): sandbox and quick start only.
SANDBOX_HD_MNEMONIC = "test test test test test test test test test test test junk"
CRYPTO_HD_MNEMONIC = os.environ.get("CRYPTO_HD_MNEMONIC") or (
    SANDBOX_HD_MNEMONIC if SANDBOX else ""
)
if CRYPTO_ENABLED and not CRYPTO_HD_MNEMONIC:
    raise ImproperlyConfigured(
        "CRYPTO_HD_MNEMONIC must be set outside the sandbox: the BIP-39 mnemonic every deposit "
        "address derives from (or CRYPTO_ENABLED=false)."
    )
# Chains whose credits and broadcasts wait (addresses stay valid), e.g. "ETH,SOL".
CRYPTO_PAUSED_CHAINS = frozenset(
    c.strip().upper() for c in os.environ.get("CRYPTO_PAUSED_CHAINS", "").split(",") if c.strip()
)
CRYPTO_MIN_DEPOSIT_CENTS = {"ETH": 1000, "BSC": 100, "SOL": 100}
CRYPTO_MIN_CONFIRMATIONS = {
    "ETH": env_int("CRYPTO_ETH_CONFIRMATIONS", 12),
    "BSC": env_int("CRYPTO_BSC_CONFIRMATIONS", 15),
    "SOL": 32,
}
# Cashouts: a flat fee per chain, and the least the recipient may receive after it.
CRYPTO_WITHDRAW_FEE_CENTS = {"ETH": 500, "BSC": 50, "SOL": 50}
CRYPTO_WITHDRAW_MIN_RECEIVE_CENTS = {"ETH": 1000, "BSC": 100, "SOL": 100}
# Above these (per merchant, overridable in the admin) staff review the money first.
CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS = env_int("CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS", 1_000_000)
CRYPTO_WITHDRAW_REVIEW_ABOVE_CENTS = env_int("CRYPTO_WITHDRAW_REVIEW_ABOVE_CENTS", 500_000)
# Solana token accounts cost rent while open: at most this many at once, service-wide.
CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS = env_int("CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS", 10_000)
# Sandbox chains: seconds of service clock a Solana token account takes to open.
CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS = env_int("CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS", 10)
# Broadcast attempts before a cashout fails (and is refunded), and the wait after each failure.
CRYPTO_BROADCAST_ATTEMPTS = 3
CRYPTO_BROADCAST_RETRY_SECONDS = (30, 120)


# Real EVM chains (CRYPTO_CHAINS=crypto.chains.evm.EvmChains): a JSON-RPC node per chain. A chain
# without one goes to CRYPTO_OTHER_CHAINS (docs/decisions.md).
def _token_contracts(chain: str) -> dict[str, tuple[str, int]]:
    """``CRYPTO_<CHAIN>_TOKENS=USDC=0x...:6,USDT=0x...:6``: contracts replacing the network's,
    kept EIP-55 checksummed (web3 refuses any other form). One written in a single case carries
    no checksum and is checksummed here; one in mixed case must carry the right checksum, else
    it holds a typo and the service does not start (docs/decisions.md, "Real EVM chains")."""
    setting = f"CRYPTO_{chain}_TOKENS"
    entries = [e.strip() for e in os.environ.get(setting, "").split(",") if e.strip()]
    if not entries:
        return {}
    from eth_utils import is_hex_address, to_checksum_address  # only when contracts are named

    tokens: dict[str, tuple[str, int]] = {}
    for entry in entries:
        symbol, _, rest = entry.partition("=")
        contract, _, decimals = rest.partition(":")
        if (
            symbol not in ("USDT", "USDC")
            or not contract.startswith("0x")
            or not is_hex_address(contract)
            or not decimals.isdigit()
        ):
            raise ImproperlyConfigured(f"{setting}: '{entry}' is not SYMBOL=0x...:DECIMALS.")
        checksummed = to_checksum_address(contract)
        digits = contract[2:]
        if digits not in (digits.lower(), digits.upper()) and contract != checksummed:
            raise ImproperlyConfigured(
                f"{setting}: {symbol}'s contract {contract} fails its EIP-55 checksum, so it "
                "holds a typo: copy it again from the token issuer's page."
            )
        tokens[symbol] = (checksummed, int(decimals))
    return tokens


SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def _evm_hot_wallet_key() -> str:
    """A secp256k1 private key (64 hex digits, 0x optional), or empty (the HD key's index 0).
    Refused at start otherwise, its value never shown: no cashout could be signed with it."""
    key = os.environ.get("CRYPTO_EVM_HOT_WALLET_KEY", "")
    digits = key.removeprefix("0x")
    if key and not (
        len(digits) == 64
        and all(c in string.hexdigits for c in digits)
        and 0 < int(digits, 16) < SECP256K1_ORDER
    ):
        raise ImproperlyConfigured(
            "CRYPTO_EVM_HOT_WALLET_KEY is not a secp256k1 private key (64 hex digits, 0x "
            "optional); its value is not shown."
        )
    return key


def _solana_mints() -> dict[str, tuple[str, int]]:
    """``CRYPTO_SOL_TOKENS=USDC=<mint>:6,USDT=<mint>:6``: SPL mints (base58 of 32 bytes)
    replacing the network's."""
    from solders.pubkey import Pubkey

    mints: dict[str, tuple[str, int]] = {}
    entries = os.environ.get("CRYPTO_SOL_TOKENS", "").split(",")
    for entry in filter(None, (e.strip() for e in entries)):
        symbol, _, rest = entry.partition("=")
        mint, _, decimals = rest.partition(":")
        try:
            valid = len(bytes(Pubkey.from_string(mint))) == 32
        except ValueError:
            valid = False
        if symbol not in ("USDT", "USDC") or not valid or not decimals.isdigit():
            raise ImproperlyConfigured(
                f"CRYPTO_SOL_TOKENS: '{entry}' is not SYMBOL=<mint>:DECIMALS."
            )
        mints[symbol] = (mint, int(decimals))
    return mints


CRYPTO_RPC_URLS = {
    chain: url
    for chain in ("ETH", "BSC", "SOL")
    if (url := os.environ.get(f"CRYPTO_{chain}_RPC_URL"))
}
CRYPTO_TOKEN_CONTRACTS = {chain: _token_contracts(chain) for chain in ("ETH", "BSC")} | {
    "SOL": _solana_mints()
}
# The key cashouts are signed with (hex); unset, the HD key's index 0. Never commit one.
CRYPTO_EVM_HOT_WALLET_KEY = _evm_hot_wallet_key()
# Blocks per eth_getLogs call of the deposit scanner (a node refusing a range gets half of it).
CRYPTO_EVM_SCAN_BLOCKS = env_int("CRYPTO_EVM_SCAN_BLOCKS", 500)
# An own transaction still out of a block this long is replaced at higher fees (same nonce).
CRYPTO_EVM_FEE_BUMP_SECONDS = env_int("CRYPTO_EVM_FEE_BUMP_SECONDS", 180)
# Scheduled sweeps move a deposit address's token balance to the hot wallet from this many tokens.
CRYPTO_EVM_SWEEP_MIN_TOKENS = env_int("CRYPTO_EVM_SWEEP_MIN_TOKENS", 50)

# Real Solana (crypto.chains.solana.SolanaChains; crypto.chains.nodes.NodeChains serves it beside
# the EVM chains): the node at CRYPTO_SOL_RPC_URL, the mints of CRYPTO_SOL_TOKENS (else the
# network's), the commitment at which deposits are credited and cashouts complete.
CRYPTO_SOLANA_COMMITMENT = os.environ.get("CRYPTO_SOLANA_COMMITMENT", "finalized")
if CRYPTO_SOLANA_COMMITMENT not in ("finalized", "confirmed"):
    raise ImproperlyConfigured("CRYPTO_SOLANA_COMMITMENT must be finalized or confirmed.")
# The hot wallet's keypair (base58 of its 64 bytes, or solana-keygen's JSON array); unset, the
# HD key's Solana index 0. It pays every fee and rent and sends cashouts. Never commit one.
CRYPTO_SOLANA_HOT_WALLET_KEY = os.environ.get("CRYPTO_SOLANA_HOT_WALLET_KEY", "")
# The priority fee (ComputeBudget setComputeUnitPrice, micro-lamports per compute unit) of a first
# signing; each signing again after an expiry doubles it, up to the ceiling.
CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS = env_int(
    "CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS", 10_000
)
CRYPTO_SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS = env_int(
    "CRYPTO_SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS", 2_000_000
)
# Seconds of service clock between two scans of one deposit account, and the signatures asked
# for per getSignaturesForAddress page (1 to 1,000).
CRYPTO_SOLANA_SCAN_SECONDS = env_int("CRYPTO_SOLANA_SCAN_SECONDS", 15)
CRYPTO_SOLANA_SCAN_PAGE = env_int("CRYPTO_SOLANA_SCAN_PAGE", 1000)
# Scheduled sweeps move a deposit account's tokens to the hot wallet from this many tokens.
CRYPTO_SOLANA_SWEEP_MIN_TOKENS = env_int("CRYPTO_SOLANA_SWEEP_MIN_TOKENS", 50)

# The staff console (docs/admin.md). Its home counts what has waited longer than expected, in
# minutes: a trade by kind and state since its last move (in its hold: past the hold's end), a
# cashout by state since it was asked for. CONSOLE_EXPECTED_MINUTES overrides some as JSON, e.g.
# {"withdraw.pending": 240}.
CONSOLE_EXPECTED_MINUTES: dict[str, int] = {
    "withdraw.initiated": 10,  # the merchant's approval is answered or timed out within a minute
    "withdraw.pending": 120,  # bought: the seller's offer to the recipient
    "withdraw.active": STEAM_DELIVERY_OFFER_MINUTES + 60,  # an unanswered offer is cancelled
    "withdraw.hold": 30,  # the hold sweep runs every minute
    "deposit.initiated": 35,  # the offer is retried each minute and given up after 30
    "deposit.pending": 35,
    "deposit.active": DEPOSIT_OFFER_MINUTES + 30,  # an ignored offer is withdrawn
    "deposit.hold": 30,
    "cashout.awaiting_approval": 10,  # the merchant's approval callback
    "cashout.in_review": 60,  # staff's review
    "cashout.approved": 15,  # the broadcast sweep runs every 10 s
}
_expected_overrides = json.loads(os.environ.get("CONSOLE_EXPECTED_MINUTES") or "{}")
if set(_expected_overrides) - set(CONSOLE_EXPECTED_MINUTES):
    raise ImproperlyConfigured(
        f"CONSOLE_EXPECTED_MINUTES knows only {', '.join(CONSOLE_EXPECTED_MINUTES)}."
    )
CONSOLE_EXPECTED_MINUTES |= {key: int(value) for key, value in _expected_overrides.items()}
# A supplier whose balance (USD) is below this is on the console's home.
CONSOLE_SUPPLIER_LOW_BALANCE = Decimal(os.environ.get("CONSOLE_SUPPLIER_LOW_BALANCE", "100"))
# A chain's deposit scanner further behind than this (seconds) is on the console's home.
CONSOLE_SCANNER_LAG_SECONDS = env_int("CONSOLE_SCANNER_LAG_SECONDS", 300)
# Webhook events given up on (failed) within this many days put their merchant on the home.
CONSOLE_WEBHOOK_FAILED_DAYS = env_int("CONSOLE_WEBHOOK_FAILED_DAYS", 3)
# Beat runs check_wallet this often and stores the result; the home flags an older one.
WALLET_CHECK_SECONDS = env_int("WALLET_CHECK_SECONDS", 3600)
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
