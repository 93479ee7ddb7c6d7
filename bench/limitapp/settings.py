"""The limit app's settings: the least a Django + DRF service can do per request on this machine,
served by the same web server, workers and threads as the project (``bench/README.md``, "Limits").

Same PostgreSQL pool and Redis client options as ``config.settings``; no middleware, no apps
beyond DRF, no authentication classes: the header check and the envelope are its own code."""

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
_database.setdefault("OPTIONS", {})["pool"] = {"min_size": 2, "max_size": 20, "timeout": 10}
DATABASES = {"default": _database}

REDIS_URL = os.environ["REDIS_URL"]
REDIS_CLIENT_OPTIONS = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["limitapp.rendering.EnvelopeRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_THROTTLE_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}
