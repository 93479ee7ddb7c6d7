"""Sweeps of Solana deposit accounts through the recorded RPC server: a credited deposit sweeps
its account to the hot wallet and closes it (rent back to the hot wallet), staff sweep an account
from the admin, the schedule sweeps open accounts credited since their last sweep (one credited
while a sweep read the balance is left to the next sweep); every sweep recorded, no USD moved."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.db import connections

from crypto.keys import hot_wallet
from crypto.models import CryptoDeposit, SolanaTokenAccount
from crypto.solana.models import SolanaSweep, SolanaTransaction
from crypto.solana.sweeps import solana_sweep_step
from crypto.tasks import solana_plan_sweeps, solana_scan, solana_sweep_accounts, sweep_deposits
from tests.crypto.conftest import OTHER_USER, clean, deposit_address, money
from tests.crypto.solana.conftest import HOT_WALLET_TOKENS, deposits, observe, open_address
from tests.crypto.solana.ledger import TOKEN_ACCOUNT_SIZE
from tests.crypto.solana.rpc import SolanaRpc
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

STEP_SECONDS = 11


def paid(solana: SolanaRpc, owner: str, amount: str, token: str = "USDC") -> str:
    payer = solana.ledger.wallet()
    solana.ledger.mint(str(payer.pubkey()), token, amount)
    return solana.ledger.pay(payer, owner, token, amount)


def test_a_credited_deposit_sweeps_its_account_to_the_hot_wallet_and_closes_it(
    desk, alice, bob, solana: SolanaRpc
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    bobs = open_address(desk, bob)
    paid(solana, address["address"], "30")
    desk.run(solana_scan)  # credited; the account closes here and its closing sweep is sent
    assert money(alice)["available"] == Decimal("1030.00")
    transfers = Transfer.objects.count()
    account = SolanaTokenAccount.objects.get(address=address["tokenAccount"])
    assert (account.status, account.close_pending) == ("closed", True)
    sweep = SolanaSweep.objects.get()
    assert (sweep.trigger, sweep.closes, sweep.amount, sweep.status) == (
        "close",
        True,
        Decimal("30"),
        "sweeping",
    )

    desk.run(sweep_deposits)  # it looks again: final, the chain closed it
    sweep.refresh_from_db()
    assert sweep.status == "completed"
    assert sweep.completed_at is not None
    account.refresh_from_db()
    assert account.close_pending is False
    assert ledger.account(address["tokenAccount"]) is None
    hot = hot_wallet("SOL")
    assert ledger.token_balance(hot, "USDC") == Decimal(HOT_WALLET_TOKENS) + 30
    closing = ledger.landed[sweep.tx_hash]
    payer = closing.keys.index(hot)
    rent = ledger.rent(TOKEN_ACCOUNT_SIZE)
    assert closing.post_lamports[payer] - closing.pre_lamports[payer] == rent - closing.fee
    assert Transfer.objects.count() == transfers  # tokens moved, no USD
    assert ledger.account(bobs["tokenAccount"]) is not None  # bob's stays open

    # Asked again, the address reopens at the same account; a new deposit is credited.
    assert deposit_address(desk, alice, "SOL")["status"] == "pending"
    again = deposit_address(desk, alice, "SOL")
    assert (again["status"], again["tokenAccount"]) == ("active", address["tokenAccount"])
    paid(solana, address["address"], "5")
    observe(desk)
    assert money(alice)["available"] == Decimal("1035.00")
    assert len(deposits(desk, alice)) == 2
    assert clean()


def test_staff_sweep_an_account_from_the_admin_and_it_stays_open(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    paid(solana, address["address"], "0.40")  # below the minimum: never credited, kept there
    observe(desk)
    assert CryptoDeposit.objects.get().status == "below_minimum"
    account = SolanaTokenAccount.objects.get(address=address["tokenAccount"])
    staff = User.objects.create_superuser("staff", "staff@example.com", "x")
    desk.api.force_login(staff)

    answer = desk.run(
        lambda: desk.api.post(
            "/admin/crypto/solanatokenaccount/",
            {
                "action": "sweep",
                "_selected_action": [account.pk],
                "staff_confirm": "yes",
                "reason": "dust left under the minimum",
            },
        )
    )
    assert answer.status_code == 302
    sweep = SolanaSweep.objects.get()
    assert (sweep.trigger, sweep.closes, sweep.amount) == ("staff", False, Decimal("0.4"))
    entry = LogEntry.objects.get(object_id=str(account.pk))
    assert entry.get_change_message() == (
        "Sweep to the hot wallet: Sweeps requested: Solana USDC account. "
        "Reason: dust left under the minimum"
    )

    clock_advance(STEP_SECONDS)
    desk.run(solana_sweep_accounts)
    sweep.refresh_from_db()
    assert sweep.status == "completed"
    assert ledger.token_account(address["tokenAccount"]) is not None  # still open, empty
    assert ledger.token_balance(address["address"], "USDC") == 0
    assert deposit_address(desk, alice, "SOL")["status"] == "active"

    assert address["tokenAccount"] in desk.api.get("/admin/crypto/solanasweep/").content.decode()
    signed = desk.api.get("/admin/crypto/solanatransaction/").content.decode()
    assert f"sweep:{sweep.pk}" in signed
    signing = SolanaTransaction.objects.get(key=f"sweep:{sweep.pk}")
    page = desk.api.get(f"/admin/crypto/solanatransaction/{signing.pk}/change/").content.decode()
    assert '<pre class="json">[\n  {\n    &quot;' in page  # its instructions, indented
    listing = desk.api.get("/admin/crypto/solanatokenaccount/").content.decode()
    assert account.cursor.last_signature in listing  # how far the scanner read it
    assert clean()


def test_the_schedule_sweeps_open_accounts_credited_since_their_last_sweep(
    desk, alice, settings, solana: SolanaRpc
):
    settings.CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS = 5_000
    ledger = solana.ledger
    address = open_address(desk, alice)
    small = open_address(desk, alice, user=OTHER_USER)
    paid(solana, address["address"], "60")  # above the review threshold: frozen
    paid(solana, address["address"], "45")  # credited; the frozen one keeps the account open
    paid(solana, small["address"], "20")  # credited and closed: its own sweep
    observe(desk)
    observe(desk)
    statuses = sorted(CryptoDeposit.objects.values_list("status", flat=True))
    assert statuses == ["completed", "completed", "frozen"]
    closing = SolanaSweep.objects.get()
    assert (closing.address, closing.status) == (small["tokenAccount"], "completed")
    assert money(alice)["available"] == Decimal("1065.00")

    assert desk.run(solana_plan_sweeps) == 1
    sweep = SolanaSweep.objects.exclude(pk=closing.pk).get()
    assert (sweep.trigger, sweep.closes, sweep.amount) == ("schedule", False, Decimal("105"))
    observe(desk)
    desk.run(solana_sweep_accounts)
    assert desk.run(solana_plan_sweeps) == 0  # swept since its credit
    assert ledger.token_balance(address["address"], "USDC") == 0
    assert money(alice)["available"] == Decimal("1065.00")  # no USD moved
    assert clean()


@pytest.mark.django_db(transaction=True)
def test_a_deposit_credited_while_a_scheduled_sweep_reads_the_balance_is_swept_by_the_next(
    desk, alice, settings, solana: SolanaRpc
):
    settings.CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS = 5_000
    settings.CRYPTO_SOLANA_SWEEP_MIN_TOKENS = 10
    ledger = solana.ledger
    address = open_address(desk, alice)
    paid(solana, address["address"], "60")  # frozen: the account stays open
    paid(solana, address["address"], "45")
    observe(desk)
    late: list[str] = []

    def meanwhile(method: str, params: list) -> None:
        if method != "getTokenAccountBalance" or late:
            return
        late.append(paid(solana, address["address"], "20"))  # after the balance was read
        try:
            solana_scan()  # another worker credits it before the sweep is recorded
        finally:
            connections.close_all()

    solana.on_answer = meanwhile
    assert desk.run(solana_plan_sweeps) == 1
    solana.on_answer = None
    assert CryptoDeposit.objects.get(tx_hash=late[0]).status == "completed"
    first = SolanaSweep.objects.get()
    assert first.amount == Decimal("105")  # the balance it read
    observe(desk)
    desk.run(lambda: solana_sweep_step(sweep_id=first.pk))
    first.refresh_from_db()
    assert first.status == "completed"

    assert desk.run(solana_plan_sweeps) == 1  # credited after the first read: swept again
    second = SolanaSweep.objects.exclude(pk=first.pk).get()
    assert (second.trigger, second.amount) == ("schedule", Decimal("20"))
    desk.run(lambda: solana_sweep_step(sweep_id=second.pk))
    second.refresh_from_db()
    assert second.status == "completed"
    assert ledger.token_balance(address["address"], "USDC") == 0
    assert ledger.token_balance(hot_wallet("SOL"), "USDC") == Decimal(HOT_WALLET_TOKENS) + 125
    assert desk.run(solana_plan_sweeps) == 0
    assert money(alice)["available"] == Decimal("1065.00")
    assert clean()
