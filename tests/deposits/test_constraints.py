"""The database refusals a deposit answers are recognised by the models' own constraints: on
PostgreSQL by the name psycopg reports, on SQLite (the quick start) by the columns it names."""

import sqlite3
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from core import clock
from core.db import constraint_violated, model_constraint
from merchants.models import Merchant
from trading.deposits.services.store import ASSET_UNIT_TAKEN
from trading.models import Trade, TradeItem
from trading.trades.services import EXTERNAL_ID_TAKEN


def test_a_constraint_the_model_does_not_declare_fails_where_it_is_named():
    with pytest.raises(LookupError):
        model_constraint(Trade, "trade_external_id_per_merchant_typo")


def deposit(merchant: Merchant) -> Trade:
    now = clock.now()
    return Trade.objects.create(
        merchant=merchant,
        type=Trade.Type.DEPOSIT,
        game=730,
        external_id="x-1",
        total_price=Decimal("1.00"),
        created_at=now,
        updated_at=now,
    )


@pytest.mark.django_db
def test_postgresql_names_the_constraint_it_refused_by(alice):
    deposit(alice.merchant)
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        deposit(alice.merchant)

    assert constraint_violated(refused.value, Trade, EXTERNAL_ID_TAKEN)
    assert not constraint_violated(refused.value, TradeItem, ASSET_UNIT_TAKEN)


def sqlite_refusal(message: str) -> IntegrityError:
    refusal = IntegrityError(message)
    refusal.__cause__ = sqlite3.IntegrityError(message)
    return refusal


def test_sqlite_names_the_columns_of_the_constraint():
    unit = sqlite_refusal(
        "UNIQUE constraint failed: trading_tradeitem.asset_owner, trading_tradeitem.public_id, "
        "trading_tradeitem.asset_unit"
    )
    external = sqlite_refusal(
        "UNIQUE constraint failed: trading_trade.merchant_id, trading_trade.external_id"
    )

    assert constraint_violated(unit, TradeItem, ASSET_UNIT_TAKEN)
    assert not constraint_violated(unit, Trade, EXTERNAL_ID_TAKEN)
    assert constraint_violated(external, Trade, EXTERNAL_ID_TAKEN)
