"""``LOG_FORMAT=json``: one JSON object per line, for log shippers. settings.LOGGING names this
before the apps load, so it imports nothing of the service; the request id, merchant and trade
come from ``core.context.RequestIdLogFilter`` on the same handler."""

import logging
from datetime import UTC, datetime
from typing import Any

import orjson


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": getattr(record, "request_id", "-"),
        }
        for attribute, key in (("merchant_id", "merchantId"), ("trade_id", "tradeId")):
            value = getattr(record, attribute, None)
            if value is not None:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: a message argument of any type never loses the line.
        return orjson.dumps(line, default=str).decode()
