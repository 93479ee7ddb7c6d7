"""The bots as a fleet: which can trade now, the fleet's status (the contract's
NO_BOTS_AVAILABLE and FLEET_DEGRADED), and which bot takes a new offer."""

from core import clock
from trading.models import SteamBot
from trading.platform.base import BotInfo, FleetStatus, PlatformUnavailableError

# A bot in one of these may come back by itself (the pause ends, the poller logs it in again).
RECOVERING = (SteamBot.State.RATE_LIMITED, SteamBot.State.SESSION_EXPIRED)


def _usable(bot: SteamBot) -> bool:
    if bot.state == SteamBot.State.ONLINE:
        return True
    paused_until = bot.rate_limited_until
    return bot.state == SteamBot.State.RATE_LIMITED and (
        paused_until is None or paused_until <= clock.real_now()
    )


def fleet_bots(*, game: int | None = None) -> list[SteamBot]:
    """Enabled bots that can trade now (of ``game``), fewest items first."""
    bots = [
        bot
        for bot in SteamBot.objects.filter(enabled=True).order_by("inventory_count", "id")
        if _usable(bot) and (game is None or game in bot.games)
    ]
    return bots


def steam_fleet_status() -> str:
    """online: a bot can trade; degraded: none can now, but one is rate limited or logging in
    again; offline: no enabled bot, or all are trade banned or never logged in."""
    bots = list(SteamBot.objects.filter(enabled=True))
    if any(_usable(bot) for bot in bots):
        return FleetStatus.ONLINE
    if any(bot.state in RECOVERING for bot in bots):
        return FleetStatus.DEGRADED
    return FleetStatus.OFFLINE


def bot_for_offer(*, game: int, items: int) -> SteamBot:
    """The bot with the most room that serves the game and can take ``items`` more."""
    for bot in fleet_bots(game=game):
        if bot.inventory_count + items <= bot.inventory_capacity:
            return bot
    raise PlatformUnavailableError(f"no bot of game {game} online with room for {items} items")


def bot_holding(steam_id: str) -> SteamBot:
    bot = SteamBot.objects.filter(steam_id=steam_id, enabled=True).first()
    if bot is None or not _usable(bot):
        raise PlatformUnavailableError(f"bot {steam_id} cannot trade now")
    return bot


def bot_any() -> SteamBot:
    """A bot to ask the Web API with (user checks are not a bot's own business)."""
    bots = fleet_bots()
    if not bots:
        raise PlatformUnavailableError("no bot online to ask Steam with")
    return bots[0]


def bot_info(bot: SteamBot) -> BotInfo:
    return BotInfo(name=bot.name, avatar=bot.avatar, platform_id=bot.steam_id)
