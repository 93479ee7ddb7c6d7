"""The Celery app ``config``: ``celery -A config worker --beat`` runs every worker and timer."""

import os

from celery import Celery
from celery.schedules import crontab

import config.broker  # noqa: F401 (registers the quick start's broker transport)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "sweep-webhooks": {"task": "webhooks.sweep", "schedule": 10.0},
    "sweep-purchases": {"task": "trading.sweep_purchases", "schedule": 30.0},
    "sweep-holds": {"task": "trading.sweep_holds", "schedule": 60.0},
    "sweep-cancels": {"task": "trading.sweep_cancels", "schedule": 30.0},
    "sweep-deposit-offers": {"task": "trading.sweep_deposit_offers", "schedule": 30.0},
    "sweep-verifications": {"task": "merchants.sweep_verifications", "schedule": 60.0},
    "sandbox-autopilot": {"task": "trading.sandbox_autopilot", "schedule": 2.0},
    "crypto-sweep-deposits": {"task": "crypto.sweep_deposits", "schedule": 15.0},
    "crypto-sweep-withdrawals": {"task": "crypto.sweep_withdrawals", "schedule": 10.0},
    "crypto-sandbox-autopilot": {"task": "crypto.sandbox_autopilot", "schedule": 2.0},
    "prune-rate-limit-windows": {
        "task": "merchants.prune_rate_limit_windows",
        "schedule": crontab(minute="*/10"),
    },
}
