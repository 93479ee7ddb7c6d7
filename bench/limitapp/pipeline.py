"""The pipeline limit (issue 43): what a buy must still do after its request's transaction, done
the least way, by one Celery task per buy (``POST /limit/buy-pipeline`` hands it the buy's
``trade.initiated`` event once the request's transaction committed). Each step is durable before
the next starts, as in the service:

1. the approval callback: the event posted, signed (Standard Webhooks), to the account's
   callback URL (bench/receiver.py approves every one);
2. the answer recorded, one transaction: the approval delivered, the trade pending, the
   ``trade.pending`` event in the outbox;
3. the purchase recorded, one transaction: the listing's unit taken (what the sandbox
   marketplace does for the service) and the item's purchase;
4. the ``trade.pending`` webhook posted, signed, and its delivery recorded (one statement).

Posts go outside transactions, over the worker thread's keep-alive connection. Every write is
guarded by the state it moves from, so a task run again (``acks_late``) may post again (receivers
de-duplicate on ``webhook-id``) but never records twice. What the service does beyond this (the
approval's attempt rows, leases, audit events, retries) is bench/README.md's to list."""

import base64
import hashlib
import threading
import uuid
from datetime import UTC, datetime

import orjson
import requests
from django.conf import settings
from django.db import connection, transaction
from standardwebhooks.webhooks import Webhook

from limitapp import ACCOUNTS
from limitapp.celery import app

# As the service's attempts: connecting 3 s, the answer 10 s.
TIMEOUT = (3.05, 10)


def account_secret(account: int) -> str:
    """The account's webhook secret (``whsec_`` and 32 bytes of base64), kept in memory as the
    limit app keeps its keys."""
    digest = hashlib.sha256(f"limit-account-{account}".encode()).digest()
    return "whsec_" + base64.b64encode(digest).decode()


_SIGNERS = {account: Webhook(account_secret(account)) for account in range(ACCOUNTS)}
_thread = threading.local()


def _session() -> requests.Session:
    """This worker thread's keep-alive connection to the callback URL."""
    session: requests.Session | None = getattr(_thread, "session", None)
    if session is None:
        session = _thread.session = requests.Session()
    return session


def signed_post(account: int, event_id: str, body: str) -> requests.Response:
    """One signed POST of an event, never following redirects."""
    sent_at = datetime.now(UTC)
    headers = {
        "Content-Type": "application/json",
        "webhook-id": event_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": _SIGNERS[account].sign(event_id, sent_at, body),
    }
    return _session().post(
        settings.LIMIT_CALLBACK_URL,
        data=body.encode(),
        headers=headers,
        timeout=TIMEOUT,
        allow_redirects=False,
    )


def approved(answer: requests.Response) -> bool:
    """A 2xx answer approves unless its JSON body says ``{"action": "reject"}``."""
    if not 200 <= answer.status_code < 300:
        return False
    decided = orjson.loads(answer.content) if answer.content else {}
    return not (isinstance(decided, dict) and decided.get("action") == "reject")


def trade_event(
    *, event_id: str, kind: str, sequence: int, trade: dict[str, object]
) -> dict[str, object]:
    """An event as the service's webhooks carry one: the trade as it stands after the change."""
    return {
        "id": event_id,
        "type": kind,
        "createdAt": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "sequence": sequence,
        "trade": trade,
    }


_EVENT = "SELECT account_id, trade_id, status, payload::text FROM bench_limit_event WHERE id = %s"
_DELIVERED = (
    "UPDATE bench_limit_event SET status = 'delivered' WHERE id = %s AND status = 'pending'"
)
_TRADE_PENDING = (
    "UPDATE bench_limit_trade SET status = 'pending' WHERE id = %s AND status = 'initiated'"
)
_EVENT_INSERT = (
    "INSERT INTO bench_limit_event (id, account_id, trade_id, kind, payload)"
    " VALUES (%s, %s, %s, 'trade.pending', %s::jsonb)"
)
_BOUGHT = (
    "UPDATE bench_limit_item SET purchase_ref = %s WHERE trade_id = %s AND purchase_ref = ''"
    " RETURNING listing"
)
_TAKEN = "UPDATE bench_limit_listing SET amount = amount - 1 WHERE id = %s AND amount >= 1"
# Only when a task runs again after its approval was recorded (no index: a rare path).
_UNDELIVERED = (
    "SELECT id, payload::text FROM bench_limit_event WHERE trade_id = %s AND status = 'pending'"
)


class ApprovalNotGivenError(Exception):
    """The receiver did not approve: the bench's receiver always does, so the bench is broken."""


@app.task(name="limit.buy_pipeline", acks_late=True, time_limit=180, soft_time_limit=165)
def buy_pipeline(event_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_EVENT, [event_id])
        account, trade_id, status, body = cursor.fetchone()
    if status == "pending":
        answer = signed_post(account, event_id, body)
        if not approved(answer):
            raise ApprovalNotGivenError(f"{event_id}: HTTP {answer.status_code}")
        due = [_approval_record(event_id=event_id, account=account, trade_id=trade_id, body=body)]
    else:
        with connection.cursor() as cursor:
            cursor.execute(_UNDELIVERED, [trade_id])
            due = cursor.fetchall()
    _purchase_record(trade_id)
    for next_id, next_body in due:
        if 200 <= signed_post(account, str(next_id), next_body).status_code < 300:
            with connection.cursor() as cursor:
                cursor.execute(_DELIVERED, [next_id])


def _approval_record(
    *, event_id: str, account: int, trade_id: uuid.UUID, body: str
) -> tuple[str, str]:
    """The approval delivered, the trade pending and its ``trade.pending`` event, in one
    transaction; returns that event (id, body)."""
    initiated = orjson.loads(body)
    trade = initiated["trade"]
    trade["status"] = "pending"
    for item in trade["items"]:
        item["status"] = "pending"
    pending_id = str(uuid.uuid4())
    pending = orjson.dumps(
        trade_event(event_id=pending_id, kind="trade.pending", sequence=1, trade=trade)
    ).decode()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_DELIVERED, [event_id])
        cursor.execute(_TRADE_PENDING, [trade_id])
        cursor.execute(_EVENT_INSERT, [pending_id, account, trade_id, pending])
    return pending_id, pending


def _purchase_record(trade_id: uuid.UUID) -> None:
    """The item's purchase and the listing's unit it took, in one transaction."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_BOUGHT, [f"limit-{uuid.uuid4()}", trade_id])
        for (listing,) in cursor.fetchall():
            cursor.execute(_TAKEN, [listing])
