"""The outside systems (each behind an interface in the domain): the game platform (Steam), the
marketplace and its suppliers, the identity provider (Sumsub), with what trades ask of them."""

import os

from config.settings.base import SANDBOX
from config.settings.environment import env_float, env_int, env_list


def outside_system(name: str, sandbox: str) -> str:
    """The dotted path of an outside system's adapter (each behind an interface in the domain):
    the sandbox's by default with SANDBOX, else none: the domain's "unconfigured" adapter then
    answers every call as unavailable, and ``manage.py check`` warns."""
    return os.environ.get(name) or (sandbox if SANDBOX else "")


GAME_PLATFORM = outside_system("GAME_PLATFORM", "sandbox.platform.SandboxPlatform")
MARKETPLACE = outside_system("MARKETPLACE", "sandbox.marketplace.SandboxMarketplace")
# The real supplier marketplaces (MARKETPLACE=trading.marketplace.suppliers.marketplace.
# SupplierMarketplace): which ones, their hosts (a proxy or a test server may stand in) and
# credentials (from the environment only), and every call's timeouts. docs/suppliers.md.
MARKETPLACE_SUPPLIERS = env_list("MARKETPLACE_SUPPLIERS", "waxpeer,dmarket")
WAXPEER_API_URL = os.environ.get("WAXPEER_API_URL", "https://api.waxpeer.com")
WAXPEER_API_KEY = os.environ.get("WAXPEER_API_KEY", "")
# Waxpeer's listing socket (Socket.IO over websocket), read by ``manage.py supplier_socket``.
WAXPEER_SOCKET_URL = os.environ.get("WAXPEER_SOCKET_URL", "https://waxpeer.com")
WAXPEER_SOCKET_PATH = os.environ.get("WAXPEER_SOCKET_PATH", "socket.io")
DMARKET_API_URL = os.environ.get("DMARKET_API_URL", "https://api.dmarket.com")
DMARKET_PUBLIC_KEY = os.environ.get("DMARKET_PUBLIC_KEY", "")
DMARKET_SECRET_KEY = os.environ.get("DMARKET_SECRET_KEY", "")
# The Steam id of our bot linked to the DMarket account: DMarket delivers there, the bot hands
# the item to the recipient (docs/suppliers.md). DMarket is not used without it.
DMARKET_BOT_STEAM_ID = os.environ.get("DMARKET_BOT_STEAM_ID", "")
SUPPLIER_CONNECT_TIMEOUT_SECONDS = env_float("SUPPLIER_CONNECT_TIMEOUT_SECONDS", 3.0)
SUPPLIER_READ_TIMEOUT_SECONDS = env_float("SUPPLIER_READ_TIMEOUT_SECONDS", 15.0)
IDENTITY_PROVIDER = outside_system("IDENTITY_PROVIDER", "sandbox.identity.SandboxIdentityProvider")
# Sumsub (IDENTITY_PROVIDER=merchants.verification.sumsub.SumsubIdentityProvider): the API's
# host, the app token and its secret key (requests are signed with it), the webhook's secret key
# (its notifications are signed with it), the verification level applicants are created at, the
# timeout of each call and the lifetime of the WebSDK tokens and links handed out.
SUMSUB_BASE_URL = os.environ.get("SUMSUB_BASE_URL", "https://api.sumsub.com")
SUMSUB_APP_TOKEN = os.environ.get("SUMSUB_APP_TOKEN", "")
SUMSUB_SECRET_KEY = os.environ.get("SUMSUB_SECRET_KEY", "")
SUMSUB_WEBHOOK_SECRET = os.environ.get("SUMSUB_WEBHOOK_SECRET", "")
SUMSUB_LEVEL_NAME = os.environ.get("SUMSUB_LEVEL_NAME", "")
SUMSUB_TIMEOUT_SECONDS = env_float("SUMSUB_TIMEOUT_SECONDS", 10.0)
SUMSUB_SDK_TOKEN_TTL_SECONDS = env_int("SUMSUB_SDK_TOKEN_TTL_SECONDS", 1800)

# Where trade URLs point; the platform id is PLATFORM_ID_BASE + partner.
TRADE_URL_HOST = os.environ.get("TRADE_URL_HOST", "steamcommunity.com")
PLATFORM_ID_BASE = 76561197960265728
INVENTORY_CACHE_SECONDS = 15 * 60
# A deposit's trade offer is withdrawn (the deposit declined) if the owner leaves it this long.
DEPOSIT_OFFER_MINUTES = env_int("DEPOSIT_OFFER_MINUTES", 15)
# Sandbox only: move the simulated world one step per item after this many idle seconds (0: off).
SANDBOX_AUTOPILOT_SECONDS = env_int("SANDBOX_AUTOPILOT_SECONDS", 0)
TRADE_URL_CHECK_CACHE_SECONDS = 3600

# The Steam adapter (GAME_PLATFORM=trading.platform.steam.SteamPlatform, docs/steam.md): every
# host configurable, so a test server or a proxy stands in; every call with a timeout.
STEAM_WEB_API_URL = os.environ.get("STEAM_WEB_API_URL", "https://api.steampowered.com")
STEAM_COMMUNITY_URL = os.environ.get("STEAM_COMMUNITY_URL", "https://steamcommunity.com")
STEAM_LOGIN_URL = os.environ.get("STEAM_LOGIN_URL", "https://api.steampowered.com")
# A Web API key (ISteamUser/GetPlayerBans); without one the calls use a bot's access token.
STEAM_WEB_API_KEY = os.environ.get("STEAM_WEB_API_KEY", "")
STEAM_TIMEOUT_SECONDS = env_float("STEAM_TIMEOUT_SECONDS", 10.0)
# 429 and 5xx answers are tried again this many times, waiting BACKOFF * 2^n seconds (or the
# answer's Retry-After, capped at 30 s); then the bot is marked rate limited for a while.
STEAM_RETRIES = env_int("STEAM_RETRIES", 3)
STEAM_BACKOFF_SECONDS = env_float("STEAM_BACKOFF_SECONDS", 1.0)
STEAM_RATE_LIMIT_PAUSE_SECONDS = env_int("STEAM_RATE_LIMIT_PAUSE_SECONDS", 120)
# Offers the bots sent are polled this often (beat), each bot by one worker at a time.
STEAM_POLL_SECONDS = env_float("STEAM_POLL_SECONDS", 15.0)
# A delivery offer (a withdrawal's items sent to the user) is cancelled after this long.
STEAM_DELIVERY_OFFER_MINUTES = env_int("STEAM_DELIVERY_OFFER_MINUTES", 24 * 60)
