"""A bot's web session: an access token (a JWT that Steam signs; both the Web API, as
``access_token``, and the community, in the ``steamLoginSecure`` cookie, accept it), renewed
from the stored refresh token, or, when that is refused, by a full login through
``IAuthenticationService`` with the password and a login code from the shared secret.

The flow, as bukson/steampy (``login.py``) and DoctorMcKay/node-steam-session
(``LoginSession``, ``AuthenticationClient``) drive it: ``GetPasswordRSAPublicKey`` ->
``BeginAuthSessionViaCredentials`` (the password RSA-encrypted, PKCS#1 v1.5, with the key's
timestamp) -> ``UpdateAuthSessionWithSteamGuardCode`` (code type 3, a device code) ->
``PollAuthSessionStatus`` (the refresh and access tokens); renewal: ``GenerateAccessTokenForApp``
(refresh token and Steam id). The community's ``sessionid`` is a value the client makes up and
sends back as cookie and form field (CSRF).

The login is the mobile app's (``website_id`` "Mobile" and ``device_details`` with
``platform_type`` 3, EAuthTokenPlatformType.MobileApp, as node-steam-session's
``AuthenticationClient._getPlatformData`` sends them; form fields of a nested message are
``device_details[name]``): Steam issues a refresh token for the platform the login names, and
``GenerateAccessTokenForApp`` renews only a MobileApp one (a WebBrowser one is refused with
AccessDenied: node-steam-session ``LoginSession.refreshAccessToken``). A stored refresh token
of another platform is refused once, then replaced by a mobile login. Renewal asks for a new
refresh token (``renewal_type`` 1) only in the last weeks of the current one: a renewed refresh
token ends the old one (``LoginSession.renewRefreshToken``), so asking every time would let two
workers renewing together lock each other out."""

import base64
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
from django.conf import settings

from core import clock
from core.sealed import SealedSecretError, seal, unseal
from trading.models import SteamBot
from trading.platform.base import PlatformError, PlatformUnavailableError
from trading.platform.steam.guard import login_code
from trading.platform.steam.http import SessionExpiredError, SteamRefusedError, steam_request

# A token this close to its expiry is renewed before use.
RENEW_MARGIN = timedelta(minutes=5)
# Without an expiry in the token (it always has one), assume Steam's usual day.
DEFAULT_LIFETIME = timedelta(hours=24)
DEVICE_CODE = 3  # EAuthSessionGuardType.DeviceCode
PERSISTENT = 1  # ESessionPersistence.Persistent
# node-steam-session, AuthenticationClient._getPlatformData, EAuthTokenPlatformType.MobileApp
MOBILE_APP_LOGIN = {
    "website_id": "Mobile",
    "device_details[device_friendly_name]": "trading service bot",
    "device_details[platform_type]": 3,  # EAuthTokenPlatformType.MobileApp
    "device_details[os_type]": -500,  # EOSType.AndroidUnknown
    "device_details[gaming_device_type]": 528,
}
RENEW_REFRESH_WITHIN = timedelta(days=30)


@dataclass(frozen=True)
class BotSession:
    steam_id: str
    access_token: str
    session_id: str

    @property
    def cookies(self) -> dict[str, str]:
        return {
            "steamLoginSecure": f"{self.steam_id}||{self.access_token}",
            "sessionid": self.session_id,
        }


def _auth_url(method: str) -> str:
    return f"{settings.STEAM_LOGIN_URL}/IAuthenticationService/{method}/v1"


def _response(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("response"), dict):
        raise PlatformError("Steam's authentication service answered no response object")
    response: dict[str, Any] = body["response"]
    return response


def _token_end(token: str) -> datetime | None:
    """The token's own ``exp`` (read, not verified: Steam verifies it, we only plan renewals)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
        return datetime.fromtimestamp(int(claims["exp"]), tz=UTC)
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        return None


def _mobile(refresh_token: str) -> bool:
    """Issued to the mobile app: its audiences name "mobile" (node-steam-session,
    EAuthTokenPlatformType.ts and LoginSession.ts ``refreshToken``)."""
    try:
        claims = jwt.decode(refresh_token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return False
    audience = claims.get("aud")
    return "mobile" in (audience if isinstance(audience, list) else [audience])


def _expiry(access_token: str) -> datetime:
    return _token_end(access_token) or clock.real_now() + DEFAULT_LIFETIME


def bot_state_set(bot: SteamBot, state: str, detail: str = "", **fields: Any) -> None:
    """Record the bot's state (what the fleet status and the admin read)."""
    now = clock.now()
    changed = {"state": state, "state_detail": detail[:200], **fields}
    if bot.state != state:
        changed["state_changed_at"] = now
    for name, value in changed.items():
        setattr(bot, name, value)
    SteamBot.objects.filter(pk=bot.pk).update(**changed)


def bot_session(bot: SteamBot) -> BotSession:
    """The bot's session, renewed first when its access token is (nearly) expired."""
    expires = bot.access_token_expires_at
    # The token's expiry is Steam's, in real time.
    if bot.access_token_sealed and expires and expires - RENEW_MARGIN > clock.real_now():
        try:
            return BotSession(bot.steam_id, unseal(bot.access_token_sealed), bot.session_id)
        except SealedSecretError:
            pass
    return bot_login(bot)


def bot_login(bot: SteamBot, *, with_credentials: bool = False) -> BotSession:
    """Log the bot in again: renew from the refresh token, else (or ``with_credentials``) a
    full login. Raises PlatformUnavailableError, with the bot marked ``session_expired``, when
    neither works (staff enter a new refresh token or password and press "log in again")."""
    try:
        refresh_token = unseal(bot.refresh_token_sealed)
        password = unseal(bot.password_sealed)
        shared_secret = unseal(bot.shared_secret_sealed)
    except SealedSecretError as exc:
        bot_state_set(bot, SteamBot.State.SESSION_EXPIRED, "a secret cannot be opened")
        raise PlatformUnavailableError(f"bot {bot.account_name}: {exc}") from exc
    access_token = ""
    if refresh_token and not with_credentials:
        try:
            access_token, refresh_token = _renew(bot.steam_id, refresh_token)
        except (SessionExpiredError, SteamRefusedError):
            access_token = ""  # the refresh token is no longer accepted: log in afresh
    if not access_token:
        if not (password and shared_secret):
            bot_state_set(
                bot,
                SteamBot.State.SESSION_EXPIRED,
                "the refresh token was refused"
                + ("" if _mobile(refresh_token) else " (not the mobile app's: only those renew)")
                + " and no password and shared secret are stored",
            )
            raise PlatformUnavailableError(f"bot {bot.account_name} cannot log in")
        try:
            access_token, refresh_token = _credentials_login(bot, password, shared_secret)
        except (SessionExpiredError, SteamRefusedError) as exc:
            bot_state_set(bot, SteamBot.State.SESSION_EXPIRED, f"login refused: {exc}")
            raise PlatformUnavailableError(f"bot {bot.account_name} login refused") from exc
    session_id = bot.session_id or secrets.token_hex(12)
    bot_state_set(
        bot,
        SteamBot.State.ONLINE,
        "",
        access_token_sealed=seal(access_token),
        access_token_expires_at=_expiry(access_token),
        refresh_token_sealed=seal(refresh_token),
        session_id=session_id,
        last_login_at=clock.now(),
    )
    return BotSession(bot.steam_id, access_token, session_id)


def _renew(steam_id: str, refresh_token: str) -> tuple[str, str]:
    """A new access token (and, when Steam renews it, a new refresh token)."""
    ends = _token_end(refresh_token)
    renew = ends is not None and ends - RENEW_REFRESH_WITHIN <= clock.real_now()
    answer = steam_request(
        "POST",
        _auth_url("GenerateAccessTokenForApp"),
        data={"refresh_token": refresh_token, "steamid": steam_id, "renewal_type": int(renew)},
    )
    response = _response(answer.body)
    access_token = str(response.get("access_token") or "")
    if not access_token:
        raise SteamRefusedError("no access token in the answer", eresult=None, status=200)
    return access_token, str(response.get("refresh_token") or refresh_token)


def _encrypted_password(password: str, modulus: str, exponent: str) -> str:
    key = RSAPublicNumbers(int(exponent, 16), int(modulus, 16)).public_key()
    return base64.b64encode(key.encrypt(password.encode(), padding.PKCS1v15())).decode()


def _credentials_login(bot: SteamBot, password: str, shared_secret: str) -> tuple[str, str]:
    rsa = _response(
        steam_request(
            "GET",
            _auth_url("GetPasswordRSAPublicKey"),
            params={"account_name": bot.account_name},
        ).body
    )
    begun = _response(
        steam_request(
            "POST",
            _auth_url("BeginAuthSessionViaCredentials"),
            data={
                "account_name": bot.account_name,
                "encrypted_password": _encrypted_password(
                    password, str(rsa["publickey_mod"]), str(rsa["publickey_exp"])
                ),
                "encryption_timestamp": rsa["timestamp"],
                "persistence": PERSISTENT,
                **MOBILE_APP_LOGIN,
            },
        ).body
    )
    client_id, request_id = begun["client_id"], begun["request_id"]
    steam_id = str(begun.get("steamid") or bot.steam_id)
    guards = {int(c.get("confirmation_type", 0)) for c in begun.get("allowed_confirmations", [])}
    if DEVICE_CODE in guards:
        steam_request(
            "POST",
            _auth_url("UpdateAuthSessionWithSteamGuardCode"),
            data={
                "client_id": client_id,
                "steamid": steam_id,
                # Steam's clock is the real one, not the service clock the sandbox moves.
                "code": login_code(shared_secret, int(time.time())),
                "code_type": DEVICE_CODE,
            },
        )
    polled = _response(
        steam_request(
            "POST",
            _auth_url("PollAuthSessionStatus"),
            data={"client_id": client_id, "request_id": request_id},
        ).body
    )
    access_token, refresh_token = polled.get("access_token"), polled.get("refresh_token")
    if not (access_token and refresh_token):
        raise SteamRefusedError("the login was not completed", eresult=None, status=200)
    return str(access_token), str(refresh_token)
