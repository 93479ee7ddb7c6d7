"""The one error catalog: every error key the API can answer with, its code and HTTP status; and
``DomainError``, what services, selectors, tasks and the HTTP layer raise to answer with one.

Codes and keys come from the contract's section 7 and decisions section 6; the few added here for
protocol-level failures (unknown route, wrong method, ...) are listed in docs/errors.md.
``core.api.exceptions`` turns a ``DomainError`` into the API's error envelope.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_FIELDS = 20
FIELDS_NAMED_IN_MESSAGE = 5


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    key: str
    code: int
    status: int
    message: str


_ENTRIES = [
    # Contract section 7.
    ErrorSpec("EXTERNAL_ID_EXISTS", 1, 409, "externalId is already used."),
    ErrorSpec("MISSING_ITEMS", 2, 400, "No items were given."),
    ErrorSpec("INVENTORY_FETCH_FAILED", 3, 424, "The inventory could not be loaded."),
    ErrorSpec("NO_OFFER_FOUND", 4, 400, "There is no valid offer for an item."),
    ErrorSpec("TOO_MANY_ACTIVE_TRADES", 6, 429, "This client already has 5 active deposits."),
    ErrorSpec("USER_NOT_TRADEABLE", 7, 400, "The account cannot trade."),
    ErrorSpec("TOO_MANY_ITEMS", 8, 400, "Too many items."),
    ErrorSpec("ITEMS_UNAVAILABLE", 9, 400, "Some items are no longer available."),
    ErrorSpec("ITEMS_NOT_ACCEPTED", 10, 400, "Some items are not accepted for deposit."),
    ErrorSpec("PRICE_CHANGED", 11, 400, "The price differs from the current price."),
    ErrorSpec("MERCHANT_BALANCE_LOW", 12, 400, "The wallet balance cannot cover this."),
    ErrorSpec("INVALID_TRADEURL", 13, 400, "The trade URL is invalid or was rejected."),
    ErrorSpec("LISTING_NOT_FOUND", 14, 404, "The listing was not found."),
    ErrorSpec("LISTING_PRICE_INVALID", 15, 400, "The listing price is invalid."),
    ErrorSpec("INVALID_LISTING_ID", 16, 400, "The listing id is invalid."),
    ErrorSpec("INSUFFICIENT_ITEM_AMOUNT", 17, 400, "The amount is above what is available."),
    ErrorSpec("EXCEEDS_MAX_AMOUNT", 18, 400, "The amount is above the per-item maximum."),
    ErrorSpec("DEPOSIT_IN_PROGRESS", 19, 409, "Another deposit is processing for this user."),
    ErrorSpec("WITHDRAW_IN_PROGRESS", 20, 409, "Another withdrawal is processing for this user."),
    ErrorSpec("TRADE_NOT_FOUND", 21, 404, "Trade not found."),
    ErrorSpec("TRADE_NOT_CANCELLABLE", 28, 400, "The trade cannot be cancelled."),
    ErrorSpec("ESCROW_NOT_ALLOWED", 29, 400, "The account is under a trade hold."),
    ErrorSpec("INVENTORY_PRIVATE", 30, 400, "The inventory is private."),
    ErrorSpec("PLATFORM_UNAVAILABLE", 31, 424, "The game platform is unavailable; retry."),
    ErrorSpec("QUICK_BUY_UNSUPPORTED_GAME", 32, 400, "Quick withdrawals are for game 730 only."),
    ErrorSpec("PLATFORM_RATE_LIMITED", 33, 424, "The game platform is rate limiting; retry."),
    ErrorSpec("TRADE_CANCEL_UNSUPPORTED", 44, 400, "No item of this trade supports cancel."),
    ErrorSpec("VALIDATION_FAILED", 1001, 400, "Invalid input."),
    ErrorSpec("RATE_LIMITED", 1005, 429, "Rate limit exceeded."),
    ErrorSpec("SERVER_ERROR", 1006, 400, "The history could not be loaded; retry."),
    ErrorSpec("SYSTEM_MAINTENANCE", 1007, 503, "The service is under maintenance."),
    ErrorSpec("NO_BOTS_AVAILABLE", 1010, 503, "No bots are online; retry."),
    ErrorSpec("FLEET_DEGRADED", 1011, 503, "The bot fleet is degraded; retry."),
    ErrorSpec("DEPOSITS_PAUSED", 1014, 503, "Deposits for this game are paused."),
    ErrorSpec("UNAUTHORIZED", 1100, 401, "Authentication required: send an api-key header."),
    ErrorSpec("INVALID_TOKEN", 1102, 401, "The client token is invalid or expired."),
    ErrorSpec("MISSING_BEARER", 1108, 401, "The Authorization header is missing."),
    ErrorSpec("FORBIDDEN", 1300, 403, "This trade is not a self trade of this merchant."),
    ErrorSpec("MERCHANT_API_KEY_REQUIRED", 1300, 403, "An admin key cannot be used here."),
    ErrorSpec("ACCOUNT_DISABLED", 1301, 403, "The account is not active."),
    ErrorSpec("USER_NOT_FOUND", 1310, 404, "No platform user is behind this trade URL."),
    ErrorSpec("INVALID_AMOUNT", 1601, 400, "The amount must be above zero."),
    ErrorSpec("INSTANT_DEPOSITS_DISABLED", 1622, 400, "Instant deposits are off."),
    ErrorSpec("MERCHANT_NO_CALLBACK_URL", 1705, 400, "No active callback URL is configured."),
    ErrorSpec("MISSING_API_KEY", 1900, 401, "The api-key header is missing."),
    ErrorSpec("INVALID_API_KEY", 1901, 401, "The API key is unknown or revoked."),
    ErrorSpec("API_KEY_SCOPE_DENIED", 1903, 403, "The API key lacks the CORE_ACCESS scope."),
    ErrorSpec("API_KEY_IP_DENIED", 1904, 403, "The request IP is not whitelisted for this key."),
    ErrorSpec("INSUFFICIENT_SCOPE", 1908, 403, "The API key lacks the LEDGER_READ scope."),
    ErrorSpec("NO_API_SECRET_CONFIGURED", 1915, 400, "No active API secret to sign tokens."),
    ErrorSpec("ITEM_NOT_FOUND", 2201, 404, "No trade matches."),
    ErrorSpec("ONCHAIN_DISABLED", 2500, 503, "Crypto is unavailable in this environment."),
    ErrorSpec("ONCHAIN_MERCHANT_NOT_VERIFIED", 2522, 403, "The merchant is not verified."),
    ErrorSpec("ONCHAIN_ADDRESS_CAPACITY", 2523, 503, "Too many open accounts; retry later."),
    # Decisions section 6.
    ErrorSpec("ITEM_OVERSTOCKED", 45, 409, "The service's stock of an item is full."),
    ErrorSpec("TRADE_CANCEL_TOO_SOON", 46, 400, "The item is younger than 30 minutes."),
    ErrorSpec("TRANSACTION_NOT_FOUND", 3001, 404, "Transaction not found."),
    ErrorSpec("INVALID_TRANSITION", 3002, 409, "The event is illegal in the current state."),
    ErrorSpec("INSUFFICIENT_BALANCE", 3003, 400, "The wallet balance is too low."),
    ErrorSpec("ONCHAIN_WITHDRAW_INVALID_ADDRESS", 3004, 400, "The address is invalid."),
    ErrorSpec("ONCHAIN_WITHDRAW_BELOW_MIN", 3005, 400, "The amount is below the minimum."),
    ErrorSpec("VERIFICATION_ALREADY_VERIFIED", 3006, 409, "Already verified."),
    ErrorSpec("VERIFICATION_IN_PROGRESS", 3007, 409, "A verification is in progress."),
    ErrorSpec("VERIFICATION_NOT_AVAILABLE", 3008, 503, "Verification is unavailable."),
    ErrorSpec("CALLBACK_URL_TEST_FAILED", 3009, 400, "The callback URL did not accept the test."),
    ErrorSpec("WEBHOOK_EVENT_NOT_FOUND", 3010, 404, "Webhook event not found."),
    ErrorSpec(
        "VERIFICATION_LINK_DENIED", 3011, 403, "The accounts are not known to be one person."
    ),
    # The identity provider's notifications (docs/decisions.md, "Sumsub").
    ErrorSpec("PROVIDER_SIGNATURE_INVALID", 3012, 401, "The notification's signature is invalid."),
    ErrorSpec("PROVIDER_NOTIFICATION_REPLAYED", 3013, 409, "This notification was already taken."),
    # Protocol-level failures every HTTP API has (docs/errors.md).
    ErrorSpec("INTERNAL_ERROR", 1000, 500, "Unexpected error; it was logged with the requestId."),
    ErrorSpec("NOT_FOUND", 1002, 404, "No such endpoint."),
    ErrorSpec("METHOD_NOT_ALLOWED", 1003, 405, "Method not allowed on this endpoint."),
    ErrorSpec("UNSUPPORTED_MEDIA_TYPE", 1004, 415, "Send the body as application/json."),
    ErrorSpec("SERVICE_UNAVAILABLE", 1008, 503, "A dependency is unavailable; retry."),
    ErrorSpec(
        "TRANSACTION_CONFLICT", 1009, 409, "A concurrent request got in the way; nothing changed."
    ),
    # Idempotency-Key (docs/decisions.md, "Idempotency-Key"): after the 10xx series' last code.
    ErrorSpec(
        "IDEMPOTENCY_KEY_IN_USE", 1015, 409, "A request with this Idempotency-Key is still running."
    ),
    ErrorSpec(
        "IDEMPOTENCY_KEY_REUSED",
        1016,
        400,
        "This Idempotency-Key was used for another request (another endpoint or body).",
    ),
]

CATALOG: dict[str, ErrorSpec] = {entry.key: entry for entry in _ENTRIES}


class DomainError(Exception):
    """A refusal with its catalog key (a ``KeyError`` if the catalog has none), the message for
    the caller (the catalog's by default), ``details`` and ``fields`` for the caller to act on,
    and ``retry_after`` seconds when trying again later can succeed."""

    def __init__(
        self,
        key: str,
        message: str | None = None,
        *,
        details: Mapping[str, Any] | None = None,
        fields: Mapping[str, str] | None = None,
        retry_after: int | None = None,
    ) -> None:
        self.spec: ErrorSpec = CATALOG[key]
        self.key = key
        self.message = message if message is not None else self.spec.message
        self.details = dict(details) if details is not None else None
        self.fields = dict(fields) if fields is not None else None
        self.retry_after = retry_after
        super().__init__(self.message)


def validation_error(fields: Mapping[str, str]) -> DomainError:
    """VALIDATION_FAILED with at most 20 dotted paths, the message naming the first five."""
    kept = dict(list(fields.items())[:MAX_FIELDS])
    named = list(kept)[:FIELDS_NAMED_IN_MESSAGE]
    more = len(fields) - len(named)
    message = "Invalid fields: " + ", ".join(named) + (f" (and {more} more)" if more > 0 else "")
    return DomainError("VALIDATION_FAILED", message, fields=kept)
