"""The limit app's settings: the least a Django + DRF service can do per request on this machine,
served by the same web server, workers and threads as the project (``bench/README.md``, "Limits").

Same PostgreSQL pool, binding and prepared statements, Redis client options and Celery broker
setup as ``config.settings``; no middleware, no apps beyond DRF, no authentication classes: the
header check and the envelope are its own code."""

import os

import dj_database_url

SECRET_KEY = "limit-app-bench-only"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = ["rest_framework"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "limitapp.urls"
USE_TZ = True
TIME_ZONE = "UTC"

_database = dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0)
_database.setdefault("OPTIONS", {}).update(
    pool={"min_size": 2, "max_size": 20, "timeout": 10},
    # As config.settings does by default (DB_PREPARE_THRESHOLD): parameters bound by the server,
    # a statement prepared on a connection once it ran there five times.
    server_side_binding=True,
    prepare_threshold=5,
)
DATABASES = {"default": _database}

REDIS_URL = os.environ["REDIS_URL"]
REDIS_CLIENT_OPTIONS = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}

# The pipeline limit's worker (limitapp.celery): the service's Celery settings, on a queue of its
# own in the same Redis database.
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, **REDIS_CLIENT_OPTIONS}
CELERY_TASK_DEFAULT_QUEUE = "limit"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 60
CELERY_TASK_SOFT_TIME_LIMIT = 45
# The merchant's callback URL every limit account has (bench/receiver.py, a path of its own).
LIMIT_CALLBACK_URL = os.environ.get("LIMIT_CALLBACK_URL", "http://127.0.0.1:8097/limit-hooks")

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["limitapp.rendering.EnvelopeRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_THROTTLE_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}
