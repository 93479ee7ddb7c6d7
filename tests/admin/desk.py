"""Two merchants' trades made as the service makes them, through the HTTP API of the sandbox
world (the fixtures it asks for are the deposit suite's, brought in by tests/admin/conftest.py)."""

from dataclasses import dataclass
from decimal import Decimal

import pytest

from tests.deposits.conftest import ak_item, deposit, sell
from tests.factories import Actor, trade_url
from tests.withdrawals.conftest import Desk, make_listing, ok_data
from trading.models import CatalogItem, Trade
from wallet.services import wallet_admin_credit

ITEM_EXTERNAL_ID = "alice-basket-7"


@dataclass(frozen=True)
class Trades:
    """Alice's client deposit of two assets (offered by a bot), her self buy of one listing with
    an item external id, and Bob's self sell of another asset of the same owner."""

    alice_deposit: Trade
    alice_buy: Trade
    bob_sell: Trade


def alice_buys(desk: Desk, alice: Actor, item: CatalogItem) -> str:
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("100.00"), reason="test")
    listing = make_listing(item, "10.00")
    body = {
        "tradeUrl": trade_url(42),
        "externalId": "alice-buy",
        "items": [
            {"itemId": listing.id, "price": Decimal("10.50"), "externalId": ITEM_EXTERNAL_ID}
        ],
    }
    return ok_data(desk.post("/secure/buy", body, headers=alice.headers))["id"]


@pytest.fixture
def trades(desk: Desk, alice: Actor, bob: Actor, owner: dict[str, str], bot, ak) -> Trades:
    deposited = ok_data(deposit(desk, owner, ak_item(0), ak_item(2), externalId="alice-deposit"))
    bought = alice_buys(desk, alice, ak)
    sold = ok_data(sell(desk, bob, ak_item(1), price="32.00", externalId="bob-sell"))
    return Trades(
        alice_deposit=Trade.objects.get(pk=deposited["id"]),
        alice_buy=Trade.objects.get(pk=bought),
        bob_sell=Trade.objects.get(pk=sold["id"]),
    )
