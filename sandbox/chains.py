"""The sandbox chains: transfers, confirmations, Solana token accounts and broadcasts kept in the
service's database, with the real thing's failures: a chain can halt (paused), a node can refuse
broadcasts, a transaction can be reorganised away, and token accounts take time to open. Halts
and refusing nodes are switched per merchant (the ``tenant``), by its own sandbox helper."""

import secrets
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from solders.signature import Signature

from core import clock
from core.db import ModelRows
from crypto.chains.base import AccountState, BroadcastError, ChainStatus, TransferState
from crypto.keys import hot_wallet
from crypto.networks import SOL
from sandbox.models import SandboxChain, SandboxChainTransfer, SandboxTokenAccount

_CHAINS = ModelRows(SandboxChain, only=["merchant", "chain", "paused"])
_MERCHANT, _CHAIN, _PAUSED = _CHAINS.quoted(["merchant", "chain", "paused"])
# Every ask for a deposit address asks this: written out by hand rather than compiled per call.
_PAUSED_FOR = (
    f"SELECT 1 FROM {_CHAINS.table('c')}"  # noqa: S608
    f" WHERE c.{_MERCHANT} = %s AND c.{_CHAIN} = %s AND c.{_PAUSED}"
)


def sandbox_tx_hash(chain: str) -> str:
    """A hash of the chain's shape: 0x and 64 hex digits, or a base58 Solana signature."""
    if chain == SOL:
        return str(Signature(secrets.token_bytes(64)))
    return "0x" + secrets.token_hex(32)


def _state(transfer: SandboxChainTransfer) -> TransferState:
    return TransferState(
        tx_hash=transfer.tx_hash, confirmations=transfer.confirmations, dropped=transfer.dropped
    )


class SandboxChains:
    def status(self, chain: str, *, tenant: str) -> str:
        with connection.cursor() as cursor:
            cursor.execute(
                _PAUSED_FOR, [_CHAINS.param("merchant", tenant), _CHAINS.param("chain", chain)]
            )
            paused = cursor.fetchone() is not None
        return ChainStatus.PAUSED if paused else ChainStatus.ACTIVE

    def token_account_open(self, *, owner: str, mint: str, address: str) -> None:
        opens_at = clock.now() + timedelta(seconds=settings.CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS)
        account, created = SandboxTokenAccount.objects.get_or_create(
            address=address,
            defaults={
                "owner": owner,
                "mint": mint,
                "state": AccountState.OPENING,
                "opens_at": opens_at,
            },
        )
        if not created and account.state == AccountState.CLOSED:
            SandboxTokenAccount.objects.filter(address=address, state=AccountState.CLOSED).update(
                state=AccountState.OPENING, opens_at=opens_at
            )

    def token_account_state(self, *, address: str) -> str:
        # Opening takes a while of service clock: the creation transaction has to confirm.
        SandboxTokenAccount.objects.filter(
            address=address, state=AccountState.OPENING, opens_at__lte=clock.now()
        ).update(state=AccountState.OPEN)
        account = SandboxTokenAccount.objects.filter(address=address).first()
        return account.state if account is not None else AccountState.MISSING

    def token_account_close(self, *, address: str) -> str:
        SandboxTokenAccount.objects.filter(address=address, state=AccountState.OPEN).update(
            state=AccountState.CLOSED, opens_at=None
        )
        return AccountState.CLOSED

    def transfer_state(self, *, chain: str, tx_hash: str) -> TransferState | None:
        transfer = SandboxChainTransfer.objects.filter(chain=chain, tx_hash=tx_hash).first()
        return _state(transfer) if transfer is not None else None

    def broadcast(
        self, *, tenant: str, chain: str, contract: str, to: str, amount: Decimal, key: str
    ) -> str:
        sent = SandboxChainTransfer.objects.filter(broadcast_key=key).first()
        if sent is not None:
            return sent.tx_hash
        config = SandboxChain.objects.filter(merchant_id=tenant, chain=chain).first()
        if config is not None and config.fail_broadcasts:
            raise BroadcastError(f"sandbox {chain} node refused the transaction")
        now = clock.now()
        try:
            with transaction.atomic():
                sent = SandboxChainTransfer.objects.create(
                    tx_hash=sandbox_tx_hash(chain),
                    chain=chain,
                    contract=contract,
                    from_address=hot_wallet(chain),
                    to_address=to,
                    amount=amount,
                    broadcast_key=key,
                    created_at=now,
                    updated_at=now,
                )
        except IntegrityError:
            # A twin worker broadcast the same cashout first: the chain knows one transaction.
            return SandboxChainTransfer.objects.get(broadcast_key=key).tx_hash
        return sent.tx_hash
