"""A worker's task is served like a request (``core.context.task_started``): the switches behind
the sandbox clock are read once for the whole task, not at every ``clock.now()``, and its log
lines carry the task's id; a task run eagerly inside a request keeps the request's."""

from typing import Any

import pytest
from celery import shared_task

from core import clock, selectors
from core.context import current_request_id, end_request, request_memo_peek, start_request
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)

pytestmark = pytest.mark.django_db


@shared_task(name="tests.clock_thrice")
def clock_thrice() -> str:
    for _ in range(3):
        clock.now()
    return current_request_id()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each read of the switches from the shared cache (or the database)."""
    counted: list[int] = []
    load = selectors._service_settings_load

    def counting() -> Any:
        counted.append(1)
        return load()

    monkeypatch.setattr(selectors, "_service_settings_load", counting)
    return counted


def test_a_task_reads_the_switches_once_and_logs_under_its_own_id(loads):
    result = clock_thrice.apply_async(task_id="task-under-test")

    assert result.get() == "task-under-test"
    assert len(loads) == 1
    assert current_request_id() == "-"  # nothing of the task is left on the thread
    clock.now()
    assert len(loads) == 2  # outside a task, read afresh


def test_a_task_run_inside_a_request_keeps_the_request(loads):
    start_request("request-under-test")
    try:
        clock.now()
        assert clock_thrice.apply_async(task_id="eager-task").get() == "request-under-test"
        assert len(loads) == 1  # the request's read serves its eager task too
        assert current_request_id() == "request-under-test"
        assert request_memo_peek(selectors.SETTINGS_CACHE_KEY) is not None
    finally:
        end_request()
