"""What deposits, cashouts and addresses share: availability, chain pauses, review thresholds,
the clock in milliseconds and the webhooks."""

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings

from core import clock
from core.errors import DomainError
from core.feed import feed_publish_on_commit
from crypto.chains import get_chains
from crypto.chains.base import ChainError, ChainStatus
from crypto.models import CryptoDeposit, CryptoWithdrawal, MerchantCryptoPolicy
from crypto.representations import deposit_json, withdrawal_json
from ledger.models import Funding
from ledger.representations import funding_event_json
from ledger.selectors import funding_of_source
from merchants.models import Merchant
from merchants.webhooks.outbox import webhook_event_emit

logger = logging.getLogger(__name__)


def now_ms() -> datetime:
    """The service clock cut to milliseconds, the precision of ``before``/``nextBefore``, so a
    page boundary names a row's time exactly."""
    moment = clock.now()
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def crypto_access_check(*, merchant: Merchant) -> None:
    """2500 when crypto is off here; 2522 for merchants that are not verified."""
    if not settings.CRYPTO_ENABLED:
        raise DomainError("ONCHAIN_DISABLED")
    if not merchant.is_verified:
        raise DomainError("ONCHAIN_MERCHANT_NOT_VERIFIED")


def chain_paused(chain: str, *, merchant_id: UUID | str) -> bool:
    """Paused by the operator (``CRYPTO_PAUSED_CHAINS``, for every merchant), or halted as the
    chain tells this merchant (the sandbox halts a chain per merchant). Network I/O."""
    if chain in settings.CRYPTO_PAUSED_CHAINS:
        return True
    return get_chains().status(chain, tenant=str(merchant_id)) == ChainStatus.PAUSED


def chain_paused_or_unknown(chain: str, *, merchant_id: UUID | str) -> bool | None:
    """For the sweeps: None when the chain cannot be asked (its rows wait for the next run, the
    other chains' go on). Network I/O."""
    try:
        return chain_paused(chain, merchant_id=merchant_id)
    except ChainError as exc:
        logger.warning("%s cannot be asked, its rows wait: %s", chain, exc)
        return None


def rows_refresh(
    rows: Iterable[tuple[UUID, UUID, str]], refresh: Callable[[UUID, bool], object]
) -> None:
    """For the sweeps: ``refresh`` each (id, merchant id, chain) row with whether its chain is
    paused for the merchant, asked once per merchant and chain; the rows of a chain that cannot
    be asked wait. Network I/O."""
    paused: dict[tuple[UUID, str], bool | None] = {}
    for row_id, merchant_id, chain in rows:
        if (merchant_id, chain) not in paused:
            paused[merchant_id, chain] = chain_paused_or_unknown(chain, merchant_id=merchant_id)
        if paused[merchant_id, chain] is not None:
            refresh(row_id, bool(paused[merchant_id, chain]))


def chain_status(chain: str, *, merchant_id: UUID | str) -> str:
    """For a request: ``active``, or ``paused`` (addresses stay valid, credits and cashout
    broadcasts wait). 2500 when the chain cannot be asked (no gateway configured, its node down).
    Network I/O."""
    try:
        return "paused" if chain_paused(chain, merchant_id=merchant_id) else "active"
    except ChainError as exc:
        logger.warning("%s cannot be asked: %s", chain, exc)
        raise DomainError("ONCHAIN_DISABLED", f"The {chain} chain cannot be reached.") from exc


def _policy(merchant_id: UUID | str) -> MerchantCryptoPolicy | None:
    return MerchantCryptoPolicy.objects.filter(merchant_id=merchant_id).first()


def deposit_review_above_cents(merchant_id: UUID | str) -> int:
    policy = _policy(merchant_id)
    if policy is not None and policy.deposit_review_above_cents is not None:
        return policy.deposit_review_above_cents
    return int(settings.CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS)


def withdraw_review_above_cents(merchant_id: UUID | str) -> int:
    policy = _policy(merchant_id)
    if policy is not None and policy.withdraw_review_above_cents is not None:
        return policy.withdraw_review_above_cents
    return int(settings.CRYPTO_WITHDRAW_REVIEW_ABOVE_CENTS)


def deposit_emit(deposit: CryptoDeposit) -> None:
    """Save the deposit and emit ``crypto_deposit.<status>`` with its next sequence; the
    merchant's sockets get its funding (``deposit {funding}``; one below the minimum has none)."""
    sequence = deposit.next_sequence
    deposit.next_sequence += 1
    deposit.save()
    funding = funding_of_source(
        source_type="crypto_deposit", source_id=str(deposit.id), type=Funding.Type.DEPOSIT
    )
    if funding is not None:
        feed_publish_on_commit(
            {
                "kind": "merchant",
                "merchantId": str(deposit.merchant_id),
                "event": "deposit",
                "order": f"deposit:{deposit.id}",
                "sequence": sequence,
            },
            {"funding": funding_event_json(funding)},
        )
    _event_emit(deposit, subject="deposit", sequence=sequence, body=deposit_json(deposit))


def withdrawal_emit(withdrawal: CryptoWithdrawal, *, is_approval: bool = False) -> None:
    """Save the cashout and emit ``crypto_withdrawal.<status>`` with its next sequence."""
    sequence = withdrawal.next_sequence
    withdrawal.next_sequence += 1
    withdrawal.save()
    _event_emit(
        withdrawal,
        subject="withdrawal",
        sequence=sequence,
        body=withdrawal_json(withdrawal),
        is_approval=is_approval,
    )


def _event_emit(
    row: CryptoDeposit | CryptoWithdrawal,
    *,
    subject: str,
    sequence: int,
    body: Mapping[str, Any],
    is_approval: bool = False,
) -> None:
    """``crypto_<subject>.<status>``, about the row, its body under ``<subject>``."""
    webhook_event_emit(
        merchant=row.merchant,
        type=f"crypto_{subject}.{row.status}",
        subject_type=f"crypto_{subject}",
        subject_id=str(row.id),
        sequence=sequence,
        body_key=subject,
        body=body,
        is_approval=is_approval,
    )
