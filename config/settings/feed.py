"""The real-time feed (docs/feed.md): its bus, its sockets and the quick start's front."""

import os
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import REDIS_URL, VAR_DIR
from config.settings.environment import env_float, env_int, env_list

# Web and worker processes publish committed changes on the feed bus, every feed process
# (``manage.py feed``) reads it. Redis pub/sub when Redis is configured, else the quick start's
# spool folder. Redis pub/sub channels ignore the database number, so the default channel
# carries it: deployments sharing a Redis by database stay apart.
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
FEED_CORS_ALLOWED_ORIGINS = env_list("FEED_CORS_ALLOWED_ORIGINS")
# The quick start's front (feed/front_server.py): a connection whose request head has not
# arrived whole this long after it began to wait for one is closed.
FEED_FRONT_HEAD_TIMEOUT_SECONDS = env_float("FEED_FRONT_HEAD_TIMEOUT_SECONDS", 10.0)
if FEED_FRONT_HEAD_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured("FEED_FRONT_HEAD_TIMEOUT_SECONDS must be above 0.")
