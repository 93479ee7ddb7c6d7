"""Cashouts on Solana through the recorded RPC server: SPL transferChecked from the hot wallet
creating the recipient's token account when it is missing, with a priority fee; a signing whose
blockhash expired unseen signed again with a new blockhash and paid once; a signing the cluster
has is never signed again; two cashouts broadcast at once by redelivered workers each paid once;
a transfer that fails on chain, or that the node refuses, refunded exactly once."""

import base64
import struct
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from rest_framework.test import APIClient
from solders.compute_budget import ID as COMPUTE_BUDGET
from solders.keypair import Keypair
from solders.transaction import VersionedTransaction
from spl.memo.constants import MEMO_PROGRAM_ID
from spl.token.constants import ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID

from crypto.keys import hot_wallet
from crypto.models import CryptoWithdrawal
from crypto.services.withdrawals import crypto_withdrawal_broadcast
from crypto.solana.models import SolanaAttempt, SolanaTransaction
from crypto.solana.node import SendRefusedError, solana_node
from crypto.tasks import solana_sweep_transactions, sweep_withdrawals
from ledger.models import Funding
from tests.crypto.conftest import USER, cashout_body, clean, data, money
from tests.crypto.solana.conftest import HOT_WALLET_TOKENS
from tests.crypto.solana.ledger import MAX_PROCESSING_AGE
from tests.crypto.solana.rpc import SolanaRpc
from tests.factories import make_actor
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

CHECK_SECONDS = 11  # past the transactions sweep's wait between two looks


def cashout(desk, actor, address: str, **fields: Any) -> dict[str, Any]:
    """A self cashout of 25.00 (24.50 after the 0.50 SOL fee), as it is once the broadcast its
    approval scheduled has run."""
    body = cashout_body(platformId=USER, chain="SOL", address=address, **fields)
    made = data(desk.post("/secure/crypto/withdraw", body, headers=actor.headers))
    return shown(desk, actor, made["id"])


def shown(desk, actor, withdrawal_id: str) -> dict[str, Any]:
    rows = data(
        desk.get("/secure/crypto/withdrawals", headers=actor.headers, params={"platformId": USER})
    )["withdrawals"]
    return next(row for row in rows if row["id"] == withdrawal_id)


def refunds(withdrawal_id: str) -> tuple[int, int]:
    """(REFUND wallet transfers, REFUND fundings) of the cashout."""
    return (
        Transfer.objects.filter(kind="REFUND", cause_id=withdrawal_id).count(),
        Funding.objects.filter(type="REFUND", source_id=withdrawal_id).count(),
    )


def programs(solana: SolanaRpc, signature: str) -> list[str]:
    message = solana.ledger.landed[signature].transaction.message
    return [str(message.account_keys[ix.program_id_index]) for ix in message.instructions]


def test_a_cashout_creates_the_recipients_account_pays_a_priority_fee_and_completes(
    desk, alice, bob, hooks, solana: SolanaRpc
):
    ledger = solana.ledger
    recipient = str(Keypair().pubkey())
    assert ledger.account(ledger.ata(recipient, "USDC")) is None

    made = cashout(desk, alice, recipient)
    assert made["status"] == "sent"
    landed = ledger.landed[made["txHash"]]
    assert landed.err is None
    assert ledger.token_balance(recipient, "USDC") == Decimal("24.50")
    assert ledger.token_balance(hot_wallet("SOL"), "USDC") == Decimal(HOT_WALLET_TOKENS) - Decimal(
        "24.50"
    )
    assert programs(solana, made["txHash"]) == [
        str(COMPUTE_BUDGET),  # setComputeUnitLimit
        str(COMPUTE_BUDGET),  # setComputeUnitPrice
        str(ASSOCIATED_TOKEN_PROGRAM_ID),  # createIdempotent
        str(TOKEN_PROGRAM_ID),  # transferChecked
        str(MEMO_PROGRAM_ID),
    ]
    price = bytes(landed.transaction.message.instructions[1].data)
    assert price[0] == 3  # ComputeBudgetInstruction::SetComputeUnitPrice
    assert (
        struct.unpack("<Q", price[1:])[0]
        == django_settings.CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS
    )
    transfer = bytes(landed.transaction.message.instructions[3].data)
    assert transfer[0] == 12  # TokenInstruction::TransferChecked
    assert money(alice)["locked"] == Decimal("25.00")

    desk.run(sweep_withdrawals)  # finalized at once by this server
    done = shown(desk, alice, made["id"])
    assert (done["status"], done["txHash"]) == ("completed", made["txHash"])
    assert (money(alice)["available"], money(alice)["locked"]) == (
        Decimal("975.00"),
        Decimal("0.00"),
    )
    assert [r.json["type"] for r in hooks.received] == [
        "crypto_withdrawal.approved",
        "crypto_withdrawal.sent",
        "crypto_withdrawal.completed",
    ]
    assert money(bob)["available"] == Decimal("1000.00")

    # The recipient's account exists now: a second cashout pays into it (the create is a no-op).
    again = cashout(desk, alice, recipient, requestId="req-00000002")
    assert ledger.landed[again["txHash"]].err is None
    assert ledger.token_balance(recipient, "USDC") == Decimal("49.00")
    assert clean()


def test_an_expired_signing_is_signed_again_with_a_new_blockhash_and_paid_once(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    recipient = str(Keypair().pubkey())
    ledger.drop_sends = True  # accepted by the node, lost before any leader
    made = cashout(desk, alice, recipient)
    assert made["status"] == "sent"
    first = SolanaAttempt.objects.get(signature=made["txHash"])

    clock_advance(CHECK_SECONDS)
    desk.run(solana_sweep_transactions)  # still valid: the same bytes sent again (lost again)
    assert SolanaAttempt.objects.count() == 1
    assert solana.count("sendTransaction") == 2

    ledger.advance(MAX_PROCESSING_AGE + 1)  # its last valid block height passed, unseen
    ledger.drop_sends = False
    clock_advance(CHECK_SECONDS)
    desk.run(solana_sweep_transactions)
    second = SolanaAttempt.objects.exclude(pk=first.pk).get()
    assert second.solana_transaction_id == first.solana_transaction_id
    assert second.blockhash != first.blockhash
    assert second.last_valid_block_height > first.last_valid_block_height
    assert second.priority_fee == 2 * first.priority_fee
    assert ledger.landed[second.signature].err is None
    assert first.signature not in ledger.landed

    desk.run(sweep_withdrawals)
    done = shown(desk, alice, made["id"])
    assert (done["status"], done["txHash"]) == ("completed", second.signature)
    funding = Funding.objects.get(type="WITHDRAWAL", source_id=made["id"])
    assert funding.txn_hash == second.signature

    # The first signing, sent again by anyone, can no longer land: paid once.
    with pytest.raises(SendRefusedError, match="Blockhash not found"):
        solana_node().send(base64.b64decode(first.raw), preflight=True)
    assert ledger.land(VersionedTransaction.from_bytes(base64.b64decode(first.raw))) is None
    for _ in range(3):
        clock_advance(CHECK_SECONDS)
        desk.run(solana_sweep_transactions)
        desk.run(sweep_withdrawals)
    assert SolanaAttempt.objects.count() == 2
    assert ledger.token_balance(recipient, "USDC") == Decimal("24.50")
    assert clean()


def test_a_signing_the_cluster_has_is_never_signed_again_though_its_answer_was_lost(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    recipient = str(Keypair().pubkey())
    solana.lose_answers = 1  # the node forwards it and the answer is lost (HTTP 503)
    made = cashout(desk, alice, recipient)
    assert made["status"] == "sent"
    assert made["txHash"] in ledger.landed

    ledger.advance(MAX_PROCESSING_AGE + 1)  # past its last valid height: expired, were it unseen
    clock_advance(CHECK_SECONDS)
    desk.run(solana_sweep_transactions)
    assert SolanaAttempt.objects.count() == 1  # its status was asked first: it is in a block
    signed = SolanaTransaction.objects.get()
    assert (signed.status, signed.succeeded, signed.landed_signature) == (
        "final",
        True,
        made["txHash"],
    )
    desk.run(sweep_withdrawals)
    assert shown(desk, alice, made["id"])["status"] == "completed"
    assert ledger.token_balance(recipient, "USDC") == Decimal("24.50")
    assert clean()


@pytest.mark.django_db(transaction=True)
def test_two_cashouts_broadcast_at_once_by_redelivered_workers_are_each_paid_once(
    solana: SolanaRpc, settings
):
    shop = make_actor(name="Racer")
    wallet_admin_credit(merchant=shop.merchant, amount=Decimal("1000.00"), reason="test")
    recipient = str(Keypair().pubkey())
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"SOL"})  # approved, not broadcast yet
    api = APIClient()
    ids = []
    for n in range(2):
        # The same amount to the same address: only the memo of each cashout tells them apart.
        body = cashout_body(
            platformId=USER, chain="SOL", address=recipient, requestId=f"twin-cashout-{n}"
        )
        answer = api.post(
            "/secure/crypto/withdraw", body, format="json", headers={"api-key": shop.api_key}
        )
        assert answer.status_code == 200, answer.content
        assert answer.json()["data"]["status"] == "approved"
        ids.append(answer.json()["data"]["id"])
    settings.CRYPTO_PAUSED_CHAINS = frozenset()

    start = threading.Barrier(4)

    def worker(withdrawal_id: str) -> Callable[[], None]:
        def work() -> None:
            try:
                start.wait()
                crypto_withdrawal_broadcast(withdrawal_id=withdrawal_id)
            finally:
                connection.close()

        return work

    with ThreadPoolExecutor(max_workers=4) as pool:
        for done in [pool.submit(worker(i)) for i in ids + ids]:
            done.result()

    signed = SolanaTransaction.objects.filter(purpose="cashout")
    assert signed.count() == 2
    assert SolanaAttempt.objects.count() == 2
    sent = {w.tx_hash for w in CryptoWithdrawal.objects.filter(pk__in=ids)}
    assert len(sent) == 2
    for signature in sent:
        assert solana.ledger.landed[signature].err is None
    assert solana.ledger.token_balance(recipient, "USDC") == Decimal("49.00")  # 2 x 24.50

    sweep_withdrawals()
    assert set(CryptoWithdrawal.objects.values_list("status", flat=True)) == {"completed"}
    balances = wallet_balances(merchant=shop.merchant)
    assert (balances["available"], balances["locked"]) == (Decimal("950.00"), Decimal("0.00"))
    assert wallet_invariants_check().clean


def test_a_transfer_that_fails_on_chain_is_refunded_exactly_once(
    desk, alice, hooks, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    recipient = str(Keypair().pubkey())
    ledger.hold_sends = True  # preflight passes; the leader gets it later
    made = cashout(desk, alice, recipient)
    assert made["status"] == "sent"
    # Meanwhile the issuer freezes the recipient's account (as Circle can for USDC).
    ledger.freeze(recipient, "USDC")
    [failed_on_chain] = ledger.release()
    assert failed_on_chain.signature == made["txHash"]
    assert failed_on_chain.err is not None  # AccountFrozen: custom program error 0x11

    desk.run(sweep_withdrawals)
    failed = shown(desk, alice, made["id"])
    assert (failed["status"], failed["reason"]) == ("failed", "TX_REVERTED")
    assert (money(alice)["available"], money(alice)["locked"]) == (
        Decimal("1000.00"),
        Decimal("0.00"),
    )
    for _ in range(3):  # later sweeps, of both kinds, refund nothing more
        clock_advance(CHECK_SECONDS)
        desk.run(sweep_withdrawals)
        desk.run(solana_sweep_transactions)
    assert refunds(made["id"]) == (1, 1)
    signed = SolanaTransaction.objects.get(purpose="cashout")
    assert (signed.status, signed.succeeded) == ("final", False)
    assert "17" in signed.error  # TokenError::AccountFrozen
    assert SolanaAttempt.objects.count() == 1
    assert ledger.token_balance(recipient, "USDC") == Decimal("0")
    assert len(hooks.of_type("crypto_withdrawal.failed")) == 1
    assert clean()


def test_a_cashout_the_node_refuses_at_preflight_is_never_sent_and_is_refunded_once(
    desk, alice, solana: SolanaRpc, clock_advance
):
    ledger = solana.ledger
    recipient = str(Keypair().pubkey())
    ledger.freeze(recipient, "USDC")
    made = cashout(desk, alice, recipient)
    assert made["status"] == "approved"  # refused: retried later
    refused = SolanaAttempt.objects.get()
    assert "custom program error: 0x11" in refused.refused
    assert SolanaTransaction.objects.get().status == "refused"

    for wait in django_settings.CRYPTO_BROADCAST_RETRY_SECONDS:
        clock_advance(wait + 1)
        ledger.advance(wait * 5 // 2)  # the chain moves on too: 400 ms blocks
        desk.run(sweep_withdrawals)
    failed = shown(desk, alice, made["id"])
    assert (failed["status"], failed["reason"], failed["txHash"]) == (
        "failed",
        "BROADCAST_FAILED",
        None,
    )
    assert refunds(made["id"]) == (1, 1)
    assert money(alice)["available"] == Decimal("1000.00")
    signings = list(SolanaAttempt.objects.values_list("signature", "refused"))
    assert len(signings) == django_settings.CRYPTO_BROADCAST_ATTEMPTS  # one per attempt
    assert all(reason for _, reason in signings)
    assert not [s for s, _ in signings if s in ledger.landed]
    assert ledger.token_balance(recipient, "USDC") == Decimal("0")
    assert clean()
