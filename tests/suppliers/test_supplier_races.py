"""Quick buys racing across suppliers (real threads, committed transactions): each listing is
bought once, units that find none are refunded, and the wallet's invariants hold."""

import threading
from decimal import Decimal

import pytest
from django.db import connection
from rest_framework.test import APIClient

from core.json import dumps
from tests.factories import trade_url
from tests.suppliers.servers import Listing
from tests.withdrawals.conftest import wallet_clean
from trading.models import SupplierOrder, TradeItem
from trading.services.suppliers import supplier_listings_poll

pytestmark = pytest.mark.django_db(transaction=True)

BUYERS = 6


def test_parallel_quick_buys_across_suppliers_buy_each_listing_once(
    suppliers, alice_funded, catalog_item
):
    name = catalog_item.market_hash_name
    for n in range(2):
        suppliers.waxpeer.world.listings[f"90{n}"] = Listing(f"90{n}", name, 10_000 + n)
        offer = f"00000000-0000-4000-8000-00000000000{n}"
        suppliers.dmarket.world.listings[offer] = Listing(offer, name, 1_050 + n, asset=f"a{n}")
    assert supplier_listings_poll(name="waxpeer") + supplier_listings_poll(name="dmarket") == 4
    body = dumps(
        {
            "tradeUrl": trade_url(42),
            "itemId": catalog_item.id,
            "maxPrice": Decimal("12.00"),
            "amount": 1,
        }
    )
    barrier = threading.Barrier(BUYERS)
    statuses: list[int] = []

    def buyer() -> None:
        try:
            client = APIClient()
            barrier.wait()
            response = client.post(
                "/secure/buy/quick",
                body,
                content_type="application/json",
                headers=alice_funded.headers,
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=buyer) for _ in range(BUYERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert statuses == [200] * BUYERS
    bound = TradeItem.objects.exclude(listing_id="")
    assert bound.count() == 4
    assert len(set(bound.values_list("listing_id", flat=True))) == 4
    assert TradeItem.objects.filter(status="failed", error="NO_LISTING_AT_PRICE").count() == 2
    assert len(suppliers.waxpeer.world.trades) == 2
    assert len(suppliers.dmarket.world.trades) == 2
    assert SupplierOrder.objects.exclude(state="refused").count() == 4
    assert wallet_clean()
