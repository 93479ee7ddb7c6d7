"""The Steam adapter of the game platform (``GAME_PLATFORM=trading.platform.steam.SteamPlatform``):
bots from the ``SteamBot`` table, the Web API and the community endpoints at the configured
hosts. docs/steam.md says which Steam behaviours it handles and how each maps onto the
contract."""

from trading.models import SteamBot, SteamOffer
from trading.platform.base import (
    InventoryAsset,
    OfferAsset,
    OfferRefusedError,
    OfferUpdate,
    PlatformUnavailableError,
    PlatformUser,
    TradeOffer,
)
from trading.platform.steam.fleet import bot_for_offer, bot_holding, steam_fleet_status
from trading.platform.steam.inventory import inventory_fetch
from trading.platform.steam.offers import offer_confirm, offer_minutes, offer_row, offer_send
from trading.platform.steam.polling import bot_offer_updates, offer_update_seen, pollable_bots
from trading.platform.steam.users import steam_user


class SteamPlatform:
    """One world for every merchant: ``tenant`` is not used."""

    def user(self, platform_id: str, *, tenant: str, trade_url: str = "") -> PlatformUser:
        return steam_user(platform_id, trade_url)

    def inventory(self, platform_id: str, game: int, *, tenant: str) -> list[InventoryAsset]:
        return inventory_fetch(platform_id, game)

    def fleet_status(self, *, tenant: str) -> str:
        return steam_fleet_status()

    def offer_create(
        self,
        *,
        tenant: str,
        key: str,
        platform_id: str,
        trade_url: str,
        game: int,
        assets: list[OfferAsset],
    ) -> TradeOffer:
        row = SteamOffer.objects.select_related("bot").filter(key=key).first()
        if row is None:
            row = offer_row(
                kind=SteamOffer.Kind.DEPOSIT,
                key=key,
                bot=bot_for_offer(game=game, items=sum(a.amount for a in assets)),
                partner=platform_id,
                trade_url=trade_url,
                game=game,
                assets=assets,
                minutes=offer_minutes(SteamOffer.Kind.DEPOSIT),
            )
        return offer_send(row)

    def offer_deliver(
        self,
        *,
        tenant: str,
        key: str,
        platform_id: str,
        trade_url: str,
        game: int,
        assets: list[OfferAsset],
        bot_platform_id: str,
    ) -> TradeOffer:
        row = SteamOffer.objects.select_related("bot").filter(key=key).first()
        if row is None:
            row = offer_row(
                kind=SteamOffer.Kind.DELIVERY,
                key=key,
                bot=bot_holding(bot_platform_id),
                partner=platform_id,
                trade_url=trade_url,
                game=game,
                assets=assets,
                minutes=offer_minutes(SteamOffer.Kind.DELIVERY),
            )
        return offer_send(row)

    def offer_confirm(self, *, tenant: str, offer_id: str) -> TradeOffer:
        row = SteamOffer.objects.select_related("bot").filter(offer_id=offer_id).first()
        if row is None:
            raise OfferRefusedError("OFFER_NOT_FOUND", f"no offer {offer_id}")
        return offer_confirm(row)

    def pollers(self) -> list[str]:
        return pollable_bots()

    def offer_updates(self, *, poller: str) -> list[OfferUpdate]:
        bot = SteamBot.objects.filter(pk=poller, enabled=True).first()
        if bot is None:
            raise PlatformUnavailableError(f"no enabled bot {poller}")
        return bot_offer_updates(bot)

    def offer_update_seen(self, *, update: OfferUpdate) -> None:
        offer_update_seen(update)
