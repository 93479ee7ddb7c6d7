"""The API re-send of a failed webhook event, 30 times at once: one re-send is accepted (the
others find it being delivered: 3002 INVALID_TRANSITION) and the event reaches the receiver
once more, with its id and body unchanged."""

import pytest

from merchants.webhooks.models import WebhookEvent
from tests.faults.callback import CallbackServer
from tests.faults.processes import Process
from tests.races.conftest import N, api_burst, outcomes, post, settled, shop
from tests.races.test_withdrawals import buy, listings
from tests.withdrawals.receiver import Received
from trading.models import CatalogItem, Status, Trade

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_thirty_resends_of_a_failed_event_send_it_once(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem
):
    actor = shop(callback.url)
    callback.answer = lambda got: (
        (402, b"") if got.json["type"] == "trade.initiated" else (500, b"")
    )
    api_burst([buy(web, actor, listing) for listing in listings(catalog_item, 1)])
    settled(lambda: Trade.objects.filter(status=Status.FAILED).exists(), "the rejection", worker)
    failed = WebhookEvent.objects.get(type="trade.failed")
    settled(lambda: callback.count(str(failed.id)) == 1, "the first attempt", worker)
    # Its retries ran out (tests/faults/test_callback_down.py shows it happening over 72 hours).
    WebhookEvent.objects.filter(pk=failed.pk).update(
        status=WebhookEvent.Status.FAILED, next_attempt_at=None
    )
    callback.answer = lambda _: (200, b"{}")
    callback.hold(lambda got: got.json["id"] == str(failed.id))  # the re-send stays in flight

    resend = post(web, f"/secure/webhooks/events/{failed.id}/resend", actor.headers)
    answers = api_burst([resend] * N)
    callback.release()

    assert outcomes(answers) == {(200, None): 1, (409, 3002): N - 1}
    delivered = WebhookEvent.Status.DELIVERED
    settled(lambda: WebhookEvent.objects.get(pk=failed.pk).status == delivered, "sent", worker)
    copies: list[Received] = [r for r in callback.received if r.json["id"] == str(failed.id)]
    assert len(copies) == 2
    assert copies[0].body == copies[1].body
