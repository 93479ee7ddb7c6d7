"""Two workers polling one bot, on the committed database with real threads: each change of an
offer is applied once (one move, one credit, one webhook), also when both polls are at Steam at
the same moment."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from core.json import dumps
from merchants.webhooks.models import WebhookEvent
from tests.factories import platform_id
from tests.faults.processes import wait_until
from tests.steam.conftest import OWNER
from tests.steam.helpers import sent_offer
from tests.withdrawals.conftest import money, ok_data, wallet_clean
from trading.models import Trade, TradeEvent
from trading.platform.steam import SteamPlatform
from trading.platform.steam.polling import POLL_LEASE
from trading.services.offers import offer_update_apply, offers_poll
from wallet.models import Transfer

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


def test_two_workers_polling_one_bot_at_once_apply_each_change_once(
    alice, hooks, steam, bot, accepted, time_passes
):
    """The overlap is forced: the recorded Steam holds the first poll's GetTradeOffers until
    the second one's arrives, and the second poll gets in because the first outlived its lease
    (a Steam slow to answer), so both read the same acceptance before either applies it."""
    steam.offer_polls_together = threading.Barrier(2)
    results: list[int] = []
    errors: list[BaseException] = []

    def poll_once() -> None:
        try:
            results.append(offers_poll(poller=str(bot.pk)))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    first = threading.Thread(target=poll_once)
    first.start()
    wait_until(lambda: steam.offer_polls_together.n_waiting == 1, "the first poll at Steam")
    time_passes(int(POLL_LEASE.total_seconds()) + 1)
    second = threading.Thread(target=poll_once)
    second.start()
    for thread in (first, second):
        thread.join(60)
    steam.offer_polls_together = None
    assert not errors, errors
    assert steam.polls_met == 2  # both polls were at Steam at once
    assert sorted(results) == [1, 1]  # each saw the change and took it to the trade

    offers_poll(poller=str(bot.pk))  # and a later poll changes nothing either
    assert Trade.objects.get(pk=accepted).status == "hold"
    assert TradeEvent.objects.filter(trade_id=accepted, kind="accepted").count() == 1
    assert TradeEvent.objects.filter(trade_id=accepted, to_status="hold").count() == 1
    assert WebhookEvent.objects.filter(subject_id=accepted, type="trade.hold").count() == 1
    assert [r.json["trade"]["id"] for r in hooks.of_type("trade.hold")] == [accepted]
    assert money(alice)["escrow"] == Decimal("36.00")
    assert money(alice)["available"] == Decimal("1000.00")
    assert Transfer.objects.filter(cause_id=accepted).count() == 1
    assert wallet_clean()
