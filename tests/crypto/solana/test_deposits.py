"""Deposits on Solana through the recorded RPC server: SPL transfers into users' associated token
accounts, found by the scanner with getSignaturesForAddress and getTransaction (jsonParsed) at
finalized commitment, credited once per signature from the token balances before and after, an
account created by the deposit's own transaction counted from zero, and a scan stopped in the
middle going on from its cursor."""

from decimal import Decimal

import pytest

from crypto import tasks
from crypto.models import CryptoDeposit, SolanaTokenAccount
from crypto.solana.models import SolanaCursor
from crypto.tasks import solana_scan
from ledger.models import Funding
from tests.crypto.conftest import OTHER_USER, USER, clean, deposit_address, money
from tests.crypto.solana.conftest import deposits, observe, open_address
from tests.crypto.solana.rpc import SolanaRpc
from wallet.models import Transfer

pytestmark = pytest.mark.django_db


def test_a_deposit_is_credited_once_it_is_finalized_and_only_once(
    desk, alice, bob, hooks, bob_hooks, solana: SolanaRpc
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    assert address["tokens"] == [{"token": "USDC", "contract": ledger.mints["USDC"], "decimals": 6}]
    assert address["tokenAccount"] == ledger.ata(address["address"], "USDC")
    bobs = open_address(desk, bob)
    payer = ledger.wallet()
    ledger.mint(str(payer.pubkey()), "USDC", "100")

    ledger.auto_finalize = False
    signature = ledger.pay(payer, address["address"], "USDC", "25.50")
    observe(desk)
    assert deposits(desk, alice) == []  # confirmed only: not read yet
    assert money(alice)["available"] == Decimal("1000.00")

    ledger.auto_finalize = True
    ledger.finalize()
    observe(desk)
    [done] = deposits(desk, alice)
    assert done | {"id": None, "createdAt": None, "updatedAt": None, "completedAt": None} == {
        "id": None,
        "type": "crypto_deposit",
        "status": "completed",
        "platformId": USER,
        "chain": "SOL",
        "token": "USDC",
        "amount": "25.50",
        "amountCents": 2550,
        "cryptoAmount": "25.5",
        "address": address["address"],
        "txHash": signature,
        "from": str(payer.pubkey()),
        "createdAt": None,
        "updatedAt": None,
        "completedAt": None,
    }
    assert money(alice)["available"] == Decimal("1025.50")
    funding = Funding.objects.get(source_type="crypto_deposit", source_id=done["id"])
    assert funding.status == Funding.Status.COMPLETED

    for _ in range(3):  # later scans and sweeps credit nothing more
        observe(desk)
    assert Transfer.objects.filter(cause_type="crypto_deposit", cause_id=done["id"]).count() == 1
    assert money(alice)["available"] == Decimal("1025.50")
    assert [r.json["type"] for r in hooks.received] == [
        "crypto_deposit.pending",
        "crypto_deposit.completed",
    ]
    # Bob's user has an account of its own, and nothing arrived there.
    assert bobs["tokenAccount"] != address["tokenAccount"]
    assert deposits(desk, bob) == []
    assert bob_hooks.received == []
    assert money(bob)["available"] == Decimal("1000.00")
    assert solana.count("getSignaturesForAddress") > 0
    assert solana.count("getTransaction") > 0
    assert clean()


def test_an_account_the_deposit_itself_creates_is_counted_from_zero(desk, alice, solana: SolanaRpc):
    ledger = solana.ledger
    ledger.drop_sends = True  # the service's opening never reaches a leader
    pending = deposit_address(desk, alice, "SOL")
    assert pending["status"] == "pending"
    ledger.drop_sends = False
    account = SolanaTokenAccount.objects.get()
    owner = account.allocation.solana_owner
    assert ledger.account(account.address) is None

    # The sender's wallet creates the recipient's account in its own transaction (Phantom
    # and exchanges do): no balance before it, 40 after.
    payer = ledger.wallet()
    ledger.mint(str(payer.pubkey()), "USDC", "40")
    signature = ledger.pay(payer, owner, "USDC", "40", create=True)
    landed = ledger.landed[signature]
    index = landed.keys.index(account.address)
    assert not [b for b in landed.pre_tokens if b.account_index == index]

    observe(desk)
    [deposit] = deposits(desk, alice)
    assert (deposit["status"], deposit["amount"], deposit["txHash"]) == (
        "completed",
        "40.00",
        signature,
    )
    assert CryptoDeposit.objects.get().event_index == index
    assert money(alice)["available"] == Decimal("1040.00")
    assert deposit_address(desk, alice, "SOL")["status"] == "active"
    assert clean()


def test_a_scan_stopped_in_the_middle_goes_on_from_its_cursor_crediting_each_once(
    desk, alice, bob, settings, monkeypatch, solana: SolanaRpc
):
    settings.CRYPTO_SOLANA_SCAN_PAGE = 2  # several pages per account
    ledger = solana.ledger
    first = open_address(desk, alice)["address"]
    second = open_address(desk, alice, token="USDT", user=OTHER_USER)["address"]
    bobs = open_address(desk, bob)["address"]
    payer = ledger.wallet()
    ledger.mint(str(payer.pubkey()), "USDC", "500")
    ledger.mint(str(payer.pubkey()), "USDT", "500")
    poor = ledger.wallet()
    ledger.mint(str(poor.pubkey()), "USDC", "1")
    paid = [
        ledger.pay(payer, first, "USDC", "11"),
        ledger.pay(payer, bobs, "USDC", "12"),
        ledger.pay(payer, second, "USDT", "13"),
        ledger.pay(payer, first, "USDC", "14"),
        ledger.pay(payer, first, "USDC", "15"),
        ledger.pay(payer, first, "USDC", "16"),
    ]
    # A transfer that failed on chain (sent without preflight): listed, moves nothing.
    failed = ledger.land(ledger.payment(poor, first, "USDC", "900"))
    assert failed is not None
    assert failed.err is not None
    first_account = SolanaTokenAccount.objects.get(allocation__solana_owner=first)

    handed_on: list[str] = []
    real_observe = tasks.crypto_deposit_observe

    def dies_at_the_third(**transfer):
        if len(handed_on) == 2:
            raise SystemExit("worker killed")
        handed_on.append(transfer["tx_hash"])
        return real_observe(**transfer)

    monkeypatch.setattr(tasks, "crypto_deposit_observe", dies_at_the_third)
    with pytest.raises(SystemExit):
        desk.run(solana_scan)
    assert CryptoDeposit.objects.count() == 2
    # The cursor of the account being read stops after the last transfer handed on.
    cursor = SolanaCursor.objects.get(account=first_account)
    assert cursor.last_signature == handed_on[-1]

    monkeypatch.setattr(tasks, "crypto_deposit_observe", real_observe)  # the worker restarts
    observe(desk)
    observe(desk)
    rows = CryptoDeposit.objects.all()
    assert sorted((d.tx_hash, d.amount_usd) for d in rows) == sorted(
        zip(paid, [Decimal(n) for n in ("11", "12", "13", "14", "15", "16")], strict=True)
    )
    assert set(rows.values_list("status", flat=True)) == {"completed"}
    assert money(alice)["available"] == Decimal("1069.00")  # 11 + 13 + 14 + 15 + 16
    assert money(bob)["available"] == Decimal("1012.00")
    assert Transfer.objects.filter(kind="CRYPTO_DEPOSIT").count() == 6
    # Past every signature of the account: the failed one, then the sweep that closed it.
    newest = ledger.by_address[first_account.address][-1]
    assert SolanaCursor.objects.get(account=first_account).last_signature == newest
    assert clean()
