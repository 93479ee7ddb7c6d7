"""Two workers polling one bot, on the committed database with real threads: each change of an
offer is applied once (one move, one credit, one webhook)."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from core.json import dumps
from tests.factories import platform_id
from tests.steam.conftest import OWNER
from tests.steam.helpers import sent_offer
from tests.withdrawals.conftest import money, ok_data
from trading.models import Trade, TradeEvent
from trading.platform.steam import SteamPlatform
from trading.services.offers import offer_update_apply, offers_poll

pytestmark = pytest.mark.django_db(transaction=True)


def together(*work) -> None:
    barrier = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(job) -> None:
        try:
            barrier.wait()
            job()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors


@pytest.fixture
def accepted(api, alice, owner, steam, bot) -> str:
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid
    response = api.post(
        "/client/trading/deposit",
        dumps({"items": [{"itemId": f"730_{asset}", "price": Decimal("36.00")}]}),
        content_type="application/json",
        headers=owner,
    )
    trade_id = ok_data(response)["id"]
    assert Trade.objects.get(pk=trade_id).status == "active"
    steam.accept(sent_offer(steam, bot))
    return trade_id


def test_two_workers_applying_one_change_apply_it_once(alice, bot, accepted):
    updates = SteamPlatform().offer_updates(poller=str(bot.pk))
    assert [u.event for u in updates] == ["accepted"]

    together(*(lambda: offer_update_apply(update=updates[0]) for _ in range(2)))

    assert Trade.objects.get(pk=accepted).status == "hold"
    assert TradeEvent.objects.filter(trade_id=accepted, kind="accepted").count() == 1
    assert money(alice)["escrow"] == Decimal("36.00")


def test_two_workers_polling_one_bot_apply_each_change_once(alice, bot, accepted):
    together(*(lambda: offers_poll(poller=str(bot.pk)) for _ in range(2)))
    offers_poll(poller=str(bot.pk))

    assert Trade.objects.get(pk=accepted).status == "hold"
    assert TradeEvent.objects.filter(trade_id=accepted, kind="accepted").count() == 1
    assert money(alice)["escrow"] == Decimal("36.00")
