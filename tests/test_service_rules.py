"""The business rules of an operation live in its service, whoever calls it (an endpoint, an
admin action, a command): withdrawals check their items as deposits do, the quick withdrawal
resolves its catalog item, the self sell its trade URL. Each is refused before anything else
is checked (here: the merchant has no callback URL), as the endpoints answered before."""

from decimal import Decimal

import pytest

from core.errors import DomainError
from tests.factories import make_actor, trade_url
from trading.deposits.services.order import DepositItem, DepositOrder
from trading.deposits.services.store import self_sell_create
from trading.models import Trade
from trading.withdrawals.services.create import (
    Recipient,
    WithdrawalOrder,
    WithdrawItem,
    withdrawal_create,
)
from trading.withdrawals.services.quick import QuickOrder, quick_withdrawal_create

pytestmark = pytest.mark.django_db


def refused(call) -> str:
    with pytest.raises(DomainError) as error:
        call()
    return error.value.key


def withdraw(merchant, items: list[WithdrawItem]) -> None:
    withdrawal_create(
        merchant=merchant,
        source=Trade.Source.SELF,
        recipient=Recipient(trade_url=trade_url(42)),
        order=WithdrawalOrder(items=items, game=730),
    )


def item(price: str) -> WithdrawItem:
    return WithdrawItem(item_id="L1", price=Decimal(price))


@pytest.mark.parametrize(
    ("items", "key"),
    [
        ([], "MISSING_ITEMS"),
        ([item("1.00")] * 51, "TOO_MANY_ITEMS"),
        ([item("0.00")], "INVALID_AMOUNT"),
        ([item("1.005")], "LISTING_PRICE_INVALID"),
    ],
)
def test_withdrawal_items_are_checked_by_the_service(items, key):
    merchant = make_actor(callback_url="").merchant
    assert refused(lambda: withdraw(merchant, items)) == key
    assert not Trade.objects.exists()


def test_quick_withdrawal_resolves_its_catalog_item():
    merchant = make_actor(callback_url="").merchant
    key = refused(
        lambda: quick_withdrawal_create(
            merchant=merchant,
            source=Trade.Source.SELF,
            recipient=Recipient(trade_url=trade_url(42)),
            order=QuickOrder(
                item_id="no-such-item",
                market_hash_name=None,
                max_price=Decimal("10.00"),
                amount=1,
                delivery="instant",
                phase="",
                game=730,
            ),
        )
    )
    assert key == "LISTING_NOT_FOUND"


def test_self_sell_checks_its_trade_url():
    merchant = make_actor(callback_url="").merchant
    key = refused(
        lambda: self_sell_create(
            merchant=merchant,
            trade_url="https://example.com/not-a-trade-url",
            order=DepositOrder(items=[DepositItem(item_id="A1", price=Decimal("1.00"))], game=730),
        )
    )
    assert key == "INVALID_TRADEURL"
    assert not Trade.objects.exists()
