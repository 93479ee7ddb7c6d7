"""Staff find a trade from whatever the merchant or the platform quotes: the trade's id or external
id, an asset id, an offer id, an item's external id."""

import pytest

from tests.admin.desk import ITEM_EXTERNAL_ID
from tests.deposits.conftest import AK_ASSETS

pytestmark = pytest.mark.django_db

TRADES = "/admin/trading/trade/"


def found(admin_client, term: str) -> list[str]:
    """The ids of the trades the list shows for a search, in the list's order."""
    response = admin_client.get(TRADES, {"q": term})
    assert response.status_code == 200
    return [str(trade.pk) for trade in response.context["cl"].result_list]


def test_an_asset_id_finds_the_deposit_that_holds_it(admin_client, trades):
    assert found(admin_client, AK_ASSETS[0]) == [str(trades.alice_deposit.pk)]
    assert found(admin_client, AK_ASSETS[1]) == [str(trades.bob_sell.pk)]


def test_an_offer_id_finds_its_trade(admin_client, trades):
    offer_id = trades.alice_deposit.offer_id
    assert offer_id  # the bot sent the offer
    assert found(admin_client, offer_id) == [str(trades.alice_deposit.pk)]


def test_an_item_external_id_finds_its_trade(admin_client, trades):
    assert found(admin_client, ITEM_EXTERNAL_ID) == [str(trades.alice_buy.pk)]


def test_the_trade_external_id_and_id_find_it(admin_client, trades):
    assert found(admin_client, "bob-sell") == [str(trades.bob_sell.pk)]
    assert found(admin_client, str(trades.alice_buy.pk)) == [str(trades.alice_buy.pk)]


def test_a_trade_whose_items_all_match_is_listed_once(admin_client, trades):
    # Every deposited item id is 730_<asset id>: two items of Alice's deposit, one of Bob's sell.
    assert sorted(found(admin_client, "730_1000000")) == sorted(
        [str(trades.alice_deposit.pk), str(trades.bob_sell.pk)]
    )


def test_a_term_nothing_carries_finds_nothing(admin_client, trades):
    assert found(admin_client, "no-such-reference") == []
