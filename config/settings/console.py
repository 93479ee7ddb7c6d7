"""The staff console's home (docs/admin.md): what has waited longer than expected, and the
thresholds of the other warnings it shows."""

import json
import os
from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import env_int
from config.settings.outside import DEPOSIT_OFFER_MINUTES, STEAM_DELIVERY_OFFER_MINUTES

# The home counts what has waited longer than expected, in minutes: a trade by kind and state
# since its last move (in its hold: past the hold's end), a cashout by state since it was asked
# for. CONSOLE_EXPECTED_MINUTES overrides some as JSON, e.g. {"withdraw.pending": 240}.
CONSOLE_EXPECTED_MINUTES: dict[str, int] = {
    "withdraw.initiated": 10,  # the merchant's approval is answered or timed out within a minute
    "withdraw.pending": 120,  # bought: the seller's offer to the recipient
    "withdraw.active": STEAM_DELIVERY_OFFER_MINUTES + 60,  # an unanswered offer is cancelled
    "withdraw.hold": 30,  # the hold sweep runs every minute
    "deposit.initiated": 35,  # the offer is retried each minute and given up after 30
    "deposit.pending": 35,
    "deposit.active": DEPOSIT_OFFER_MINUTES + 30,  # an ignored offer is withdrawn
    "deposit.hold": 30,
    "cashout.awaiting_approval": 10,  # the merchant's approval callback
    "cashout.in_review": 60,  # staff's review
    "cashout.approved": 15,  # the broadcast sweep runs every 10 s
}
_expected_overrides = json.loads(os.environ.get("CONSOLE_EXPECTED_MINUTES") or "{}")
if set(_expected_overrides) - set(CONSOLE_EXPECTED_MINUTES):
    raise ImproperlyConfigured(
        f"CONSOLE_EXPECTED_MINUTES knows only {', '.join(CONSOLE_EXPECTED_MINUTES)}."
    )
CONSOLE_EXPECTED_MINUTES |= {key: int(value) for key, value in _expected_overrides.items()}
# A supplier whose balance (USD) is below this is on the console's home.
CONSOLE_SUPPLIER_LOW_BALANCE = Decimal(os.environ.get("CONSOLE_SUPPLIER_LOW_BALANCE", "100"))
# A chain's deposit scanner further behind than this (seconds) is on the console's home.
CONSOLE_SCANNER_LAG_SECONDS = env_int("CONSOLE_SCANNER_LAG_SECONDS", 300)
# Webhook events given up on (failed) within this many days put their merchant on the home.
CONSOLE_WEBHOOK_FAILED_DAYS = env_int("CONSOLE_WEBHOOK_FAILED_DAYS", 3)
# Beat runs check_wallet this often and stores the result; the home flags an older one.
WALLET_CHECK_SECONDS = env_int("WALLET_CHECK_SECONDS", 3600)
