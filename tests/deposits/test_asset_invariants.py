"""check_wallet proves what the busy-asset rule promises: no platform asset sits in two live
deposits, and every credited deposit has exactly one asset behind it. Each check is shown to
fire on data broken on purpose (past the database's own refusal where it has one)."""

import importlib
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from tests.deposits.conftest import ak_item, deposit, sell
from tests.withdrawals.conftest import ok_data, sandbox_event
from trading.deposits.services.store import ASSET_UNIT_TAKEN
from trading.models import TradeItem
from wallet.selectors import wallet_invariants_check

pytestmark = pytest.mark.django_db


def broken(title: str) -> str:
    """check_wallet fails; what it wrote under ``title``."""
    err = StringIO()
    with pytest.raises(CommandError, match="invariants broken"):
        call_command("check_wallet", stdout=StringIO(), stderr=err)
    lines = [line for line in err.getvalue().splitlines() if line.startswith(title)]
    assert lines, err.getvalue()
    return "\n".join(lines)


def item_of(trade_id: str) -> TradeItem:
    return TradeItem.objects.get(trade_id=trade_id)


def retarget(trade_id: str, item_id: str) -> None:
    """Make a deposit's item the asset ``item_id`` of the same owner, as a bug would."""
    TradeItem.objects.filter(trade_id=trade_id).update(public_id=item_id)


def credited(desk, actor, *item_ids: str, end: bool = True) -> list[str]:
    trades = []
    for item_id in item_ids:
        trade_id = ok_data(sell(desk, actor, item_id))["id"]
        ok_data(sandbox_event(desk, actor, trade_id, "accepted"))
        trades.append(trade_id)
    if end:
        for trade_id in trades:
            ok_data(sandbox_event(desk, actor, trade_id, "hold_ended"))
    return trades


def test_the_checks_pass_on_trading_as_it_happens(desk, alice, owner):
    first, _ = credited(desk, alice, ak_item(0), ak_item(1))
    # Deposited again once its first deposit was reversed (the asset never left its owner): a
    # new credit, not a double one. A completed deposit's asset is the bots', not the owner's.
    (reversed_,) = credited(desk, alice, ak_item(2), end=False)
    ok_data(sandbox_event(desk, alice, reversed_, "reversed"))
    credited(desk, alice, ak_item(2), end=False)
    ok_data(deposit(desk, owner, ak_item(3)))

    report = wallet_invariants_check()
    assert report.clean, report
    assert item_of(first).public_id == ak_item(0)


def test_an_asset_in_two_live_deposits_is_reported(desk, alice, owner):
    first = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    second = ok_data(sell(desk, alice, ak_item(1)))["id"]
    with connection.cursor() as cursor:  # rolled back with the test
        cursor.execute(f'DROP INDEX "{ASSET_UNIT_TAKEN.name}"')
    retarget(second, ak_item(0))

    problems = broken("assets in two live deposits")
    assert f"{item_of(first).asset_owner}/{ak_item(0)} is in 2 live deposits" in problems


def test_a_live_deposit_item_naming_no_asset_is_reported(desk, alice, owner):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    TradeItem.objects.filter(trade_id=trade_id).update(asset_owner="")

    problems = broken("assets in two live deposits")
    assert f"deposit {trade_id}: {ak_item(0)} names no asset" in problems


@pytest.mark.parametrize("second_ended", [True, False])
def test_an_asset_credited_twice_at_once_is_reported(desk, alice, owner, second_ended):
    first, second = credited(desk, alice, ak_item(0), ak_item(1), end=False)
    ok_data(sandbox_event(desk, alice, first, "hold_ended"))
    if second_ended:
        ok_data(sandbox_event(desk, alice, second, "hold_ended"))
    # Both holds overlapped; now both name one asset (the first one's is over, so the database
    # has nothing to refuse).
    retarget(second, ak_item(0))

    problems = broken("credits without exactly one asset behind them")
    assert f"was credited to deposits {first} and {second} at once" in problems
    assert wallet_invariants_check().shared_assets == []


def test_a_credit_without_an_asset_is_reported(desk, alice, owner):
    (trade_id,) = credited(desk, alice, ak_item(0))
    TradeItem.objects.filter(trade_id=trade_id).update(asset_owner="")

    problems = broken("credits without exactly one asset behind them")
    assert f"deposit {trade_id}: {ak_item(0)} was credited without an asset" in problems


def test_the_migration_leaves_an_asset_sold_twice_for_check_wallet(desk, alice, owner):
    """Deposits made before the rule existed: the oldest keeps the asset, the others are
    reported instead of being made legal."""
    first, second = credited(desk, alice, ak_item(0), ak_item(1), end=False)
    TradeItem.objects.filter(trade_id__in=[first, second]).update(asset_owner="")
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX "{ASSET_UNIT_TAKEN.name}"')
    retarget(second, ak_item(0))
    migration = importlib.import_module("trading.migrations.0008_deposit_asset_live_unique")

    migration.deposit_assets_name(apps, None)

    assert item_of(first).asset_owner != ""
    assert item_of(second).asset_owner == ""
    report = wallet_invariants_check()
    assert report.shared_assets == [f"deposits: deposit {second}: {ak_item(0)} names no asset"]
    assert f"deposit {second}: {ak_item(0)} was credited without an asset" in "".join(
        report.doubled_credits
    )
