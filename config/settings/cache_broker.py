"""Redis's clients, the cache and Celery: Redis when configured, else the quick start's files
under VAR_DIR, shared by every local process."""

from typing import Any

from config.settings.base import REDIS_URL, VAR_DIR
from config.settings.environment import env_bool, env_float

# Every Redis client (cache, rate limits, broker) gives up on a Redis that refuses or does not
# answer within these, so a call fails fast (503) instead of holding a web thread for minutes.
REDIS_CLIENT_OPTIONS = {
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT_SECONDS", 1.0),
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT_SECONDS", 1.0),
}

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
