"""The mode the service runs in, its apps, middleware, templates, static files and locale.

With DATABASE_URL unset the service runs in quick-start mode: an SQLite file, a file cache and a
file-system Celery broker under ``var/``, all shared by the web, worker and beat processes.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import env_bool

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# Absolute, whatever the environment gives (bin/start's default is the relative "var"): every
# path below derives from it, and Django warns about a relative file cache (caches.W003) in
# every command.
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var")).absolute()

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
QUICKSTART = not DATABASE_URL
# Only the quick start keeps files under VAR_DIR (its cache and broker among them): a deployment
# shares them between machines through Redis and writes nothing there.
if not QUICKSTART and not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL must be set when DATABASE_URL is set.")
# The simulated outside world (the ``sandbox`` app, its ``/sandbox/`` helpers and the defaults of
# the outside systems in config.settings.outside): bin/start and bin/test turn it on.
SANDBOX = env_bool("SANDBOX", False)
DEBUG = env_bool("DEBUG", False)

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

# The ledger's covering index (ledger.Funding) is PostgreSQL's; SQLite builds it without the
# columns that ride along, which costs the quick start nothing but the warning (models.W040).
# security.W003 looks for Django's CsrfViewMiddleware by its dotted path; ours is its subclass
# CsrfOutsideApi, which checks every form of the admin and the docs (API views take no cookie
# and are CSRF-exempt): docs/ops/deploy-checks.md.
SILENCED_SYSTEM_CHECKS = ["security.W003", *(["models.W040"] if QUICKSTART else [])]

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
