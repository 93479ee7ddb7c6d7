"""The project's envelope, rendered with orjson as the project renders it."""

import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson
from rest_framework.renderers import BaseRenderer


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return orjson.Fragment(format(value, "f"))
    raise TypeError(type(value).__name__)


class EnvelopeRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        response = (renderer_context or {}).get("response")
        success = response is None or response.status_code < 400
        body = {"requestId": str(uuid.uuid4()), "success": success}
        body["data" if success else "error"] = data
        return orjson.dumps(body, default=_default)
