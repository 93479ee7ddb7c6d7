"""Steps the Steam tests share: a client deposit through the API, the beat's poll."""

from decimal import Decimal

from tests.factories import platform_id, trade_url
from tests.steam.conftest import OWNER
from tests.steam.recorded import RecordedSteam
from tests.withdrawals.conftest import Desk, ok_data
from trading.models import SteamBot, SteamOffer, Trade
from trading.platform.base import OfferAsset
from trading.platform.steam.offers import offer_row
from trading.tasks import poll_offers


def deposit(desk: Desk, headers: dict[str, str], *asset_ids: str, price: str = "36.00"):
    return desk.post(
        "/client/trading/deposit",
        {"items": [{"itemId": f"730_{a}", "price": Decimal(price)} for a in asset_ids]},
        headers=headers,
    )


def trade_of(desk: Desk, headers: dict[str, str], trade_id: str) -> dict:
    return ok_data(desk.get(f"/client/trades/{trade_id}", headers=headers))


def poll(desk: Desk) -> int:
    """What beat does: one poll task per bot (eager here), their on-commit work run."""
    return desk.run(lambda: poll_offers.apply().get())


def sent_offer(steam: RecordedSteam, bot: SteamBot) -> str:
    offers = steam.sent_by(bot.steam_id)
    assert len(offers) == 1, offers
    return offers[0].id


def deposit_offer_row(bot: SteamBot, key: str) -> SteamOffer:
    """The row of a deposit offer the bot is to send, asking the owner for one asset."""
    return offer_row(
        kind=SteamOffer.Kind.DEPOSIT,
        key=key,
        bot=bot,
        partner=platform_id(OWNER),
        trade_url=trade_url(OWNER),
        game=730,
        assets=[OfferAsset("11000000001", 1)],
        minutes=14,
    )


def row_of(trade: Trade | str) -> SteamOffer:
    trade_id = trade if isinstance(trade, str) else str(trade.id)
    return SteamOffer.objects.get(key__contains=trade_id)
