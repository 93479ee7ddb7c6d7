"""A recorded Sumsub API on loopback, for the Sumsub adapter's tests: the calls the adapter makes,
answered with Sumsub's shapes and errors, and Sumsub's signed webhooks.

Written from Sumsub's public documentation and its examples repository (facts only):

- every request must carry ``X-App-Token``, ``X-App-Access-Ts`` and ``X-App-Access-Sig``, the
  lower-case hex HMAC-SHA256 of ts + METHOD + path with query + body under the app token's
  secret key (https://docs.sumsub.com/reference/authentication; SumSubstance/
  AppTokenUsageExamples, Python/AppTokenPythonExample.py). A request that does not verify is 401
  ``{"description": "Request signature mismatch", "code": 401, "correlationId", "errorCode":
  4003, "errorName": "app-token-signature mismatch"}``
  (https://docs.sumsub.com/reference/generate-websdk-external-link). How far the timestamp may be
  from Sumsub's clock is not documented: this server allows 5 minutes;
- errors are ``{description, code, correlationId, errorCode?, errorName?}``; too many requests
  are 429 (https://docs.sumsub.com/reference/review-api-health);
- ``POST /resources/applicants?levelName=`` ``{externalUserId, email?}`` answers the applicant
  (``id``, ``externalUserId``, ``review`` with ``reviewStatus: init``...) and 409 for an
  ``externalUserId`` already used (https://docs.sumsub.com/reference/create-applicant; the 409's
  description wording is not documented, the adapter does not read it);
- ``GET /resources/applicants/{id}/one`` and ``GET /resources/applicants/-;externalUserId=
  {externalUserId}/one`` answer the applicant
  (https://docs.sumsub.com/reference/get-applicant-data-via-externaluserid);
- ``POST /resources/accessTokens/sdk`` ``{userId, levelName, ttlInSecs}`` answers ``{token,
  userId}``, tokens like ``_act-b8ebfb63-...`` (https://docs.sumsub.com/reference/generate-access-token);
- ``POST /resources/sdkIntegrations/levels/-/websdkLink`` ``{levelName, userId, ttlInSecs}``
  answers ``{url}`` (https://docs.sumsub.com/reference/generate-websdk-external-link);
- webhooks: the payload attributes of https://docs.sumsub.com/docs/user-verification-webhooks
  (``createdAtMs`` as "yyyy-MM-dd HH:mm:ss.fff" UTC), the reviewResult of
  https://docs.sumsub.com/docs/receive-and-interpret-results-via-api, signed with
  ``X-Payload-Digest`` (hex HMAC of the body under the webhook's secret key) and
  ``X-Payload-Digest-Alg`` (https://docs.sumsub.com/docs/webhook-manager).

Status codes the documentation does not show for a success are 200.
"""

import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from core import clock

TIMESTAMP_TOLERANCE_SECONDS = 300
DIGESTS = {
    "HMAC_SHA1_HEX": hashlib.sha1,
    "HMAC_SHA256_HEX": hashlib.sha256,
    "HMAC_SHA512_HEX": hashlib.sha512,
}


def _hex_id() -> str:
    return secrets.token_hex(12)  # Sumsub's ids look like "5cb56e8e0a975a35f333cb83"


@dataclass
class Applicant:
    id: str
    external_user_id: str
    level_name: str
    email: str | None
    created_at: str
    inspection_id: str = field(default_factory=_hex_id)
    review_status: str = "init"
    review_result: dict[str, Any] | None = None

    def json(self) -> dict[str, Any]:
        review: dict[str, Any] = {
            "reviewId": secrets.token_hex(3),
            "attemptId": secrets.token_hex(3),
            "attemptCnt": 0,
            "levelName": self.level_name,
            "createDate": self.created_at,
            "reviewStatus": self.review_status,
            "priority": 0,
        }
        if self.review_result is not None:
            review["reviewResult"] = self.review_result
        body = {
            "id": self.id,
            "createdAt": self.created_at,
            "key": "TESTKEY",
            "clientId": "trading-service",
            "inspectionId": self.inspection_id,
            "externalUserId": self.external_user_id,
            "type": "individual",
            "review": review,
        }
        if self.email:
            body["email"] = self.email
        return body


@dataclass
class Call:
    method: str
    path: str
    body: Any
    status: int


class FakeSumsub:
    def __init__(self, *, app_token: str, secret_key: str, webhook_secret: str, level: str) -> None:
        self.app_token = app_token
        self.secret_key = secret_key
        self.webhook_secret = webhook_secret
        self.level = level
        self.applicants: dict[str, Applicant] = {}
        self.tokens: dict[str, str] = {}  # the last SDK token per userId
        self.links: dict[str, str] = {}  # the last WebSDK link per userId
        self.calls: list[Call] = []
        self.failures: deque[int] = deque()  # statuses the next requests answer
        self.route_failures: dict[str, deque[int]] = {}  # the same, for one "METHOD /path"
        self.held = threading.Event()  # set: requests wait for ``release``
        self.release = threading.Event()
        self.waiting = threading.Event()  # a held request is in
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- Lifecycle.

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    # -- What the tests make Sumsub do.

    def fail_next(self, *statuses: int) -> None:
        """The next requests answer these errors, one each, before any routing."""
        self.failures.extend(statuses)

    def fail_route(self, route: str, *statuses: int) -> None:
        """The next requests to ``route`` ("POST /resources/accessTokens/sdk") answer these."""
        self.route_failures.setdefault(route, deque()).extend(statuses)

    def by_external(self, external_user_id: str) -> Applicant:
        (applicant,) = [
            a for a in self.applicants.values() if a.external_user_id == external_user_id
        ]
        return applicant

    def review(self, applicant_id: str, answer: str, reject_type: str | None = None) -> None:
        """Sumsub's compliance finishes the applicant's review."""
        result: dict[str, Any] = {"reviewAnswer": answer}
        if answer == "RED":
            result |= {
                "moderationComment": "We could not verify your profile.",
                "clientComment": "Selfie does not match the document.",
                "rejectLabels": ["SELFIE_MISMATCH"],
                "reviewRejectType": reject_type,
            }
        applicant = self.applicants[applicant_id]
        applicant.review_status, applicant.review_result = "completed", result

    def resubmit(self, applicant_id: str) -> None:
        """The person sends new documents after a RETRY: pending again, undecided."""
        applicant = self.applicants[applicant_id]
        applicant.review_status, applicant.review_result = "pending", None

    def webhook(
        self,
        applicant_id: str,
        kind: str = "applicantReviewed",
        *,
        created_at: datetime | None = None,
        algorithm: str = "HMAC_SHA256_HEX",
        secret: str | None = None,
        **extra: Any,
    ) -> tuple[bytes, dict[str, str]]:
        """The webhook Sumsub posts about the applicant now: its body and headers."""
        applicant = self.applicants[applicant_id]
        made = created_at or clock.real_now()  # Sumsub's clock: real time, not the sandbox's
        payload: dict[str, Any] = {
            "applicantId": applicant.id,
            "inspectionId": applicant.inspection_id,
            "correlationId": f"req-{uuid.uuid4()}",
            "externalUserId": applicant.external_user_id,
            "levelName": applicant.level_name,
            "type": kind,
            "sandboxMode": False,
            "reviewStatus": applicant.review_status,
            "createdAtMs": made.strftime("%Y-%m-%d %H:%M:%S.") + f"{made.microsecond // 1000:03d}",
            "applicantType": "individual",
            "clientId": "trading-service",
        }
        if kind == "applicantReviewed" and applicant.review_result is not None:
            payload["reviewResult"] = applicant.review_result
        payload |= extra
        body = json.dumps(payload, indent=2).encode()
        return body, self.sign(body, algorithm=algorithm, secret=secret)

    def sign(
        self, body: bytes, *, algorithm: str = "HMAC_SHA256_HEX", secret: str | None = None
    ) -> dict[str, str]:
        key = (secret if secret is not None else self.webhook_secret).encode()
        return {
            "Content-Type": "application/json",
            "X-Payload-Digest": hmac.new(key, body, DIGESTS[algorithm]).hexdigest(),
            "X-Payload-Digest-Alg": algorithm,
        }

    def paths(self, status: int | None = None) -> list[str]:
        return [
            f"{c.method} {urlsplit(c.path).path}"
            for c in self.calls
            if status is None or c.status == status
        ]

    # -- The API.

    def _error(self, status: int, description: str, **more: Any) -> tuple[int, Any]:
        body = {"description": description, "code": status, "correlationId": _hex_id()} | more
        return status, body

    def _verify(self, method: str, path: str, headers: Any, body: bytes) -> tuple[int, Any] | None:
        ts = headers.get("X-App-Access-Ts", "")
        expected = hmac.new(
            self.secret_key.encode(),
            ts.encode() + method.encode() + path.encode() + body,
            hashlib.sha256,
        ).hexdigest()
        if headers.get("X-App-Token") != self.app_token:
            return self._error(401, "App token is invalid")
        fresh = ts.isdigit() and abs(int(ts) - time.time()) <= TIMESTAMP_TOLERANCE_SECONDS
        if not fresh or not hmac.compare_digest(expected, headers.get("X-App-Access-Sig", "")):
            return self._error(
                401,
                "Request signature mismatch",
                errorCode=4003,
                errorName="app-token-signature mismatch",
            )
        return None

    def _route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = urlsplit(path)
        route = unquote(parts.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        now = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        if method == "POST" and route == "/resources/applicants":
            if query.get("levelName") != self.level:
                return self._error(400, f"Level '{query.get('levelName')}' not found")
            external = body.get("externalUserId") if isinstance(body, dict) else None
            if not isinstance(external, str) or not external:
                return self._error(400, "externalUserId is required")
            with self._lock:
                taken = [a for a in self.applicants.values() if a.external_user_id == external]
                if taken:
                    return self._error(
                        409, f"Applicant with external user id '{external}' already exists"
                    )
                applicant = Applicant(_hex_id(), external, self.level, body.get("email"), now)
                self.applicants[applicant.id] = applicant
            return 200, applicant.json()
        if (
            method == "GET"
            and route.startswith("/resources/applicants/")
            and route.endswith("/one")
        ):
            key = route.removeprefix("/resources/applicants/").removesuffix("/one")
            if key.startswith("-;externalUserId="):
                external = key.removeprefix("-;externalUserId=")
                found = [a for a in self.applicants.values() if a.external_user_id == external]
            else:
                found = [self.applicants[key]] if key in self.applicants else []
            if not found:
                return self._error(404, "Applicant not found")
            return 200, found[0].json()
        if method == "POST" and route == "/resources/accessTokens/sdk":
            user = body.get("userId") if isinstance(body, dict) else None
            if not isinstance(user, str) or body.get("levelName") != self.level:
                return self._error(400, "userId and an existing levelName are required")
            self.tokens[user] = f"_act-sbx-{uuid.uuid4()}"
            return 200, {"token": self.tokens[user], "userId": user}
        if method == "POST" and route == "/resources/sdkIntegrations/levels/-/websdkLink":
            user = body.get("userId") if isinstance(body, dict) else None
            if not isinstance(user, str) or body.get("levelName") != self.level:
                return self._error(400, "userId and an existing levelName are required")
            self.links[user] = f"{self.url}/websdk/p/{secrets.token_urlsafe(12)}"
            return 200, {"url": self.links[user]}
        return self._error(404, "Not found")

    def _answer(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        if self.held.is_set():
            self.waiting.set()
            self.release.wait(timeout=30)
        route = f"{method} {urlsplit(path).path}"
        planned = self.route_failures.get(route, deque())
        if self.failures or planned:
            status = (self.failures or planned).popleft()
            if status == 429:
                return self._error(429, "Too many requests")
            return self._error(status, "Internal server error")
        refused = self._verify(method, path, headers, raw)
        if refused is not None:
            return refused
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return self._error(400, "Malformed JSON")
        return self._route(method, path, body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, body = fake._answer(self.command, self.path, self.headers, raw)
                try:
                    recorded = json.loads(raw) if raw else None
                except ValueError:
                    recorded = raw
                fake.calls.append(Call(self.command, self.path, recorded, status))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def log_message(self, *args: object) -> None:
                pass

        return Handler
