"""A recorded Steam: a local HTTP server answering the Web API (IEconService, ISteamUser,
IAuthenticationService) and the community endpoints (inventories, trade offers, mobile
confirmations) as Steam's documentation and its widely used open-source clients show them,
never as the adapter expects: each module names the sources of what it answers, and where they
are silent or disagree it answers the stricter way (docs/steam.md lists those choices). Tests
drive the other side (a user accepts, declines, counters, lets an offer expire; escrow; trade
protection and its reversal; sessions expiring; 429 storms) and move its clock.

- ``world``: the state, the other side's moves, and what Steam does by itself in time;
- ``auth``: IAuthenticationService (logins by platform type, renewals);
- ``econ``: IEconService and ISteamUser/GetPlayerBans;
- ``community``: inventories (owner-only contexts and items), trade offers, confirmations;
- ``server``: the HTTP server and its faults (429, 502)."""

from tests.steam.recorded.server import recorded_steam
from tests.steam.recorded.world import (
    MOBILE_APP,
    PROTECTION,
    STEAM_CLIENT,
    TOKEN,
    WEB_BROWSER,
    Asset,
    Bot,
    Offer,
    RecordedSteam,
    Trade,
    User,
)

__all__ = [
    "MOBILE_APP",
    "PROTECTION",
    "STEAM_CLIENT",
    "TOKEN",
    "WEB_BROWSER",
    "Asset",
    "Bot",
    "Offer",
    "RecordedSteam",
    "Trade",
    "User",
    "recorded_steam",
]
