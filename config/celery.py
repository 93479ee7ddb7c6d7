"""The Celery app ``config``: ``celery -A config worker --beat`` runs every worker and timer."""

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "prune-rate-limit-windows": {
        "task": "merchants.prune_rate_limit_windows",
        "schedule": crontab(minute="*/10"),
    },
}
