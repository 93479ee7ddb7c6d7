"""The request id of the work being done now, for the envelope and every log line."""

import uuid
from contextvars import ContextVar

_request_id: ContextVar[str] = ContextVar("request_id", default="-")


def current_request_id() -> str:
    return _request_id.get()


def start_request() -> str:
    request_id = str(uuid.uuid4())
    _request_id.set(request_id)
    return request_id
