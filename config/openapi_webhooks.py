"""The webhooks the service sends, declared in the OpenAPI document's ``webhooks`` map (OpenAPI
3.1: a path item per webhook name; docs/decisions.md, "Webhooks in the OpenAPI document"):
each event family's body as the outbox writes it (``merchants.webhooks.outbox``), the approval
callbacks with the answer they take, and the callback URL's test event. A postprocessing hook of
the composition root: it names the apps' response shapes, which ``core.api`` may not import.
The guide for receivers is docs/webhooks.md (served at /docs/webhooks);
``tests/test_webhook_schemas.py`` checks what the service really sends against these schemas."""

from datetime import datetime
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from drf_spectacular.plumbing import ComponentRegistry

from core.api.docs import WEBHOOKS_GUIDE
from core.api.schema_shapes import shape_schema
from core.shapes import Doc
from crypto.representations import DepositOut, WithdrawalOut
from trading.trades.shapes import TradeOut

GUIDE = WEBHOOKS_GUIDE.link()

# The event types: one per status of the subject (tests/test_webhook_schemas.py checks
# them against the domain's statuses).
TradeEventType = Literal[
    "trade.initiated",
    "trade.pending",
    "trade.active",
    "trade.hold",
    "trade.completed",
    "trade.failed",
    "trade.canceled",
    "trade.declined",
    "trade.reverted",
    "trade.updated",
]
DepositEventType = Literal[
    "crypto_deposit.pending",
    "crypto_deposit.completed",
    "crypto_deposit.below_minimum",
    "crypto_deposit.frozen",
    "crypto_deposit.refunded",
    "crypto_deposit.failed",
]
WithdrawalEventType = Literal[
    "crypto_withdrawal.awaiting_approval",
    "crypto_withdrawal.in_review",
    "crypto_withdrawal.approved",
    "crypto_withdrawal.sent",
    "crypto_withdrawal.completed",
    "crypto_withdrawal.failed",
    "crypto_withdrawal.rejected",
    "crypto_withdrawal.cancelled",
]
EventId = Annotated[
    str, Doc("The event's id, the same on every retry: de-duplicate on it.", format="uuid")
]
Sequence = Annotated[
    int, Doc("Increases by one per change of the subject (trade, deposit, cashout): order on it.")
]
TestMark = Annotated[
    Literal[True],
    Doc(
        "Only on test events (`POST /sandbox/webhooks/test`): the subject is made up and your "
        "answer decides nothing. Real events never carry it."
    ),
]


class TradeWebhook(TypedDict):
    id: EventId
    type: TradeEventType
    createdAt: datetime
    sequence: Sequence
    trade: TradeOut
    test: NotRequired[TestMark]


class CryptoDepositWebhook(TypedDict):
    id: EventId
    type: DepositEventType
    createdAt: datetime
    sequence: Sequence
    deposit: DepositOut
    test: NotRequired[TestMark]


class CryptoWithdrawalWebhook(TypedDict):
    id: EventId
    type: WithdrawalEventType
    createdAt: datetime
    sequence: Sequence
    withdrawal: WithdrawalOut
    test: NotRequired[TestMark]


class CallbackUrlTest(TypedDict):
    test: Literal[True]


class ApprovalAnswer(TypedDict, total=False):
    action: Annotated[
        Literal["approve", "reject"],
        Doc('"reject" refuses the withdrawal; anything else approves.'),
    ]
    reason: Annotated[str, Doc("Why it was rejected (kept, at most 200 characters).")]


SIGNATURE_HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "schema": {"type": "string"},
        "description": "The event's `id` (`test_...` for the URL test): de-duplicate on it.",
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
        "description": "Unix seconds when this attempt was signed; refuse one far from your clock.",
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "schema": {"type": "string"},
        "description": (
            "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with your `whsec_` secret; two "
            "space-separated signatures while a rotated secret is still valid (Standard Webhooks)."
        ),
    },
]

DELIVERED = {
    "2XX": {"description": "Delivered: the event is not sent again."},
    "410": {"description": "Gone: your callback URL is disabled; nothing more is sent to it."},
    "default": {
        "description": (
            "Anything else (or no answer in 10 s): retried about 72 hours (30 s, 1 min, 2 min, "
            "5 min, 10 min, 30 min, 1 h, 2 h, 4 h, then every 6 h; each +-10 %), then failed."
        )
    },
}
APPROVAL_ANSWERS = {
    "2XX": {
        "description": 'Approved, unless the body is `{"action": "reject"}`.',
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ApprovalAnswer"}}
        },
    },
    "4XX": {"description": "Rejected (except 408 and 429, which count as failed attempts)."},
    "410": {"description": "Rejected, and your callback URL disabled."},
    "default": {
        "description": (
            "5xx, 408, 429, a timeout (10 s) or no connection: a failed attempt. Three fail "
            "(2 s and 5 s apart): the withdrawal fails with `APPROVAL_TIMEOUT`, its money back."
        )
    },
}


ON_DEMAND = "In the sandbox, `POST /sandbox/webhooks/test` sends one now, marked `test: true`."


def _operation(
    *, summary: str, description: str, body: str, responses: dict[str, Any], on_demand: bool = True
) -> dict[str, Any]:
    extra = f" {ON_DEMAND}" if on_demand else ""
    return {
        "post": {
            "summary": summary,
            "description": f"{description}\n\nThe receiver's guide: {GUIDE}.{extra}",
            "parameters": SIGNATURE_HEADERS,
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}
                },
            },
            "responses": responses,
        }
    }


WEBHOOKS = {
    "trade": _operation(
        summary="A trade changed",
        description=(
            "`trade.<status>` when a trade's status changes (`trade.updated` when an item "
            "changed and the status did not), with the trade as `GET /secure/trades/{id}` shows "
            "it. Sent for client and self trades, deposits and withdrawals."
        ),
        body="TradeWebhook",
        responses=DELIVERED,
    ),
    "tradeApproval": _operation(
        summary="Approve a withdrawal (approval callback)",
        description=(
            "The `trade.initiated` event of a withdrawal (client, quick, self buy): the money is "
            "locked and nothing is bought until you answer. A 2xx approves unless its body is "
            '`{"action": "reject", "reason": "..."}`. (The `trade.initiated` of a deposit is '
            "informational: it is a `trade` event.)"
        ),
        body="TradeWebhook",
        responses=APPROVAL_ANSWERS,
    ),
    "cryptoDeposit": _operation(
        summary="A crypto deposit changed",
        description="`crypto_deposit.<status>` on each status change of a user's crypto deposit.",
        body="CryptoDepositWebhook",
        responses=DELIVERED,
    ),
    "cryptoWithdrawal": _operation(
        summary="A crypto cashout changed",
        description="`crypto_withdrawal.<status>` on each status change of a crypto cashout.",
        body="CryptoWithdrawalWebhook",
        responses=DELIVERED,
    ),
    "cryptoWithdrawalApproval": _operation(
        summary="Approve a client's crypto cashout (approval callback)",
        description=(
            "The `crypto_withdrawal.awaiting_approval` event of a client's cashout: answered as "
            "the withdrawal approval is."
        ),
        body="CryptoWithdrawalWebhook",
        responses=APPROVAL_ANSWERS,
    ),
    "callbackUrlTest": _operation(
        summary="Test a new callback URL",
        description=(
            "Sent, signed, when a callback URL is set: the URL is saved only if it answers 2xx "
            "within 8 seconds."
        ),
        body="CallbackUrlTest",
        responses={"2XX": {"description": "The URL is saved."}},
        on_demand=False,
    ),
}
PAYLOADS = (
    TradeWebhook,
    CryptoDepositWebhook,
    CryptoWithdrawalWebhook,
    CallbackUrlTest,
    ApprovalAnswer,
)


def add_webhooks(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: ``webhooks`` and the components their bodies name."""
    registry = ComponentRegistry()
    for payload in PAYLOADS:
        shape_schema(payload, registry)
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in registry.build({}).get("schemas", {}).items():
        schemas.setdefault(name, schema)
    result["webhooks"] = WEBHOOKS
    return result
