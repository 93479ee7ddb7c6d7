"""Test events on demand (``POST /sandbox/webhooks/test``): one signed event of any type the
service sends, posted to the merchant's callback URL or a URL given, so a receiver can be built
and checked without waiting for a trade to reach each state.

The body is a real one's: the subject (a trade, a crypto deposit or a cashout) is a model
instance that is never saved, rendered by the functions the API and the outbox render with
(``trade_json``, ``deposit_json``, ``withdrawal_json``), put in the outbox's envelope
(``webhook_payload``), with ``"test": true`` added, and signed and posted as every delivery is
(``signed_post``: the merchant's Standard Webhooks secret, the callback egress). Nothing is
stored: a test event is not in the outbox, is never retried, and an approval's answer decides
nothing. Its subject's id is new each time, so it never touches the receiver's real state.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, get_args

import orjson

from core import clock
from core.errors import DomainError
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.representations import DepositStatus, WithdrawalStatus, deposit_json, withdrawal_json
from merchants.models import Merchant
from merchants.webhooks.delivery import ATTEMPT_TIMEOUT_SECONDS
from merchants.webhooks.outbox import webhook_payload
from merchants.webhooks.signing import signed_post, storable_text
from trading.models import Status, Trade, TradeItem
from trading.trades import examples
from trading.trades.shapes import trade_json

TRADE_TYPES = (*(f"trade.{status}" for status in Status.values), "trade.updated")
DEPOSIT_TYPES = tuple(f"crypto_deposit.{status}" for status in get_args(DepositStatus))
WITHDRAWAL_TYPES = tuple(f"crypto_withdrawal.{status}" for status in get_args(WithdrawalStatus))
# The test a new callback URL gets (``merchants.webhooks.callbacks``): ``{"test": true}``.
CALLBACK_URL_TEST = "callback_url.test"
EVENT_TYPES = (*TRADE_TYPES, *DEPOSIT_TYPES, *WITHDRAWAL_TYPES, CALLBACK_URL_TEST)
# What a test event shows of the receiver's answer.
ANSWER_CHARS = 500

ITEM_DETAILS = {
    "name": "AK-47 | Redline",
    "marketHashName": "AK-47 | Redline (Field-Tested)",
    "type": "Rifle",
    "iconUrl": "https://cdn.sandbox.invalid/items/730-000040.png",
}
# Why a trade or its item ended, as the real flows write it.
TRADE_ERRORS: dict[str, str] = {Status.FAILED: "MERCHANT_REJECTED"}
CASHOUT_REASONS = {
    "failed": "APPROVAL_TIMEOUT",
    "rejected": "MERCHANT_REJECTED",
    "cancelled": "CANCELLED_BY_STAFF",
}
ETH_ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
TX_HASH = "0x" + "7e" * 32


@dataclass(frozen=True)
class TestDelivery:
    webhook_id: str
    url: str
    payload: dict[str, Any]
    status_code: int | None
    answer: str
    latency_ms: int
    error: str


def webhook_test_send(
    *, merchant: Merchant, type: str, url: str = "", trade_type: str = Trade.Type.WITHDRAW
) -> TestDelivery:
    """Post one signed test event of ``type`` and report the receiver's answer. Network I/O:
    call outside transactions. No URL given and no active callback URL:
    ``MERCHANT_NO_CALLBACK_URL``."""
    target = url or (merchant.callback_url if merchant.has_active_callback else "")
    if not target:
        raise DomainError("MERCHANT_NO_CALLBACK_URL")
    webhook_id, payload = _event(merchant=merchant, type=type, trade_type=trade_type)
    result = signed_post(
        merchant=merchant,
        url=target,
        msg_id=webhook_id,
        body=orjson.dumps(payload),
        timeout=ATTEMPT_TIMEOUT_SECONDS,
    )
    return TestDelivery(
        webhook_id=webhook_id,
        url=target,
        payload=payload,
        status_code=result.status_code,
        answer=storable_text(result.body, ANSWER_CHARS),
        latency_ms=result.latency_ms,
        error=result.error,
    )


def _event(*, merchant: Merchant, type: str, trade_type: str) -> tuple[str, dict[str, Any]]:
    """The webhook id and the body: a real event's with ``test: true``, or the URL test's."""
    if type == CALLBACK_URL_TEST:
        return f"test_{uuid.uuid4().hex}", {"test": True}
    event_id = uuid.uuid4()
    now = clock.now()
    body_key, subject = _subject(merchant=merchant, type=type, trade_type=trade_type, now=now)
    payload = webhook_payload(
        event_id=event_id, type=type, created_at=now, sequence=1, body_key=body_key, body=subject
    )
    payload["test"] = True
    return str(event_id), payload


def _subject(*, merchant: Merchant, type: str, trade_type: str, now: datetime) -> tuple[str, Any]:
    family, _, status = type.partition(".")
    if family == "trade":
        trade, items = _trade(merchant=merchant, status=status, trade_type=trade_type, now=now)
        return "trade", trade_json(trade, items)
    if family == "crypto_deposit":
        return "deposit", deposit_json(_deposit(merchant=merchant, status=status, now=now))
    return "withdrawal", withdrawal_json(_withdrawal(merchant=merchant, status=status, now=now))


def _trade(
    *, merchant: Merchant, status: str, trade_type: str, now: datetime
) -> tuple[Trade, list[TradeItem]]:
    """A client's trade of one item with what a trade in ``status`` shows. ``updated``: a
    withdrawal of two items, one cancelled and one still pending; a deposit whose bot just made
    its offer."""
    deposit = trade_type == Trade.Type.DEPOSIT
    shown = Status.PENDING if status == "updated" else status
    created = now - timedelta(minutes=40)
    trade = Trade(
        id=uuid.uuid4(),
        merchant=merchant,
        client_id=int(examples.CLIENT_USER_ID),
        type=trade_type,
        source=Trade.Source.CLIENT,
        status=shown,
        game=730,
        external_id=f"test-{uuid.uuid4().hex[:12]}",
        client_platform_id=examples.CLIENT_PLATFORM_ID,
        client_trade_url=examples.CLIENT_TRADE_URL,
        external_client_user_id="user-8841",
        error=TRADE_ERRORS.get(shown, ""),
        created_at=created,
        updated_at=now,
    )
    if shown in (Status.ACTIVE, Status.HOLD, Status.COMPLETED, Status.REVERTED, Status.DECLINED):
        trade.active_at = created + timedelta(minutes=2)
    if trade.active_at is not None or (status == "updated" and deposit):
        trade.offer_id, trade.bot_info = "7345012201", examples.BOT
    if shown in (Status.HOLD, Status.COMPLETED, Status.REVERTED):
        trade.hold_end_date = now + timedelta(days=7) if shown == Status.HOLD else now
    if shown == Status.REVERTED:
        trade.reverted_by = "user"
    two = status == "updated" and not deposit
    statuses: list[str] = [Status.CANCELED, Status.PENDING] if two else [shown]
    items = [_item(trade, position, each, now) for position, each in enumerate(statuses)]
    trade.total_price = sum((item.price for item in items), Decimal("0.00"))
    if deposit:
        trade.pre_credit = trade.total_price
    else:
        trade.auto_cancel_at = created + timedelta(minutes=30)
    return trade, items


def _item(trade: Trade, position: int, status: str, now: datetime) -> TradeItem:
    deposit = trade.type == Trade.Type.DEPOSIT
    return TradeItem(
        trade=trade,
        position=position,
        public_id=f"730-000040-{position + 1}" if not deposit else f"3100000{position + 1}",
        external_id="" if deposit else f"item-{position + 1}",
        status=status,
        error=TRADE_ERRORS.get(status, ""),
        appid=730,
        price=Decimal("12.50"),
        delivery="" if deposit else "standard",
        details=ITEM_DETAILS,
        offer_id=trade.offer_id,
        active_at=trade.active_at,
        hold_end_date=trade.hold_end_date,
        updated_at=now,
    )


def _deposit(*, merchant: Merchant, status: str, now: datetime) -> CryptoDeposit:
    below = status == "below_minimum"
    return CryptoDeposit(
        id=uuid.uuid4(),
        merchant=merchant,
        platform_id=examples.CLIENT_PLATFORM_ID,
        chain="ETH",
        token="USDC",
        address=ETH_ADDRESS,
        tx_hash=TX_HASH,
        from_address="0xA58567EBF1F0FDe3206440B7e2AD38de0B45E05F",
        amount_crypto=Decimal("0.5") if below else Decimal("40"),
        amount_usd=Decimal("0.50") if below else Decimal("40.00"),
        status=status,
        created_at=now - timedelta(minutes=3),
        updated_at=now,
        completed_at=now if status == "completed" else None,
    )


def _withdrawal(*, merchant: Merchant, status: str, now: datetime) -> CryptoWithdrawal:
    sent = status in ("sent", "completed")
    return CryptoWithdrawal(
        id=uuid.uuid4(),
        merchant=merchant,
        platform_id=examples.CLIENT_PLATFORM_ID,
        source=CryptoWithdrawal.Source.CLIENT,
        request_id=f"test-{uuid.uuid4().hex[:12]}",
        chain="ETH",
        token="USDC",
        address=RECIPIENT,
        amount_cents=2500,
        fee_cents=500,
        receive_cents=2000,
        status=status,
        reason=CASHOUT_REASONS.get(status, ""),
        tx_hash=TX_HASH if sent else "",
        created_at=now - timedelta(minutes=3),
        updated_at=now,
        completed_at=now if status == "completed" else None,
    )
