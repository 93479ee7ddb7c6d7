"""Sumsub's REST API as the adapter calls it: signed JSON requests, each whole within its
timeout (``core.http.deadline``: connect, status line, headers and body together).

Every request carries ``X-App-Token`` (the app token), ``X-App-Access-Ts`` (Unix seconds, UTC)
and ``X-App-Access-Sig``: the lower-case hex HMAC-SHA256, keyed with the token's secret key, of
the timestamp + the upper-case method + the path with its query string + the body bytes
(https://docs.sumsub.com/reference/authentication). The bytes signed are those of the prepared
request that is sent (its ``path_url`` and body), as SumSubstance/AppTokenUsageExamples signs
them (Python/AppTokenPythonExample.py, ``sign_request``), so an encoded level name cannot make
the signature differ from the request.

An error answers ``{description, code, correlationId, errorCode?, errorName?}``
(https://docs.sumsub.com/reference/review-api-health, "Errors"); too many requests are 429.
"""

import hashlib
import hmac
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson
import requests

from core.http import deadline, deadline_session

logger = logging.getLogger(__name__)


class SumsubUnavailableError(Exception):
    """Sumsub did not answer, or answered an error the adapter cannot act on."""


@dataclass(frozen=True)
class SumsubAnswer:
    status: int
    body: Any


def request_signature(*, secret_key: str, ts: str, method: str, path: str, body: bytes) -> str:
    """``X-App-Access-Sig`` of one request (``path`` with its query string)."""
    message = ts.encode() + method.upper().encode() + path.encode() + body
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()


class SumsubClient:
    """Thread-safe: each thread keeps its own HTTP session (and its kept-alive connections)."""

    def __init__(self, *, base_url: str, app_token: str, secret_key: str, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.app_token = app_token
        self.secret_key = secret_key
        self.timeout = timeout
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = deadline_session()
            session.trust_env = False  # the configured host, never a proxy from the environment
            self._local.session = session
        return session

    def call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
        expect: tuple[int, ...] = (),
    ) -> SumsubAnswer:
        """Send one signed request. A 2xx answer, or a status in ``expect``, is returned with
        its JSON body; anything else raises SumsubUnavailableError (logged with Sumsub's
        ``correlationId``, never with a credential)."""
        data = orjson.dumps(body) if body is not None else b""
        prepared = requests.Request(
            method.upper(),
            self.base_url + path,
            params=params,
            data=data or None,
            headers={"Accept": "application/json", "Content-Type": "application/json"},
        ).prepare()
        ts = str(int(time.time()))  # Sumsub's clock is real time, whatever the sandbox's says
        prepared.headers["X-App-Token"] = self.app_token
        prepared.headers["X-App-Access-Ts"] = ts
        prepared.headers["X-App-Access-Sig"] = request_signature(
            secret_key=self.secret_key,
            ts=ts,
            method=method,
            path=prepared.path_url,
            body=data,
        )
        try:
            with deadline(self.timeout):
                response = self._session().send(
                    prepared, timeout=(self.timeout, self.timeout), allow_redirects=False
                )
                content = response.content
        except requests.RequestException as exc:
            raise SumsubUnavailableError(f"{method} {path}: {exc}") from exc
        try:
            parsed = orjson.loads(content) if content else None
        except orjson.JSONDecodeError:
            parsed = None
        if 200 <= response.status_code < 300 or response.status_code in expect:
            return SumsubAnswer(status=response.status_code, body=parsed)
        error = parsed if isinstance(parsed, dict) else {}
        logger.warning(
            "Sumsub %s %s answered %s: %s (errorName=%s correlationId=%s)",
            method,
            path.split("?")[0],
            response.status_code,
            error.get("description", content[:200]),
            error.get("errorName"),
            error.get("correlationId"),
        )
        raise SumsubUnavailableError(f"{method} {path}: HTTP {response.status_code}")
