"""The views of the trading flows and of crypto are composed, not inherited through chains:
each is its caller's base view (merchant or client) and its own operation (a class, or made by
``merchants.views.Operation``), and what differs by caller is a plain attribute or function."""

import pytest

from core.api.views import ApiView
from crypto import apis as crypto
from merchants.views import ClientApiView, MerchantApiView
from trading.accounts import apis as accounts
from trading.deposits import apis as deposits
from trading.history import apis as history
from trading.market import apis as market
from trading.withdrawals.apis import cancels, withdraw

VIEWS = [
    view
    for module in (deposits, accounts, market, history, withdraw, cancels, crypto)
    for view in vars(module).values()
    if isinstance(view, type) and issubclass(view, ApiView) and view.__module__ == module.__name__
]


def test_every_flow_module_has_its_views():
    assert {view.__name__ for view in VIEWS} >= {
        "SecureSellApi",
        "ClientDepositApi",
        "SecureInventoryApi",
        "ClientInventoryApi",
        "CheckTradeUrlApi",
        "PricesApi",
        "SecureMarketApi",
        "ClientMarketApi",
        "SecureMarketItemApi",
        "ClientMarketItemApi",
        "ClientSuggestionsApi",
    }


@pytest.mark.parametrize("view", VIEWS, ids=lambda view: view.__name__)
def test_a_view_is_its_caller_base_and_its_operation(view):
    assert view.__bases__ in ((MerchantApiView,), (ClientApiView,))
