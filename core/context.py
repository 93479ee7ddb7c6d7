"""The request being served now: its id (for the envelope and every log line) and a memo of
values read once per request. A worker's task is served the same way (``task_started``), under
the id of the request that caused it when one did (docs/ops/logs.md)."""

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_request_id: ContextVar[str] = ContextVar("request_id", default="-")
_memo: ContextVar[dict[str, Any] | None] = ContextVar("request_memo", default=None)
_task_serving: ContextVar[str | None] = ContextVar("task_serving", default=None)
# Whom and what the work in hand is about, for the log lines (``LOG_FORMAT=json``).
_merchant_id: ContextVar[str | None] = ContextVar("merchant_id", default=None)
_trade_id: ContextVar[str | None] = ContextVar("trade_id", default=None)


def current_request_id() -> str:
    return _request_id.get()


# What a client may send as its own X-Request-Id (decisions section 11); anything else is ignored.
CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}", re.ASCII)


def start_request(sent_id: str | None = None) -> str:
    """The request's id: the client's ``X-Request-Id`` when it has the accepted shape, else a
    fresh uuid4."""
    usable = sent_id is not None and CLIENT_REQUEST_ID.fullmatch(sent_id)
    request_id = sent_id if usable and sent_id is not None else str(uuid.uuid4())
    _request_id.set(request_id)
    _memo.set({})
    _merchant_id.set(None)
    _trade_id.set(None)
    return request_id


def end_request() -> None:
    """The memo lives for one request only; work after it reads afresh, and what this thread
    logs next names no request (``-``) until another starts."""
    _memo.set(None)
    _request_id.set("-")
    _merchant_id.set(None)
    _trade_id.set(None)


def task_started(task_id: str, request_id: str | None = None) -> None:
    """A worker's task is one unit of work, like a request: its log lines carry the id of the
    request that caused it (``request_id``, sent with the task) or else the task's own, and the
    task's id beside it; the switches (the sandbox clock) are read once for it, not at every
    ``clock.now()``. A task run eagerly inside a request keeps the request's."""
    if _memo.get() is None:
        start_request(request_id or task_id)
        _task_serving.set(task_id)


def task_ended(task_id: str) -> None:
    if _task_serving.get() == task_id:
        end_request()
        _task_serving.set(None)


@contextmanager
def context_request_bound(request_id: str, merchant_id: object = None) -> Iterator[None]:
    """Work done now on behalf of an earlier request (a webhook event it caused, delivered by a
    worker): its log lines, and the tasks and events it makes, name that request (and its
    merchant); after it, the request or task in hand again. An empty ``request_id`` (a row
    written before ids were kept) changes nothing."""
    if not request_id:
        yield
        return
    kept = _request_id.set(request_id)
    merchant = _merchant_id.set(str(merchant_id)) if merchant_id is not None else None
    try:
        yield
    finally:
        if merchant is not None:
            _merchant_id.reset(merchant)
        _request_id.reset(kept)


def context_merchant_set(merchant_id: object) -> None:
    """The merchant this request or task acts for (its log lines name it)."""
    _merchant_id.set(str(merchant_id))


def context_trade_set(trade_id: object, merchant_id: object) -> None:
    """The trade this request or task works on, and its merchant (its log lines name both)."""
    _trade_id.set(str(trade_id))
    _merchant_id.set(str(merchant_id))


def request_memo(key: str, load: Callable[[], T]) -> T:
    """``load()`` once per request or task; outside one (shells, beat) every time."""
    memo = _memo.get()
    if memo is None:
        return load()
    if key not in memo:
        memo[key] = load()
    value: T = memo[key]
    return value


def request_memo_set(key: str, value: Any) -> None:
    """Remember ``value`` under ``key`` for the rest of this request (outside one: nothing)."""
    memo = _memo.get()
    if memo is not None:
        memo[key] = value


def request_memo_peek(key: str) -> Any:
    """What this request remembers under ``key``, or None."""
    memo = _memo.get()
    return None if memo is None else memo.get(key)


def request_memo_forget(key: str) -> None:
    memo = _memo.get()
    if memo is not None:
        memo.pop(key, None)


class RequestIdLogFilter(logging.Filter):
    """Puts the request id, and the merchant, trade and task when known, on every log record
    (settings.LOGGING and config/gunicorn.py name it before the apps load, so this module
    imports nothing of the service)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id()
        record.merchant_id = _merchant_id.get()
        record.trade_id = _trade_id.get()
        record.task_id = _task_serving.get()
        return True
