"""The purge of what Django itself keeps growing: the staff console's sessions (a row per login,
never deleted by Django unless ``clearsessions`` runs)."""

from celery import shared_task
from django.contrib.sessions.models import Session
from django.utils import timezone

from core.retention import Retention, rows_purge

ENDED_SESSIONS = Retention(model=Session, column="expire_date")


# A run purges for RETENTION_RUN_SECONDS at most (core.retention), well within its limits.
@shared_task(name="core.purge_sessions", queue="celery", time_limit=120, soft_time_limit=90)
def purge_sessions() -> int:
    # Sessions expire by real time (Django's own clock), not the sandbox's service clock.
    return rows_purge(ENDED_SESSIONS, before=timezone.now())
