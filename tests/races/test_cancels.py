"""Cancels racing: whole-trade and per-item cancels of one withdrawal, through the merchant
route and the client route, 30 at once: each item is cancelled and refunded exactly once; a
late per-item cancel is refused (28 TRADE_NOT_CANCELLABLE), a late whole-trade cancel finds
nothing left to cancel."""

from collections.abc import Callable
from decimal import Decimal

import pytest
import requests

from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.processes import Process
from tests.races.conftest import (
    Answer,
    Call,
    N,
    answer,
    api_burst,
    client_token,
    money,
    outcomes,
    post,
    settled,
    shop,
    wallet_clean,
)
from tests.races.test_withdrawals import GROSS, TRADE_URL, bought_or_failed, listings
from trading.models import CatalogItem, Status, TradeItem
from wallet.models import Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ITEMS = 3


def withdrawal(web: str, actor: Actor, item: CatalogItem, headers: dict[str, str]) -> str:
    """A bought withdrawal of three items (a self buy, or the client's with its token)."""
    body: dict[str, object] = {
        "items": [{"itemId": row.id, "price": float(GROSS)} for row in listings(item, ITEMS)]
    }
    path = "/client/trading/withdraw" if "Authorization" in headers else "/secure/buy"
    if path == "/secure/buy":
        body["tradeUrl"] = TRADE_URL
    response = requests.post(f"{web}{path}", json=body, headers=headers, timeout=60)
    return str(answer(response).data["id"])


@pytest.mark.parametrize("route", ["secure", "client"])
def test_each_item_is_cancelled_and_refunded_once(
    web: str,
    worker: Process,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    clock_advance: Callable[[int], None],
    route: str,
):
    actor = shop(callback.url)
    headers = actor.headers if route == "secure" else client_token(web, actor, 1)
    trade_id = withdrawal(web, actor, catalog_item, headers)
    settled(bought_or_failed, "the items bought", worker)
    clock_advance(31 * 60)  # cancels need the trade 30 minutes old
    items = list(TradeItem.objects.filter(trade_id=trade_id).order_by("position"))
    base = (
        f"/secure/buy/{trade_id}" if route == "secure" else f"/client/trading/withdraw/{trade_id}"
    )
    calls: list[Call] = []
    for n in range(N):
        if n % 3 == 0:
            calls.append(post(web, f"{base}/cancel", headers))
        else:
            calls.append(post(web, f"{base}/items/{items[n % ITEMS].public_id}/cancel", headers))

    answers = api_burst(calls)

    assert set(outcomes(answers)) <= {(200, None), (400, 28)}
    assert cancelled(answers) == sorted(item.public_id for item in items)
    done = Status.CANCELED
    settled(lambda: TradeItem.objects.filter(status=done).count() == ITEMS, "canceled", worker)
    refunds = Transfer.objects.filter(kind="REFUND", cause_type="trade_item")
    assert sorted(refunds.values_list("cause_id", flat=True)) == sorted(str(i.pk) for i in items)
    assert money(actor)["available"] == Decimal("1000.00")
    assert money(actor)["locked"] == Decimal("0.00")
    wallet_clean()


def cancelled(answers: list[Answer]) -> list[str]:
    """The item ids the answers accepted a cancel for (whole-trade answers list theirs)."""
    ids = []
    for got in answers:
        if got.status != 200:
            continue
        rows = got.data.get("items", [got.data])
        ids += [row["itemId"] for row in rows if row["status"] == "cancelled"]
    return sorted(ids)
