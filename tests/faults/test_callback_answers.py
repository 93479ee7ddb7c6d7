"""A merchant's endpoint that answers every callback with NUL bytes, against a real worker: the
approval is applied once, every event is delivered, and after the delivery lease has long run
out the sweeps send nothing again. (PostgreSQL text cannot hold NUL: storing such an answer used
to roll the attempt back, leaving the approval pending, the money locked and the callback sent
again every lease period.)"""

from collections.abc import Callable
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from merchants.webhooks.delivery import LEASE, webhook_events_due
from merchants.webhooks.models import WebhookDelivery
from sandbox.models import SandboxPurchase
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import buy, events_delivered, every_event_received, sweeps_send
from tests.faults.processes import Process, wait_until
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from trading.models import CatalogItem, Status, TradeItem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

NUL_ANSWER = b'{"ok": true}\x00\x00\xff trailing'


def test_an_endpoint_answering_nul_bytes_gets_each_callback_once(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    time_passes: Callable[[int], None],
) -> None:
    callback.answer = lambda _: (200, NUL_ANSWER)
    trade_id = buy(api, shop, [make_listing(catalog_item, "10.00")])

    def bought(trade: str) -> bool:
        """Approved and purchased: the purchase is a task of its own, queued by the approval
        beside its webhook, so it may run after every event was delivered."""
        items = TradeItem.objects.filter(trade_id=trade, status=Status.PENDING)
        return items.exclude(purchase_ref="").exists()

    wait_until(
        lambda: bought(trade_id), "the approval applied and the purchase made", alive=[worker]
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])
    assert all("\x00" not in row.response_excerpt for row in WebhookDelivery.objects.all())

    time_passes(int(LEASE.total_seconds()) * 3)
    assert webhook_events_due() == []
    sweeps_send()
    # A later trade's approval travels behind the sweeps on the one worker: once it is
    # applied, the sweeps have run.
    later = buy(api, shop, [make_listing(catalog_item, "10.00")])
    wait_until(lambda: bought(later), "the later trade approved and bought", alive=[worker])
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])

    approvals = callback.ids("trade.initiated")
    assert len(approvals) == len(set(approvals)) == 2
    assert len(callback.received) == len(set(callback.ids()))  # nothing arrived twice
    every_event_received(shop, callback)
    assert SandboxPurchase.objects.count() == 2
    locked = 2 * Decimal("10.50")
    assert (money(shop)["available"], money(shop)["locked"]) == (1000 - locked, locked)
    assert wallet_clean()
