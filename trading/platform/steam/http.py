"""HTTP to Steam: every attempt within STEAM_TIMEOUT_SECONDS, whole (``core.http.deadline``);
429 and 5xx answers tried again with backoff; an expired session told apart from a refusal.

How Steam answers, as its widely used open-source clients read it:
- Web API methods report their outcome in the ``x-eresult`` header (1 = OK), also on HTTP 200
  (DoctorMcKay/node-steam-tradeoffer-manager, lib/webapi.js).
- Community form posts answer ``{"strError": "... (N)"}``, N being the EResult, some with
  HTTP 500 (same project, lib/helpers.js ``makeAnError``, lib/classes/TradeOffer.js ``send``).
- An expired web session: HTTP 401, or a redirect to ``/login`` (DoctorMcKay/node-steamcommunity,
  components/http.js), or ``{"success": false, "needauth": true}`` from the mobile
  confirmation endpoints (components/confirmations.js).
- Rate limiting: HTTP 429, sometimes EResult 25 (LimitExceeded) or 84 (RateLimitExceeded).
"""

import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import requests
from django.conf import settings

from core.http import deadline, deadline_session
from trading.platform.base import (
    PlatformError,
    PlatformRateLimitedError,
    PlatformUnavailableError,
)

logger = logging.getLogger(__name__)

EOK = 1
# EResults that say "not now" rather than "no": tried again with backoff.
TRANSIENT_ERESULTS = frozenset({2, 16, 20, 25, 84})  # Fail, Timeout, ServiceUnavailable, limits
RATE_LIMIT_ERESULTS = frozenset({25, 84})
ACCESS_DENIED = 15
STR_ERROR_RESULT = re.compile(r"\((\d+)\)\s*$")
MAX_RETRY_AFTER_SECONDS = 30.0


class SessionExpiredError(PlatformError):
    """The bot's web session is no longer accepted: log in again and retry once."""

    error_key = "PLATFORM_UNAVAILABLE"


class SteamRefusedError(PlatformError):
    """Steam answered, and the answer is no (an EResult other than OK, not transient)."""

    def __init__(self, message: str, *, eresult: int | None, status: int) -> None:
        super().__init__(message)
        self.eresult = eresult
        self.status = status


@dataclass(frozen=True)
class SteamAnswer:
    status: int
    body: Any  # the parsed JSON body, None when there is none
    eresult: int | None
    headers: dict[str, str]


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def eresult_of(response: requests.Response, body: Any) -> int | None:
    header = response.headers.get("x-eresult")
    if header and header.lstrip("-").isdigit():
        return int(header)
    if isinstance(body, dict) and isinstance(body.get("strError"), str):
        match = STR_ERROR_RESULT.search(body["strError"])
        if match:
            return int(match.group(1))
    return None


def _session_expired(response: requests.Response, body: Any) -> bool:
    if response.status_code == 401:
        return True
    location = response.headers.get("location", "")
    if 300 <= response.status_code < 400 and "/login" in location:
        return True
    return isinstance(body, dict) and body.get("needauth") is True


def _retry_wait(response: requests.Response | None, attempt: int) -> float:
    if response is not None:
        after = response.headers.get("retry-after", "")
        if after.isdigit():
            return min(float(after), MAX_RETRY_AFTER_SECONDS)
    wait: float = settings.STEAM_BACKOFF_SECONDS * (2**attempt)
    return min(wait, MAX_RETRY_AFTER_SECONDS)


def steam_request(
    method: str,
    url: str,
    *,
    params: dict[str, Any] | None = None,
    data: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    retry: bool = True,
) -> SteamAnswer:
    """One call, tried again on 429, 5xx with a transient (or no) EResult and connection
    failures (unless ``retry`` is off: a request that may have taken effect, such as sending an
    offer, is never repeated blindly). Raises SessionExpiredError, PlatformRateLimitedError
    (still limited after the retries), PlatformUnavailableError (still down) or
    SteamRefusedError (a final no)."""
    attempts = settings.STEAM_RETRIES + 1 if retry else 1
    last: requests.Response | None = None
    for attempt in range(attempts):
        try:
            # A session per call, as requests.request makes: nothing one bot's call is answered
            # (a cookie) travels with another's.
            with deadline(settings.STEAM_TIMEOUT_SECONDS), deadline_session() as session:
                response = session.request(
                    method,
                    url,
                    params=params,
                    data=data,
                    headers=headers,
                    cookies=cookies,
                    timeout=settings.STEAM_TIMEOUT_SECONDS,
                    allow_redirects=False,
                )
        except requests.RequestException as exc:
            logger.warning("steam %s %s failed: %s", method, _path(url), exc)
            last = None
            if attempt + 1 < attempts:
                time.sleep(_retry_wait(None, attempt))
                continue
            raise PlatformUnavailableError(f"Steam did not answer: {exc}") from exc
        body = _json(response)
        if _session_expired(response, body):
            raise SessionExpiredError(f"session expired ({response.status_code})")
        eresult = eresult_of(response, body)
        limited = response.status_code == 429 or eresult in RATE_LIMIT_ERESULTS
        down = response.status_code >= 500 and (eresult is None or eresult in TRANSIENT_ERESULTS)
        if limited or down:
            last = response
            if attempt + 1 < attempts:
                time.sleep(_retry_wait(response, attempt))
                continue
            if limited:
                raise PlatformRateLimitedError(f"Steam is rate limiting {_path(url)}")
            raise PlatformUnavailableError(f"Steam answered {response.status_code} ({eresult})")
        answer = SteamAnswer(
            status=response.status_code,
            body=body,
            eresult=eresult,
            headers={k.lower(): v for k, v in response.headers.items()},
        )
        if response.status_code >= 400 or (eresult is not None and eresult != EOK):
            message = body.get("strError", "") if isinstance(body, dict) else ""
            raise SteamRefusedError(
                message or f"Steam refused {_path(url)}: HTTP {response.status_code}, {eresult}",
                eresult=eresult,
                status=response.status_code,
            )
        return answer
    raise PlatformUnavailableError(f"Steam answered {last.status_code if last else 'nothing'}")


def _path(url: str) -> str:
    """The URL without its query (which may carry a token)."""
    return url.split("?", 1)[0]
