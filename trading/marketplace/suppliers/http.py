"""One HTTP call to a supplier, whole within its connect and read timeouts together
(``core.http.deadline``), and the answers every supplier shares turned into the adapters'
errors: 429 (with ``Retry-After``) and maintenance (503) are "unavailable"; a buy whose answer
is lost after it was sent (a timeout, the deadline, a dropped connection, a 500 or a gateway
timeout) is "outcome unknown"; a request that never reached the supplier is "unavailable"
(nothing happened)."""

import threading
from dataclasses import dataclass

import requests

from core.http import deadline, deadline_session
from trading.marketplace.suppliers.base import (
    SupplierOutcomeUnknownError,
    SupplierUnavailableError,
)

# A gateway's or server's error after a buy was sent says nothing about whether it happened.
AMBIGUOUS_STATUSES = frozenset({500, 502, 504})

_sessions = threading.local()


def _session() -> requests.Session:
    """A session per thread (connection reuse; ``requests.Session`` is not thread-safe)."""
    session: requests.Session | None = getattr(_sessions, "session", None)
    if session is None:
        session = deadline_session()  # no retries: a buy is never sent twice by the transport
        _sessions.session = session
    return session


@dataclass(frozen=True)
class SupplierHttp:
    base_url: str
    connect_timeout: float
    read_timeout: float

    def send(
        self,
        method: str,
        path_and_query: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        changes_state: bool = False,
    ) -> requests.Response:
        """The supplier's answer, whatever its status but 429 and 5xx. ``changes_state``: a
        lost answer means the outcome is unknown, not that nothing happened."""
        try:
            with deadline(self.connect_timeout + self.read_timeout):
                response = _session().request(
                    method,
                    self.base_url.rstrip("/") + path_and_query,
                    data=body,
                    headers=headers,
                    timeout=(self.connect_timeout, self.read_timeout),
                    allow_redirects=False,
                )
        except (requests.ConnectTimeout, requests.exceptions.InvalidURL) as exc:
            raise SupplierUnavailableError(f"not reached: {exc}") from exc
        except requests.ConnectionError as exc:
            if changes_state and not _never_connected(exc):
                raise SupplierOutcomeUnknownError(f"answer lost: {exc}") from exc
            raise SupplierUnavailableError(f"not reached: {exc}") from exc
        except requests.RequestException as exc:  # a timeout, the deadline, a broken body
            if changes_state:
                raise SupplierOutcomeUnknownError(f"answer lost: {exc}") from exc
            raise SupplierUnavailableError(f"no answer: {exc}") from exc
        if response.status_code == 429:
            raise SupplierUnavailableError("rate limited (429)", retry_after=_retry_after(response))
        if changes_state and response.status_code in AMBIGUOUS_STATUSES:
            raise SupplierOutcomeUnknownError(f"HTTP {response.status_code} after sending")
        if response.status_code >= 500:
            raise SupplierUnavailableError(
                f"HTTP {response.status_code} (maintenance or outage)",
                retry_after=_retry_after(response),
            )
        return response


def _never_connected(exc: requests.ConnectionError) -> bool:
    """Refused or unresolvable: the request never left."""
    text = repr(exc)
    return "NewConnectionError" in text or "NameResolutionError" in text


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def json_body(response: requests.Response) -> dict[str, object]:
    """The answer's JSON object; an answer that is none is the supplier misbehaving."""
    try:
        body = response.json()
    except ValueError as exc:
        raise SupplierUnavailableError(f"HTTP {response.status_code}: not JSON") from exc
    if not isinstance(body, dict):
        raise SupplierUnavailableError(f"HTTP {response.status_code}: not a JSON object")
    return body
