"""``Idempotency-Key`` on POST, as HTTP sees it (docs/decisions.md, "Idempotency-Key"): the
header read and checked, what makes two requests the same request, which answers are kept, and
the replay of a kept one. Where keys are stored, and for whom, is the caller's view's business
(``merchants.views``)."""

import hashlib
import re

from django.http import HttpResponse
from rest_framework.request import Request
from rest_framework.response import Response

from core.context import current_request_id
from core.errors import validation_error
from core.json import canonical_dumps, dumps

HEADER = "Idempotency-Key"
MAX_LENGTH = 255  # as Stripe's
# Visible ASCII: a UUID, a ULID, base64 and "order:42" all fit; spaces, control characters
# (NUL among them) and non-ASCII text do not.
_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_LENGTH}}}")
KEY_RULE = f"1-{MAX_LENGTH} visible ASCII characters (no spaces)."
# On a replayed answer (Stripe's names): it is a replay, and the first request's requestId.
REPLAYED_HEADER = "Idempotent-Replayed"
ORIGINAL_REQUEST_HEADER = "Original-Request"


class IdempotentReplayError(Exception):
    """Raised before the view runs when the answer is a kept one (not an error: the view
    answers with it)."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__("replayed")
        self.response = response


def idempotency_key(request: Request) -> str | None:
    """The request's key, None without one; VALIDATION_FAILED for one outside the rule."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    if not _KEY.fullmatch(raw):
        raise validation_error({HEADER: f"Must be {KEY_RULE}"})
    return raw


def request_fingerprint(request: Request) -> str:
    """What a retry must repeat: the method, the path with its query string, and the JSON body
    (compared as JSON: key order and white space aside). Reads the body, so a malformed one is
    refused here, before the key is taken."""
    body = canonical_dumps(request.data)
    target = f"{request.method} {request.get_full_path()}\n".encode()
    return hashlib.sha256(target + body).hexdigest()


def _envelope_head(request_id: str) -> bytes:
    """How every API body starts (``core.api.rendering.envelope``)."""
    return b'{"requestId":' + dumps(request_id) + b","


def kept_body(response: Response) -> bytes | None:
    """The answer to keep for replays, without its requestId; None when it is not kept. Every
    answer is kept (Stripe keeps even 500s) but those saying the request did nothing and may be
    sent again as it was: VALIDATION_FAILED (fix the body, keep the key, as Stripe lets one)
    and the answers with ``Retry-After`` (429, 503, TRANSACTION_CONFLICT)."""
    if response.has_header("Retry-After"):
        return None
    data = response.data
    if isinstance(data, dict) and data.get("key") == "VALIDATION_FAILED":
        return None
    response.render()
    head = _envelope_head(current_request_id())
    content = bytes(response.content)
    return content[len(head) :] if content.startswith(head) else None


def replay_response(*, status_code: int, body: bytes, original_request_id: str) -> HttpResponse:
    """The kept answer: its status and body, under this request's own requestId."""
    response = HttpResponse(
        _envelope_head(current_request_id()) + body,
        status=status_code,
        content_type="application/json",
    )
    response[REPLAYED_HEADER] = "true"
    response[ORIGINAL_REQUEST_HEADER] = original_request_id
    return response
