"""A deposit stage reads the accounts it moves, once (issue 31): the plan of every way of
crediting was built with all of its accounts, 22 account reads (26 queries for an escrow
completion) where one is needed."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_actor
from wallet.models import Account
from wallet.selectors import wallet_balances
from wallet.services import DepositCredit, account_get, wallet_deposit_post

pytestmark = pytest.mark.django_db

VALUE, MERCHANT_PART = Decimal("40.00"), Decimal("12.00")
STAGES = [
    (credit, stage)
    for credit in (DepositCredit.ESCROW, DepositCredit.INSTANT, DepositCredit.SELF)
    for stage in ("accept", "complete", "reverse")
    if (credit, stage) != (DepositCredit.SELF, "complete")
]


@pytest.fixture
def merchant():
    actor = make_actor(name="Alice")
    for kind in Account.Kind.values:  # every account exists: only reads are counted
        account_get(merchant=actor.merchant, kind=kind)
        account_get(merchant=None, kind=kind)
    make_actor(name="Bob")
    return actor.merchant


def _account_reads(queries: CaptureQueriesContext) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and "wallet_account" in q["sql"]
    ]


@pytest.mark.parametrize(("credit", "stage"), STAGES)
def test_a_stage_reads_its_accounts_in_one_query(merchant, credit, stage):
    def post(stage: str) -> None:
        wallet_deposit_post(
            merchant=merchant,
            credit=credit,
            stage=stage,
            value=VALUE,
            merchant_part=MERCHANT_PART,
            cause_id="trade-1",
        )

    if stage != "accept":
        post("accept")
    with CaptureQueriesContext(connection) as queries:
        post(stage)

    assert len(_account_reads(queries)) == 1


def test_an_escrow_completion_is_a_handful_of_queries(merchant):
    wallet_deposit_post(
        merchant=merchant,
        credit=DepositCredit.ESCROW,
        stage="accept",
        value=VALUE,
        merchant_part=Decimal(0),
        cause_id="trade-1",
    )
    with CaptureQueriesContext(connection) as queries:
        wallet_deposit_post(
            merchant=merchant,
            credit=DepositCredit.ESCROW,
            stage="complete",
            value=VALUE,
            merchant_part=Decimal(0),
            cause_id="trade-1",
        )

    # One account read, one guarded update per account, the transfer with its postings.
    assert len(queries) == 4, [q["sql"] for q in queries.captured_queries]
    assert wallet_balances(merchant=merchant)["available"] == VALUE


def test_missing_accounts_are_made_on_first_use():
    merchant = make_actor(name="New").merchant
    wallet_deposit_post(
        merchant=merchant,
        credit=DepositCredit.INSTANT,
        stage="accept",
        value=VALUE,
        merchant_part=MERCHANT_PART,
        cause_id="trade-1",
    )

    balances = wallet_balances(merchant=merchant)
    assert balances["available"] == VALUE - MERCHANT_PART
    assert balances["collateral"] == MERCHANT_PART
