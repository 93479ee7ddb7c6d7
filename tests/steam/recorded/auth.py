"""``IAuthenticationService`` as the recorded Steam answers it.

Sources: DoctorMcKay/node-steam-session (src/AuthenticationClient.ts, src/LoginSession.ts,
src/transports/WebApiTransport.ts), bukson/steampy (steampy/login.py), somespecialone/aiosteampy
(protobufs/auth.proto, aiosteampy/webapi/services/auth.py). Every answer is ``{"response":
{...}}`` with the outcome in the ``x-eresult`` header (WebApiTransport.ts reads it; 1 = OK).
Form fields of a nested message are sent as ``device_details[name]`` (the form posts of public
clients found with the code search, e.g. ``device_details[platform_type]``)."""

import base64
import secrets
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import padding

from tests.steam.recorded.world import (
    MOBILE_APP,
    SIGNING_KEY,
    STEAM_CLIENT,
    WEB_BROWSER,
    RecordedSteam,
    steam_code,
)

INVALID_PASSWORD, ACCESS_DENIED, FILE_NOT_FOUND, CODE_MISMATCH = 5, 15, 9, 88
DEVICE_CODE = "3"  # EAuthSessionGuardType.DeviceCode
ALLOW_RENEWAL = "1"  # ETokenRenewalType.Allow


def ok(response: dict[str, Any] | None = None, eresult: int = 1):
    return 200, {"response": response or {}}, {"x-eresult": str(eresult)}


def r_auth(steam: RecordedSteam, method: str, path: str, p: dict[str, str], request: Any):
    name = path.split("/")[2]
    with steam.lock:
        if name == "GetPasswordRSAPublicKey":
            # auth.proto CAuthentication_GetPasswordRSAPublicKey_Response: hex modulus and
            # exponent, and the key's timestamp to send back with the encrypted password.
            numbers = steam.key.public_key().public_numbers()
            return ok(
                {
                    "publickey_mod": f"{numbers.n:x}",
                    "publickey_exp": f"{numbers.e:x}",
                    "timestamp": "123456",
                }
            )
        if name == "BeginAuthSessionViaCredentials":
            return _begin(steam, p)
        if name == "UpdateAuthSessionWithSteamGuardCode":
            login = steam.logins.get(p.get("client_id", ""))
            # Sources silent on how many 30-second steps Steam accepts: the current one and the
            # one before (a code made just before a step ended), no later one.
            now = int(machine_clock())
            codes = (
                {steam_code(login["bot"].shared_secret, now - d) for d in (0, 30)}
                if login
                else set()
            )
            if login is None or p.get("code") not in codes or p.get("code_type") != DEVICE_CODE:
                return ok(eresult=CODE_MISMATCH)  # EResult.TwoFactorCodeMismatch
            login["code"] = True
            return ok()
        if name == "PollAuthSessionStatus":
            login = steam.logins.get(p.get("client_id", ""))
            if login is None or login["request_id"] != p.get("request_id"):
                return ok(eresult=FILE_NOT_FOUND)
            if not login["code"]:
                return ok({})  # still waiting for the guard code
            bot, platform = login["bot"], login["platform"]
            return ok(
                {
                    "refresh_token": steam.refresh_token_issue(bot, platform),
                    "access_token": steam.access_token_issue(bot.steam_id, platform),
                    "account_name": bot.account_name,
                }
            )
        if name == "GenerateAccessTokenForApp":
            return _generate(steam, p)
    return 404, None, {}


def machine_clock() -> float:
    """Steam Guard codes and confirmation keys are checked against the machine's clock: the
    adapter makes them from it (in production Steam's clock and the machine's agree), while a
    test moves only the world's pretend time."""
    return time.time()


def _begin(steam: RecordedSteam, p: dict[str, str]):
    bot = next((b for b in steam.bots.values() if b.account_name == p.get("account_name")), None)
    try:
        password = steam.key.decrypt(
            base64.b64decode(p.get("encrypted_password", "")), padding.PKCS1v15()
        ).decode()
    except ValueError:
        password = ""
    if bot is None or password != bot.password:
        return ok(eresult=INVALID_PASSWORD)
    # The platform the tokens are issued for is the one ``device_details`` names
    # (AuthenticationClient._getPlatformData sends it for every platform). ``website_id``
    # alone does not name one: such a login is taken as a web browser's (issue 38 saw Steam
    # answer so; sources silent, and it is the stricter answer).
    named = p.get("device_details[platform_type]", "")
    platform = int(named) if named in {str(STEAM_CLIENT), str(MOBILE_APP)} else WEB_BROWSER
    client_id = steam.new_id()
    steam.logins[client_id] = {
        "bot": bot,
        "platform": platform,
        "request_id": secrets.token_hex(8),
        "code": False,
    }
    return ok(
        {
            "client_id": client_id,
            "request_id": steam.logins[client_id]["request_id"],
            "interval": 5,
            "allowed_confirmations": [{"confirmation_type": 3}],
            "steamid": bot.steam_id,
        }
    )


def _generate(steam: RecordedSteam, p: dict[str, str]):
    """node-steam-session LoginSession.ts: ``refreshAccessToken`` works only for a MobileApp
    refresh token over the Web API ("Using WebBrowser will fail with response AccessDenied",
    SteamClient too outside an authenticated CM session); ``renewRefreshToken`` (renewal type
    Allow) may issue a new refresh token, and "the old refresh token will become invalid".
    Whether Steam issues one is its own discretion: here it always does (the stricter answer:
    the adapter must keep the new one)."""
    bot = steam.bots.get(p.get("steamid", ""))
    token = p.get("refresh_token", "")
    platform = bot.refresh_tokens.get(token) if bot else None
    if bot is None or platform is None or not _live(steam, token, bot.steam_id):
        return ok(eresult=ACCESS_DENIED)
    if platform != MOBILE_APP:
        return ok(eresult=ACCESS_DENIED)
    response = {"access_token": steam.access_token_issue(bot.steam_id, platform)}
    if p.get("renewal_type") == ALLOW_RENEWAL:
        del bot.refresh_tokens[token]
        response["refresh_token"] = steam.refresh_token_issue(bot, platform)
    return ok(response)


def _live(steam: RecordedSteam, token: str, steam_id: str) -> bool:
    """Signed by this Steam, for this account, not expired on this Steam's clock."""
    try:
        claims = jwt.decode(
            token,
            SIGNING_KEY,
            algorithms=["HS256"],
            options={"verify_exp": False, "verify_iat": False, "verify_aud": False},
        )
    except jwt.PyJWTError:
        return False
    return claims.get("sub") == steam_id and int(claims.get("exp", 0)) > steam.now()
