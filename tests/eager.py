"""Celery tasks run in the test's process as they are sent. A suite turns this on by importing
``_eager_celery`` into its conftest or test module (the fixture is autouse wherever it is
imported)."""

from collections.abc import Iterator

import pytest

from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def _eager_celery() -> Iterator[None]:
    was = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = was
