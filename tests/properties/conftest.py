from collections.abc import Iterator

import pytest

from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def _eager_celery() -> Iterator[None]:
    """Tasks run inline, as a worker would, when the request's on-commit work is run."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False
