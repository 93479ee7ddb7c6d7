"""Calls made as a bot: the Web API with its access token, the community with its session
cookies. An expired session logs in again and the call is made once more; a platform still
rate limiting after the retries marks the bot ``rate_limited`` for a while, so the fleet's
status and the routing see it."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings

from core import clock
from trading.models import SteamBot
from trading.platform.base import PlatformError, PlatformRateLimitedError
from trading.platform.steam.http import (
    SessionExpiredError,
    SteamAnswer,
    SteamRefusedError,
    steam_request,
)
from trading.platform.steam.session import BotSession, bot_login, bot_session, bot_state_set

T = TypeVar("T")
FORBIDDEN = 403


class BotClient:
    def __init__(self, bot: SteamBot) -> None:
        self.bot = bot

    def _as_bot(self, call: Callable[[BotSession], T]) -> T:
        try:
            try:
                return call(bot_session(self.bot))
            except SessionExpiredError:
                # Once: a session refused right after a fresh login is not an expiry.
                return call(bot_login(self.bot))
        except PlatformRateLimitedError:
            pause = timedelta(seconds=settings.STEAM_RATE_LIMIT_PAUSE_SECONDS)
            bot_state_set(
                self.bot,
                SteamBot.State.RATE_LIMITED,
                "Steam answered 429 past the retries",
                rate_limited_until=clock.real_now() + pause,  # Steam's limit: real time
            )
            raise
        except SessionExpiredError:
            bot_state_set(self.bot, SteamBot.State.SESSION_EXPIRED, "refused after a new login")
            raise

    def webapi(
        self, http_method: str, interface_method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """``{web api}/IEconService/GetTradeOffers/v1`` and the like: the ``response`` object."""

        def call(session: BotSession) -> dict[str, Any]:
            fields = {**params, "access_token": session.access_token}
            url = f"{settings.STEAM_WEB_API_URL}/{interface_method}/v1"
            answer = steam_request(
                http_method,
                url,
                params=fields if http_method == "GET" else None,
                data=fields if http_method != "GET" else None,
            )
            body = answer.body
            response = body.get("response", body) if isinstance(body, dict) else None
            if not isinstance(response, dict):
                # Not an answer of the Web API: never read as an empty one (an empty
                # ``response`` means something, GetTradeHoldDurations' wrong token).
                raise PlatformError(f"{interface_method} answered no JSON object")
            return response

        return self._as_bot(call)

    def community(
        self,
        http_method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        form: dict[str, Any] | None = None,
        referer: str = "",
        retry: bool = True,
        own: bool = False,
        headers: dict[str, str] | None = None,
    ) -> SteamAnswer:
        """A community page or form post with the bot's cookies (form posts carry the
        ``sessionid`` field too). ``own``: a page of the bot's own that Steam shows its logged-in
        owner whatever the privacy (its inventory), so a 403 there says that Steam did not take
        the session (node-steamcommunity, components/users.js ``getUserInventoryContents``:
        "We can never get private profile error for our own inventory!"; aiosteampy,
        client/components/inventory.py ``private_inventory_ctx``)."""

        def call(session: BotSession) -> SteamAnswer:
            url = f"{settings.STEAM_COMMUNITY_URL}{path}"
            sent = dict(headers or {})
            if referer:
                sent["Referer"] = f"{settings.STEAM_COMMUNITY_URL}{referer}"
            data = {**form, "sessionid": session.session_id} if form is not None else None
            try:
                return steam_request(
                    http_method,
                    url,
                    params=params,
                    data=data,
                    headers=sent or None,
                    cookies=session.cookies,
                    retry=retry,
                )
            except SteamRefusedError as exc:
                if own and exc.status == FORBIDDEN:
                    raise SessionExpiredError(f"{path} refused to its owner") from exc
                raise

        return self._as_bot(call)
