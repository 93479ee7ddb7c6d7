"""Real threads against PostgreSQL: money can be locked only once, an externalId names one trade,
one event is delivered by one worker and one listing is bought once.

Each thread has its own API client and database connection (closed at its end); at most 16 run
at once so the connection pool (20 by default) always has room."""

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from core.handoffs import HANDOFFS
from merchants.webhooks import delivery
from merchants.webhooks.models import WebhookDelivery
from sandbox.models import SandboxPurchase
from tests.webhooks.conftest import BUY_PRICE, TRADE_URL, approval_event, bought, shop_actor
from tests.withdrawals.conftest import make_listing
from trading.models import Trade, TradeItem
from trading.withdrawals.services.fulfilment import withdrawal_purchase
from trading.withdrawals.services.lifecycle import PURCHASE
from trading.withdrawals.services.quick import quick_fill
from wallet.models import Account, Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import InsufficientFundsError, wallet_lock

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 16
T = TypeVar("T")


def in_thread(work: Callable[[], T]) -> T:
    try:
        return work()
    finally:
        connection.close()


def post_buy(api_key: str, listing_id: str, external_id: str = "") -> tuple[int, dict[str, Any]]:
    def work() -> tuple[int, dict[str, Any]]:
        body: dict[str, Any] = {
            "tradeUrl": TRADE_URL,
            "items": [{"itemId": listing_id, "price": BUY_PRICE}],
        }
        if external_id:
            body["externalId"] = external_id
        response = APIClient().post(
            "/secure/buy", body, format="json", headers={"api-key": api_key}
        )
        return response.status_code, response.json()

    return in_thread(work)


class BalanceWatch:
    """Reads a merchant's available balance over and over from its own connection."""

    def __init__(self, merchant_id: object) -> None:
        self.merchant_id = merchant_id
        self.seen: list[Decimal] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: in_thread(self._watch))

    def _watch(self) -> None:
        rows = Account.objects.filter(merchant_id=self.merchant_id, kind=Account.Kind.AVAILABLE)
        while not self.stop.is_set():
            self.seen.extend(rows.values_list("balance", flat=True))

    def __enter__(self) -> "BalanceWatch":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def error_keys(results: list[tuple[int, dict[str, Any]]]) -> Counter[tuple[int, int, str]]:
    return Counter(
        (status, body["error"]["code"], body["error"]["key"])
        for status, body in results
        if not body["success"]
    )


def test_200_buys_against_a_balance_for_37_lock_exactly_37(hooks, catalog_item, outbox):
    winners = 37
    shop = shop_actor("Racing shop", hooks.url, balance=str(Decimal("10.50") * winners))
    listings = [make_listing(catalog_item, "10.00") for _ in range(200)]

    with BalanceWatch(shop.merchant.pk) as watch, ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda listing: post_buy(shop.api_key, listing.id), listings))

    ok = [body for status, body in results if status == 200]
    assert len(ok) == winners
    assert error_keys(results) == Counter({(400, 12, "MERCHANT_BALANCE_LOW"): 200 - winners})
    assert all(body["data"]["status"] == "initiated" for body in ok)
    assert watch.seen
    assert min(watch.seen) >= 0
    balances = wallet_balances(merchant=shop.merchant)
    assert balances["available"] == Decimal("0.00")
    assert balances["locked"] == Decimal("388.50")
    assert Trade.objects.count() == winners
    assert Transfer.objects.filter(kind="LOCK").count() == winners
    assert TradeItem.objects.filter(locked=Decimal("10.50")).count() == winners
    assert sorted(outbox) == sorted(str(approval_event(b["data"]["id"]).id) for b in ok)
    assert wallet_invariants_check().clean


def test_50_requests_with_one_external_id_make_one_trade(hooks, catalog_item, outbox):
    shop = shop_actor("Retrying shop", hooks.url)
    listings = [make_listing(catalog_item, "10.00") for _ in range(50)]

    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(
            pool.map(lambda listing: post_buy(shop.api_key, listing.id, "order-1"), listings)
        )

    ok = [body for status, body in results if status == 200]
    assert len(ok) == 1
    assert ok[0]["data"]["externalId"] == "order-1"
    assert error_keys(results) == Counter({(409, 1, "EXTERNAL_ID_EXISTS"): 49})
    assert Trade.objects.count() == 1
    assert Trade.objects.get().external_id == "order-1"
    assert Transfer.objects.filter(kind="LOCK").count() == 1
    balances = wallet_balances(merchant=shop.merchant)
    assert (balances["available"], balances["locked"]) == (Decimal("989.50"), Decimal("10.50"))
    assert len(outbox) == 1
    assert wallet_invariants_check().clean


@pytest.mark.parametrize(
    ("balance", "amount", "racers", "expected_wins"),
    [("1.00", "1.00", 12, 1), ("1.00", "0.40", 12, 2), ("5.00", "1.00", 12, 5)],
)
def test_racing_wallet_locks_never_overdraw(hooks, balance, amount, racers, expected_wins):
    shop = shop_actor("Last dollar shop", hooks.url, balance=balance)
    start = threading.Barrier(racers)

    def lock(n: int) -> bool:
        def work() -> bool:
            start.wait()
            try:
                with transaction.atomic():
                    wallet_lock(
                        merchant=shop.merchant,
                        amount=Decimal(amount),
                        cause_type="test",
                        cause_id=str(n),
                    )
            except InsufficientFundsError:
                return False
            return True

        return in_thread(work)

    with ThreadPoolExecutor(racers) as pool:
        wins = sum(pool.map(lock, range(racers)))

    assert wins == expected_wins
    balances = wallet_balances(merchant=shop.merchant)
    locked = Decimal(amount) * expected_wins
    assert balances["locked"] == locked
    assert balances["available"] == Decimal(balance) - locked
    assert balances["available"] >= 0
    assert Transfer.objects.filter(kind="LOCK").count() == expected_wins
    report = wallet_invariants_check()  # these locks belong to no trade: only the ledger counts
    assert report.unbalanced_transfers == report.drifted_accounts == []
    assert report.negative_held_accounts == []


def test_workers_racing_for_one_event_deliver_it_once(hooks, listing, outbox):
    shop = shop_actor("Busy shop", hooks.url)
    api = APIClient()
    trade_id = bought(api, shop, listing)
    event_id = str(approval_event(trade_id).id)
    racers = 8
    start = threading.Barrier(racers)

    def worker() -> None:
        start.wait()
        delivery.webhook_event_deliver(event_id=event_id)

    with ThreadPoolExecutor(racers) as pool:
        for future in [pool.submit(in_thread, worker) for _ in range(racers)]:
            future.result()

    assert [r.headers["webhook-id"] for r in hooks.received] == [event_id]
    assert WebhookDelivery.objects.count() == 1
    assert Trade.objects.get(pk=trade_id).status == "pending"
    assert SandboxPurchase.objects.count() == 1
    assert wallet_invariants_check().clean


def test_purchase_tasks_racing_for_one_trade_buy_once(hooks, listing, monkeypatch):
    shop = shop_actor("Twice queued shop", hooks.url)
    monkeypatch.setitem(HANDOFFS.bindings, PURCHASE, lambda trade_id: None)
    trade_id = bought(APIClient(), shop, listing)
    delivery.webhook_event_deliver(event_id=str(approval_event(trade_id).id))
    assert Trade.objects.get(pk=trade_id).status == "pending"
    racers = 8
    start = threading.Barrier(racers)

    def worker() -> None:
        start.wait()
        withdrawal_purchase(trade_id=trade_id)

    with ThreadPoolExecutor(racers) as pool:
        for future in [pool.submit(in_thread, worker) for _ in range(racers)]:
            future.result()

    item = TradeItem.objects.get(trade_id=trade_id)
    assert (item.status, item.error) == ("pending", "")
    assert SandboxPurchase.objects.get().key == item.purchase_ref == f"ti-{item.pk}"
    balances = wallet_balances(merchant=shop.merchant)
    assert (balances["available"], balances["locked"]) == (Decimal("989.50"), Decimal("10.50"))
    assert wallet_invariants_check().clean


def test_quick_fills_racing_for_one_trade_buy_once(hooks, catalog_item, monkeypatch):
    shop = shop_actor("Twice queued quick shop", hooks.url)
    monkeypatch.setitem(HANDOFFS.bindings, PURCHASE, lambda trade_id: None)
    only = make_listing(catalog_item, "10.00")
    response = APIClient().post(
        "/secure/buy/quick",
        {"tradeUrl": TRADE_URL, "itemId": catalog_item.id, "maxPrice": 21, "amount": 1},
        format="json",
        headers=shop.headers,
    )
    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]
    delivery.webhook_event_deliver(event_id=str(approval_event(trade_id).id))
    racers = 8
    start = threading.Barrier(racers)

    def worker() -> None:
        start.wait()
        quick_fill(trade_id=trade_id)

    with ThreadPoolExecutor(racers) as pool:
        for future in [pool.submit(in_thread, worker) for _ in range(racers)]:
            future.result()

    item = TradeItem.objects.get(trade_id=trade_id)
    assert (item.status, item.listing_id, item.error) == ("pending", only.id, "")
    assert SandboxPurchase.objects.get().key == item.purchase_ref == f"ti-{item.pk}"
    balances = wallet_balances(merchant=shop.merchant)
    assert (balances["available"], balances["locked"]) == (Decimal("989.50"), Decimal("10.50"))
    assert wallet_invariants_check().clean
