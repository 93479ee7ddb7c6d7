"""The Steam adapter against the recorded Steam (tests/steam/recorded.py): GAME_PLATFORM is the
adapter, every Steam host is the recorded server's, secrets are sealed with a fresh key."""

from collections.abc import Iterator
from decimal import Decimal

import pytest
from cryptography.fernet import Fernet

from core.sealed import seal
from core.staff import Staff
from merchants.models import Merchant
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor, platform_id
from tests.steam.recorded import Asset, Bot, RecordedSteam, recorded_steam
from tests.withdrawals.conftest import Desk, client_headers
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem, SteamBot
from trading.platform import get_platform
from trading.services.bots import steam_bot_log_in
from wallet.services import wallet_admin_credit

OWNER = 1
OTHER = 2
BOT_ID = "76561199100000001"
AK = "AK-47 | Redline (Field-Tested)"
# Who logs the test's bot in before it trades (a staff action is recorded with its reason).
BOOT = Staff("setup", "the test's bot starts online")


@pytest.fixture
def steam() -> Iterator[RecordedSteam]:
    with recorded_steam() as server:
        yield server


@pytest.fixture(autouse=True)
def steam_platform(settings, steam: RecordedSteam) -> Iterator[None]:
    settings.GAME_PLATFORM = "trading.platform.steam.SteamPlatform"
    settings.STEAM_WEB_API_URL = steam.url
    settings.STEAM_COMMUNITY_URL = steam.url
    settings.STEAM_LOGIN_URL = steam.url
    settings.STEAM_BACKOFF_SECONDS = 0
    settings.STEAM_RETRIES = 3
    settings.SECRETS_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    get_platform.cache_clear()
    yield
    get_platform.cache_clear()


def bot_row(recorded: Bot, *, name: str = "Bot Atlas", games: tuple[int, ...] = (730,)) -> SteamBot:
    return SteamBot.objects.create(
        name=name,
        account_name=recorded.account_name,
        steam_id=recorded.steam_id,
        games=list(games),
        shared_secret_sealed=seal(recorded.shared_secret),
        identity_secret_sealed=seal(recorded.identity_secret),
        refresh_token_sealed=seal(next(iter(recorded.refresh_tokens))),
        password_sealed=seal(recorded.password),
    )


@pytest.fixture
def bot(db: None, steam: RecordedSteam) -> SteamBot:
    """Online (staff pressed "log in again" after adding it)."""
    row = bot_row(steam.bot(BOT_ID, "atlas"))
    assert steam_bot_log_in(bot=row, staff=BOOT) == SteamBot.State.ONLINE
    row.refresh_from_db()
    return row


def ak_assets(count: int, start: int = 1) -> list[Asset]:
    return [
        Asset(f"{11_000_000_000 + n}", AK, wear="0.2512", seed=n)
        for n in range(start, start + count)
    ]


@pytest.fixture
def owner_user(steam: RecordedSteam):
    return steam.user(platform_id(OWNER), inventory={(730, "2"): ak_assets(3)})


@pytest.fixture
def ak(db: None) -> CatalogItem:
    """Deposit price 36.00 for alice (40.00 less 10 %)."""
    return CatalogItem.objects.create(
        id="730-000100",
        game=730,
        market_hash_name=AK,
        name="AK-47 | Redline",
        item_type="Rifle",
        rarity="Classified",
        rarity_color="d32ce6",
        exterior="Field-Tested",
        icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def alice(db: None, hooks: Receiver) -> Actor:
    actor = make_actor(name="Alice")
    Merchant.objects.filter(pk=actor.merchant.pk).update(
        callback_url=hooks.url, instant_deposits_enabled=True
    )
    actor.merchant.refresh_from_db()
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal("1000.00"), reason="test")
    return actor


@pytest.fixture
def owner(api, alice: Actor, owner_user, ak: CatalogItem) -> dict[str, str]:
    return client_headers(api, alice, OWNER)
