"""Bodies of the ``/sandbox/`` helpers."""

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.validators import RegexValidator, URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.serializers import (
    OnlyWhen,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from crypto.networks import CHAINS, TOKENS
from merchants.tradeurls import PLATFORM_ID_PATTERN
from sandbox.services.crypto import MAX_AMOUNT
from sandbox.services.testevents import EVENT_TYPES, TRADE_TYPES
from trading.games import GAMES, PHASES
from trading.platform.base import TradeUrlState


class SandboxInventoryItemIn(StrictSerializer):
    marketHashName = StrictCharField(max_length=200)
    game = StrictChoiceField(choices=list(GAMES), required=False, default=730)
    amount = StrictIntegerField(min_value=1, max_value=1_000_000, required=False, default=1)
    tradable = StrictBooleanField(required=False, default=True)
    wear = StrictDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )
    # Left out: no phase (the document cannot give "" as a default the choices refuse).
    phase = StrictChoiceField(choices=list(PHASES), required=False)
    assetId = StrictCharField(max_length=32, required=False)


class SandboxPlatformUserIn(StrictSerializer):
    platformId = StrictCharField(
        validators=[RegexValidator(PLATFORM_ID_PATTERN, "Must be 76561 followed by 12 digits.")]
    )
    tradeUrlState = StrictChoiceField(
        choices=[int(s) for s in TradeUrlState], required=False, allow_null=True
    )
    antiCheatBanned = StrictBooleanField(required=False, default=False)
    gameBans = StrictIntegerField(min_value=0, max_value=100, required=False, default=0)
    economyBan = StrictChoiceField(
        choices=["none", "probation", "banned"], required=False, default="none"
    )
    escrowDays = StrictIntegerField(min_value=0, max_value=30, required=False, default=0)
    inventoryPrivate = StrictBooleanField(required=False, default=False)
    # The list may be null ("not given"), its items may not: ``many=True`` would hand allow_null
    # down to the items as well.
    inventory = serializers.ListField(
        child=SandboxInventoryItemIn(), required=False, allow_null=True, default=None
    )
    fault = StrictChoiceField(
        choices=["none", "unavailable", "rate_limited", "error"], required=False, default="none"
    )


class SandboxBotsIn(StrictSerializer):
    status = StrictChoiceField(choices=["online", "degraded", "offline"])


class SandboxTradeEventIn(StrictSerializer):
    event = StrictChoiceField(
        choices=[
            "offer_created",
            "offer_sent",
            "accepted",
            "declined",
            "hold_ended",
            "reversed",
            "failed",
            "purchased",
            "purchase_failed",
        ]
    )
    itemIds = serializers.ListField(
        child=StrictCharField(min_length=1, max_length=256), required=False, max_length=250
    )


class ClockAdvanceIn(StrictSerializer):
    minutes = StrictIntegerField(min_value=1, max_value=60 * 24 * 366)


# At most MAX_AMOUNT (1e9) as a number; as text, at most 9 digits before the point.
_DECIMAL_TEXT = r"\A[0-9]{1,9}(\.[0-9]{1,30})?\Z"


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "pattern": _DECIMAL_TEXT.replace("\\A", "^").replace("\\Z", "$")},
            {"type": "number", "minimum": 0, "maximum": int(MAX_AMOUNT)},
        ],
        "description": (
            "a decimal string (exact) or a JSON number; above 0 and with at most the token's "
            "decimals on that chain, else INVALID_AMOUNT"
        ),
    }
)
class TokenAmountField(serializers.Field):
    """A token amount as a decimal string (``"12.5"``) or a JSON number, kept exact. Whether it
    is above 0 and fits the token's decimals is the service's rule (1601 INVALID_AMOUNT)."""

    default_error_messages = {
        "invalid": f"A decimal amount from 0 to {MAX_AMOUNT}, as a string or a number."
    }

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool) or not isinstance(data, (str, int, Decimal)):
            self.fail("invalid")
        if isinstance(data, str) and not re.fullmatch(_DECIMAL_TEXT, data):
            self.fail("invalid")
        try:
            value = Decimal(data)
        except InvalidOperation:
            self.fail("invalid")
        if not value.is_finite() or not 0 <= value <= MAX_AMOUNT:
            self.fail("invalid")
        return value

    def to_representation(self, value: Any) -> str:
        return str(value)


class SandboxTransferIn(StrictSerializer):
    chain = StrictChoiceField(choices=list(CHAINS))
    token = StrictChoiceField(choices=list(TOKENS))
    address = StrictCharField(min_length=1, max_length=100)
    amount = TokenAmountField()
    confirmations = StrictIntegerField(min_value=0, max_value=1_000_000, required=False, default=0)
    # The sender, named as the API names it; random when not given.
    locals()["from"] = StrictCharField(min_length=1, max_length=100, required=False)


class SandboxConfirmationsIn(StrictSerializer):
    confirmations = StrictIntegerField(min_value=0, max_value=1_000_000)


class SandboxChainIn(StrictSerializer):
    paused = StrictBooleanField(required=False)
    failBroadcasts = StrictBooleanField(required=False)


class SandboxVerificationDecideIn(StrictSerializer):
    status = StrictChoiceField(choices=["ACCEPTED", "REJECTED"])


class SandboxIdentityProviderIn(StrictSerializer):
    status = StrictChoiceField(choices=["online", "offline"])


class SandboxAutopilotIn(StrictSerializer):
    enabled = StrictBooleanField()


class SandboxWebhookTestIn(StrictSerializer):
    type = StrictChoiceField(choices=list(EVENT_TYPES))
    # As a callback URL may be (its column's size); any host in the sandbox, as callbacks are.
    url = StrictCharField(
        max_length=500, required=False, validators=[URLValidator(schemes=["http", "https"])]
    )
    # Left out: a withdrawal (a default would be given with every type, and the rule refuse it).
    tradeType = StrictChoiceField(choices=["withdraw", "deposit"], required=False)

    rules = (OnlyWhen("tradeType", "type", TRADE_TYPES),)
