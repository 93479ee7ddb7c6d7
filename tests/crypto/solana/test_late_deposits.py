"""Late deposits on Solana through the recorded RPC server: tokens sent to a deposit account after
its sweep closed it. The sender's wallet re-creates the associated token account in the same
transaction (no balance before it, the tokens after), so the account exists again holding tokens
the service credits. They are credited once, swept to the hot wallet with the rest, and the
account is closed again, whether the transfer lands within the hour the scanner still reads a
closed account or long after, and whatever the order of the scan, the sweep and the closing."""

from decimal import Decimal

import pytest
from django.db import connections

from crypto.keys import hot_wallet
from crypto.models import CryptoDeposit, SolanaTokenAccount
from crypto.solana.models import SolanaCursor, SolanaSweep
from crypto.tasks import solana_scan, solana_sweep_accounts, sweep_deposits
from tests.crypto.conftest import clean, deposit_address, money
from tests.crypto.solana.conftest import HOT_WALLET_TOKENS, deposits, observe, open_address
from tests.crypto.solana.rpc import SolanaRpc
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

STEP_SECONDS = 11  # a live sweep is looked at every 10 s
CLOSED_CHECK_SECONDS = 301  # a closed account past its hour is looked at every 5 minutes
WATCH_SECONDS = 3_601


def paid(solana: SolanaRpc, owner: str, amount: str) -> str:
    """A wallet pays ``owner`` as Phantom or an exchange does: to its associated token account,
    created in the same transaction when the chain has none."""
    payer = solana.ledger.wallet()
    solana.ledger.mint(str(payer.pubkey()), "USDC", amount)
    return solana.ledger.pay(payer, owner, "USDC", amount, create=True)


def swept_and_closed(desk, solana: SolanaRpc, address: dict) -> SolanaTokenAccount:
    """A first deposit credited, its account swept and closed on the chain."""
    paid(solana, address["address"], "30")
    observe(desk)
    account = SolanaTokenAccount.objects.get(address=address["tokenAccount"])
    assert (account.status, account.close_pending) == ("closed", False)
    assert solana.ledger.account(address["tokenAccount"]) is None
    return account


def recreated(solana: SolanaRpc, address: dict, amount: str) -> str:
    """The late transfer: the account is created in it, counted from nothing."""
    signature = paid(solana, address["address"], amount)
    landed = solana.ledger.landed[signature]
    index = landed.keys.index(address["tokenAccount"])
    assert not [b for b in landed.pre_tokens if b.account_index == index]
    assert [b.amount for b in landed.post_tokens if b.account_index == index] == [
        int(Decimal(amount).scaleb(6))
    ]
    return signature


def hot_wallet_tokens(solana: SolanaRpc) -> Decimal:
    return solana.ledger.token_balance(hot_wallet("SOL"), "USDC") - Decimal(HOT_WALLET_TOKENS)


def closing_sweeps(address: str) -> list[tuple[str, Decimal, str]]:
    rows = SolanaSweep.objects.filter(address=address, closes=True).order_by("created_at")
    return [(s.trigger, s.amount, s.status) for s in rows]


def test_a_late_deposit_within_the_hour_is_credited_once_swept_and_closed_again(
    desk, alice, bob, hooks, solana: SolanaRpc
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    bobs = open_address(desk, bob)
    swept_and_closed(desk, solana, address)
    assert hot_wallet_tokens(solana) == 30

    late = recreated(solana, address, "12.5")
    observe(desk)  # read, credited; the account closes again and its sweep is sent
    observe(desk)  # the sweep is final: the chain closed it
    [credited] = [d for d in deposits(desk, alice) if d["txHash"] == late]
    assert (credited["status"], credited["amount"]) == ("completed", "12.50")
    assert money(alice)["available"] == Decimal("1042.50")
    assert hot_wallet_tokens(solana) == Decimal("42.5")
    assert ledger.account(address["tokenAccount"]) is None
    account = SolanaTokenAccount.objects.get(address=address["tokenAccount"])
    assert (account.status, account.close_pending) == ("closed", False)
    assert closing_sweeps(address["tokenAccount"]) == [
        ("close", Decimal("30"), "completed"),
        ("close", Decimal("12.5"), "completed"),
    ]

    for _ in range(3):  # later scans and sweeps credit and sweep nothing more
        observe(desk)
    assert Transfer.objects.filter(kind="CRYPTO_DEPOSIT").count() == 2
    assert money(alice)["available"] == Decimal("1042.50")
    assert len(closing_sweeps(address["tokenAccount"])) == 2
    assert [r.json["type"] for r in hooks.received].count("crypto_deposit.completed") == 2
    # Bob's account was never touched.
    assert ledger.account(bobs["tokenAccount"]) is not None
    assert deposits(desk, bob) == []
    assert money(bob)["available"] == Decimal("1000.00")
    assert clean()


def test_a_late_deposit_long_after_the_closing_is_found_credited_and_swept(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    swept_and_closed(desk, solana, address)
    clock_advance(WATCH_SECONDS)  # the scanner no longer reads the closed account's history
    listed = solana.count("getSignaturesForAddress")
    observe(desk)
    assert solana.count("getSignaturesForAddress") == listed  # only asked whether it exists
    looked = solana.count("getMultipleAccounts")
    assert looked == 1

    late = recreated(solana, address, "7")
    observe(desk)
    assert solana.count("getMultipleAccounts") == looked  # its next look is not due yet
    assert money(alice)["available"] == Decimal("1030.00")

    clock_advance(CLOSED_CHECK_SECONDS)
    observe(desk)  # the chain has it again: read, credited, closed again
    observe(desk)
    assert money(alice)["available"] == Decimal("1037.00")
    assert CryptoDeposit.objects.get(tx_hash=late).status == "completed"
    assert hot_wallet_tokens(solana) == 37
    assert ledger.account(address["tokenAccount"]) is None
    assert closing_sweeps(address["tokenAccount"])[-1] == ("close", Decimal("7"), "completed")
    assert clean()


def test_dust_sent_long_after_the_closing_is_swept_with_the_account(
    desk, alice, solana: SolanaRpc, clock_advance
):
    address = open_address(desk, alice)
    swept_and_closed(desk, solana, address)
    clock_advance(WATCH_SECONDS)
    recreated(solana, address, "0.3")  # below the minimum deposit: never credited
    observe(desk)
    observe(desk)
    assert CryptoDeposit.objects.filter(status="below_minimum").count() == 1
    assert money(alice)["available"] == Decimal("1030.00")
    # The account the chain has again is closed again: its dust to the hot wallet.
    assert solana.ledger.account(address["tokenAccount"]) is None
    assert hot_wallet_tokens(solana) == Decimal("30.3")
    assert clean()


def test_a_node_that_no_longer_has_the_cursor_is_read_back_to_its_slot(
    desk, alice, solana: SolanaRpc
):
    """The scanner's cursor names a transaction the node no longer serves (its ledger was
    cleaned up, or the provider routes to a node that is behind): agave 3.0 answers -32020 for
    such an ``until``. The account is read back to the cursor's slot instead."""
    ledger = solana.ledger
    address = open_address(desk, alice)
    swept_and_closed(desk, solana, address)
    cursor = SolanaCursor.objects.get(account__address=address["tokenAccount"])
    ledger.forget_before(ledger.landed[cursor.last_signature].height + 1)

    late = recreated(solana, address, "9")
    observe(desk)
    observe(desk)
    assert CryptoDeposit.objects.get(tx_hash=late).status == "completed"
    assert money(alice)["available"] == Decimal("1039.00")
    assert hot_wallet_tokens(solana) == 39
    assert solana.ledger.account(address["tokenAccount"]) is None
    assert SolanaCursor.objects.get(pk=cursor.pk).last_signature != cursor.last_signature
    assert clean()


@pytest.mark.django_db(transaction=True)
def test_a_credit_landing_while_the_closing_reads_the_chain_keeps_the_account_closing(
    desk, alice, solana: SolanaRpc
):
    """The closing step reads that the chain no longer has the account; before it records the
    account closed, a wallet re-creates it and the scanner credits the transfer (another worker).
    The closing must not be recorded for a chain it no longer describes."""
    ledger = solana.ledger
    address = open_address(desk, alice)
    paid(solana, address["address"], "30")
    desk.run(solana_scan)  # credited; the closing sweep is sent
    account = SolanaTokenAccount.objects.get(address=address["tokenAccount"])
    assert account.close_pending

    def meanwhile(method: str, params: list) -> None:
        if method != "getAccountInfo" or params[0] != address["tokenAccount"]:
            return
        solana.on_answer = None
        recreated(solana, address, "4")
        try:
            solana_scan()  # another worker: its credit commits before the closing step's write
        finally:
            connections.close_all()

    solana.on_answer = meanwhile
    desk.run(sweep_deposits)  # the closing step: the sweep final, the chain without the account
    assert solana.on_answer is None  # the interleaving happened
    assert money(alice)["available"] == Decimal("1034.00")
    account.refresh_from_db()
    assert account.close_pending  # not recorded closed: the chain has the account again

    observe(desk)
    observe(desk)
    account.refresh_from_db()
    assert (account.status, account.close_pending) == ("closed", False)
    assert ledger.account(address["tokenAccount"]) is None
    assert hot_wallet_tokens(solana) == 34
    assert [s[1] for s in closing_sweeps(address["tokenAccount"])] == [Decimal(30), Decimal(4)]
    assert clean()


def test_an_address_asked_for_while_its_closing_sweep_is_in_flight_opens_after_it(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    paid(solana, address["address"], "30")
    ledger.hold_sends = True  # the closing sweep waits between preflight and its block
    desk.run(solana_scan)
    assert ledger.held

    # The account still exists, but its closing is on its way: not shown as open.
    again = deposit_address(desk, alice, "SOL")
    assert (again["status"], again["tokenAccount"]) == ("pending", None)
    ledger.release()  # the sweep lands: the account is gone
    clock_advance(STEP_SECONDS)
    desk.run(solana_sweep_accounts)
    assert SolanaSweep.objects.get().status == "completed"
    assert ledger.account(address["tokenAccount"]) is None

    assert deposit_address(desk, alice, "SOL")["status"] == "pending"  # opened again
    reopened = deposit_address(desk, alice, "SOL")
    assert (reopened["status"], reopened["tokenAccount"]) == ("active", address["tokenAccount"])
    assert ledger.account(address["tokenAccount"]) is not None
    paid(solana, address["address"], "5")
    observe(desk)
    assert money(alice)["available"] == Decimal("1035.00")
    assert clean()
