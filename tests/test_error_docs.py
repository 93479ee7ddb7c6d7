"""docs/errors.md is the catalog in core/errors.py, row for row, and both keep the contract's
codes (section 7) and the decisions' additions (section 6)."""

import re
from pathlib import Path

import pytest

from core import errors
from core.errors import CATALOG

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "errors.md"
CONTRACT = ROOT.parent / "shared" / "spec" / "trading-service-api.md"

ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|\s*$")

# Contract section 7: code, key, HTTP status where the contract gives one (None: left open).
CONTRACT_CODES: list[tuple[int, str, int | None]] = [
    (1, "EXTERNAL_ID_EXISTS", None),
    (2, "MISSING_ITEMS", None),
    (3, "INVENTORY_FETCH_FAILED", None),
    (4, "NO_OFFER_FOUND", None),
    (6, "TOO_MANY_ACTIVE_TRADES", 429),
    (7, "USER_NOT_TRADEABLE", None),
    (8, "TOO_MANY_ITEMS", None),
    (9, "ITEMS_UNAVAILABLE", None),
    (10, "ITEMS_NOT_ACCEPTED", None),
    (11, "PRICE_CHANGED", None),
    (12, "MERCHANT_BALANCE_LOW", None),
    (13, "INVALID_TRADEURL", None),
    (14, "LISTING_NOT_FOUND", None),
    (15, "LISTING_PRICE_INVALID", None),
    (16, "INVALID_LISTING_ID", None),
    (17, "INSUFFICIENT_ITEM_AMOUNT", None),
    (18, "EXCEEDS_MAX_AMOUNT", None),
    (19, "DEPOSIT_IN_PROGRESS", None),
    (20, "WITHDRAW_IN_PROGRESS", None),
    (21, "TRADE_NOT_FOUND", 404),
    (28, "TRADE_NOT_CANCELLABLE", None),
    (29, "ESCROW_NOT_ALLOWED", None),
    (30, "INVENTORY_PRIVATE", None),
    (31, "PLATFORM_UNAVAILABLE", None),
    (32, "QUICK_BUY_UNSUPPORTED_GAME", None),
    (33, "PLATFORM_RATE_LIMITED", None),
    (44, "TRADE_CANCEL_UNSUPPORTED", None),
    (1001, "VALIDATION_FAILED", 400),
    (1005, "RATE_LIMITED", 429),
    (1006, "SERVER_ERROR", 400),
    (1007, "SYSTEM_MAINTENANCE", 503),
    (1010, "NO_BOTS_AVAILABLE", None),
    (1011, "FLEET_DEGRADED", 503),
    (1014, "DEPOSITS_PAUSED", 503),
    (1100, "UNAUTHORIZED", 401),
    (1102, "INVALID_TOKEN", None),
    (1108, "MISSING_BEARER", None),
    (1300, "FORBIDDEN", None),
    (1300, "MERCHANT_API_KEY_REQUIRED", 403),
    (1301, "ACCOUNT_DISABLED", 403),
    (1310, "USER_NOT_FOUND", 404),
    (1601, "INVALID_AMOUNT", None),
    (1622, "INSTANT_DEPOSITS_DISABLED", None),
    (1705, "MERCHANT_NO_CALLBACK_URL", None),
    (1900, "MISSING_API_KEY", 401),
    (1901, "INVALID_API_KEY", 401),
    (1903, "API_KEY_SCOPE_DENIED", 403),
    (1904, "API_KEY_IP_DENIED", None),
    (1908, "INSUFFICIENT_SCOPE", None),
    (1915, "NO_API_SECRET_CONFIGURED", None),
    (2201, "ITEM_NOT_FOUND", None),
    (2500, "ONCHAIN_DISABLED", 503),
    (2522, "ONCHAIN_MERCHANT_NOT_VERIFIED", 403),
    (2523, "ONCHAIN_ADDRESS_CAPACITY", 503),
]

# Decisions section 6: new codes with their statuses, and the statuses it fixes for open cells.
DECISION_CODES = {
    "ITEM_OVERSTOCKED": (45, 409),
    "TRANSACTION_NOT_FOUND": (3001, 404),
    "INVALID_TRANSITION": (3002, 409),
    "INSUFFICIENT_BALANCE": (3003, 400),
    "ONCHAIN_WITHDRAW_INVALID_ADDRESS": (3004, 400),
    "ONCHAIN_WITHDRAW_BELOW_MIN": (3005, 400),
    "VERIFICATION_ALREADY_VERIFIED": (3006, 409),
    "VERIFICATION_IN_PROGRESS": (3007, 409),
    "VERIFICATION_NOT_AVAILABLE": (3008, 503),
    "CALLBACK_URL_TEST_FAILED": (3009, 400),
    "WEBHOOK_EVENT_NOT_FOUND": (3010, 404),
}
DECISION_STATUSES = {
    "EXTERNAL_ID_EXISTS": 409,
    "DEPOSIT_IN_PROGRESS": 409,
    "WITHDRAW_IN_PROGRESS": 409,
    "INVENTORY_FETCH_FAILED": 424,
    "PLATFORM_UNAVAILABLE": 424,
    "PLATFORM_RATE_LIMITED": 424,
}


def doc_rows() -> list[tuple[int, str, int, str]]:
    rows = []
    for line in DOC.read_text().splitlines():
        match = ROW.match(line)
        if match:
            code, key, status, meaning = match.groups()
            rows.append((int(code), key, int(status), meaning))
    return rows


def test_every_table_row_parses():
    table_lines = [
        line
        for line in DOC.read_text().splitlines()
        if line.startswith("|") and not line.startswith(("| Code", "|---"))
    ]
    assert table_lines
    assert len(table_lines) == len(doc_rows())


def test_docs_table_equals_the_catalog():
    documented = {(code, key, status) for code, key, status, _ in doc_rows()}
    catalog = {(spec.code, spec.key, spec.status) for spec in CATALOG.values()}
    assert documented - catalog == set(), "documented but not in the catalog"
    assert catalog - documented == set(), "in the catalog but not documented"


def test_docs_meanings_are_the_catalog_messages():
    meanings = {key: meaning for _, key, _, meaning in doc_rows()}
    assert meanings == {key: spec.message for key, spec in CATALOG.items()}


def test_each_key_once_in_the_docs_and_the_catalog():
    keys = [key for _, key, _, _ in doc_rows()]
    assert len(keys) == len(set(keys))
    assert len(errors._ENTRIES) == len(CATALOG)


def test_docs_are_sorted_by_code():
    codes = [code for code, _, _, _ in doc_rows()]
    assert codes == sorted(codes)


def test_only_1300_is_shared_by_two_keys():
    by_code: dict[int, list[str]] = {}
    for spec in CATALOG.values():
        by_code.setdefault(spec.code, []).append(spec.key)
    shared = {code: sorted(keys) for code, keys in by_code.items() if len(keys) > 1}
    assert shared == {1300: ["FORBIDDEN", "MERCHANT_API_KEY_REQUIRED"]}


@pytest.mark.parametrize(("code", "key", "status"), CONTRACT_CODES)
def test_catalog_keeps_the_contract_codes(code, key, status):
    spec = CATALOG[key]
    assert spec.code == code
    if status is not None:
        assert spec.status == status


@pytest.mark.parametrize(("key", "code_status"), DECISION_CODES.items())
def test_catalog_has_the_decision_codes(key, code_status):
    assert (CATALOG[key].code, CATALOG[key].status) == code_status


@pytest.mark.parametrize(("key", "status"), DECISION_STATUSES.items())
def test_catalog_uses_the_decision_statuses(key, status):
    assert CATALOG[key].status == status


def test_service_own_codes():
    own = {k: (CATALOG[k].code, CATALOG[k].status) for k in CATALOG}
    assert own["INTERNAL_ERROR"] == (1000, 500)
    assert own["NOT_FOUND"] == (1002, 404)
    assert own["METHOD_NOT_ALLOWED"] == (1003, 405)
    assert own["UNSUPPORTED_MEDIA_TYPE"] == (1004, 415)
    assert own["SERVICE_UNAVAILABLE"] == (1008, 503)
    assert own["TRANSACTION_CONFLICT"] == (1009, 409)
    assert own["IDEMPOTENCY_KEY_IN_USE"] == (1015, 409)
    assert own["IDEMPOTENCY_KEY_REUSED"] == (1016, 400)
    assert CATALOG["TRADE_CANCEL_TOO_SOON"].code == 46


def test_catalog_statuses_are_error_statuses():
    assert all(400 <= spec.status <= 599 for spec in CATALOG.values())
    assert all(spec.message for spec in CATALOG.values())


def test_pinned_contract_table_matches_the_contract_file():
    """The pinned copy above is the contract's section 7, where the contract is checked out."""
    if not CONTRACT.exists():
        pytest.skip("the shared spec is not checked out beside the repository")
    text = CONTRACT.read_text()
    section = text[text.index("## 7. Errors") : text.index("## 8.")]
    found = []
    for line in section.splitlines():
        match = re.match(r"^\|\s*(\d+)\s*\|\s*([A-Z_]+)\s*\|[^|]*\|\s*(\d{3})?\s*\|\s*$", line)
        if match:
            code, key, status = match.groups()
            found.append((int(code), key, int(status) if status else None))
    assert found == CONTRACT_CODES
