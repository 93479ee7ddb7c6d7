"""``LOG_FORMAT``: how every process writes its log (docs/ops/logs.md). ``json``: one JSON object
per line, for log shippers; ``line`` (the default): a readable line. settings.LOGGING,
config/gunicorn.py and the Celery app name this before the apps load, so it imports nothing of
the service; the request id, merchant, trade and task come from
``core.context.RequestIdLogFilter`` on the same handler."""

import logging
import logging.config
import os
import sys
import threading
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import orjson

LOG_FORMATS = ("line", "json")
# What a record carries for its JSON line beyond the message: ``extra={LOG_FIELDS: {...}}``.
LOG_FIELDS = "log_fields"

uncaught_logger = logging.getLogger("uncaught")
stdout_logger = logging.getLogger("stdout")


def log_format() -> str:
    """``LOG_FORMAT`` from the environment (settings and gunicorn's master read it alike)."""
    chosen = (os.environ.get("LOG_FORMAT") or "line").strip().lower()
    if chosen not in LOG_FORMATS:
        raise ValueError("LOG_FORMAT must be line or json.")
    return chosen


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": getattr(record, "request_id", "-"),
        }
        for attribute, key in (
            ("merchant_id", "merchantId"),
            ("trade_id", "tradeId"),
            ("task_id", "taskId"),
        ):
            value = getattr(record, attribute, None)
            if value is not None:
                line[key] = value
        fields = getattr(record, LOG_FIELDS, None)
        if isinstance(fields, dict):
            line |= {key: value for key, value in fields.items() if key not in line}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: a message argument of any type never loses the line.
        return orjson.dumps(line, default=str).decode()


def logging_configure(config: dict[str, Any]) -> None:
    """settings.LOGGING applied (Django's ``LOGGING_CONFIG``). Under ``json``, what would
    otherwise be written bare goes through it too: Python's warnings (``py.warnings``) and
    exceptions nothing caught, in the main thread or another (``uncaught``)."""
    logging.config.dictConfig(config)
    if log_format() == "json":
        logging.captureWarnings(True)
        sys.excepthook = _uncaught
        threading.excepthook = _uncaught_in_thread


def _uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, error, trace)
        return
    uncaught_logger.critical("uncaught exception", exc_info=(kind, error, trace))


def _uncaught_in_thread(hook: threading.ExceptHookArgs) -> None:
    if hook.exc_type is SystemExit or hook.exc_value is None:
        return
    name = hook.thread.name if hook.thread is not None else "?"
    uncaught_logger.critical(
        "uncaught exception in thread %s",
        name,
        exc_info=(hook.exc_type, hook.exc_value, hook.exc_traceback),
    )


def stdout_logged() -> None:
    """From now on, what is written to this process's standard output (file descriptor 1, and
    so ``print`` and ``os.write(1, ...)`` alike) becomes records of the ``stdout`` logger, one a
    line, read by a thread of its own: Celery writes its shutdown notices there straight from
    its signal handlers, past any logger. The log itself goes to standard error, untouched."""
    sys.stdout.flush()
    read_end, write_end = os.pipe()
    os.dup2(write_end, 1)
    os.close(write_end)
    threading.Thread(target=_stdout_pump, args=(read_end,), name="stdout-log", daemon=True).start()


def _stdout_pump(read_end: int) -> None:
    with open(read_end, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            text = line.rstrip()
            if text:
                stdout_logger.info("%s", text)
