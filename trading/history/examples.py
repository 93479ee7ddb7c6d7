"""Example answers of trade history in the OpenAPI document: pages and single trades of the
withdrawals' and deposits' stories."""

from trading.deposits.examples import CLIENT_DEPOSIT, SELF_SELL
from trading.withdrawals.examples import (
    CLIENT_WITHDRAWAL,
    CLIENT_WITHDRAWAL_LATER,
    SELF_BUY,
    SELF_BUY_IN_HOLD,
)

NEXT_CURSOR = (
    "MjAyNi0xMS0yM1QxNDozNDo1OS40MjIxNzcrMDA6MDB8NDE1YWE2OTUtMGRiNS00ODk5LWFhNjEtY2M5OGVkOGRjZTg0"
)

SECURE_TRADE_PAGE = {"items": [SELF_BUY_IN_HOLD, SELF_SELL], "nextCursor": NEXT_CURSOR}
CLIENT_TRADE_PAGE = {"items": [CLIENT_WITHDRAWAL_LATER, CLIENT_DEPOSIT], "nextCursor": None}

# One trade by its ref: the self buy by its externalId, the client's withdrawal by its id.
SELF_TRADE_REF = SELF_BUY["externalId"]
SELF_TRADE_FOUND = SELF_BUY_IN_HOLD
CLIENT_TRADE_ID = CLIENT_WITHDRAWAL["id"]
CLIENT_TRADE_FOUND = CLIENT_WITHDRAWAL_LATER
