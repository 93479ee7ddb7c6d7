"""The pipeline limit's Celery app (``celery -A limitapp.celery worker``): configured from the
limit app's settings as ``config.celery`` is from the service's, with only the limit's task."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "limitapp.settings")

app = Celery("limitapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ["limitapp.pipeline"]
