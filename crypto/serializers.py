"""Query and body parsing of the crypto endpoints and their sandbox helpers."""

from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from config.api.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictSerializer,
)
from crypto.networks import CHAINS, TOKENS, USDC
from merchants.tradeurls import PLATFORM_ID_PATTERN

PLATFORM_ID = RegexValidator(PLATFORM_ID_PATTERN, "Must be 76561 followed by 12 digits.")
REQUEST_ID = RegexValidator(r"^[A-Za-z0-9_-]{8,64}\Z", "8 to 64 of A-Z a-z 0-9 _ -.")
MAX_CASHOUT_CENTS = 100_000_000


def _platform_id_query() -> serializers.CharField:
    return serializers.CharField(validators=[PLATFORM_ID])


class DepositAddressQueryIn(serializers.Serializer):
    chain = serializers.ChoiceField(choices=list(CHAINS))
    # Solana only (the token whose account is opened); ignored on the other chains.
    token = serializers.ChoiceField(choices=list(TOKENS), default=USDC)


class SecureDepositAddressQueryIn(DepositAddressQueryIn):
    platformId = _platform_id_query()


class HistoryQueryIn(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    before = serializers.DateTimeField(required=False)


class SecureHistoryQueryIn(HistoryQueryIn):
    platformId = _platform_id_query()


class CashoutIn(StrictSerializer):
    chain = StrictChoiceField(choices=list(CHAINS))
    token = StrictChoiceField(choices=list(TOKENS))
    address = StrictCharField(min_length=1, max_length=100)
    amountCents = StrictIntegerField(min_value=1, max_value=MAX_CASHOUT_CENTS)
    requestId = StrictCharField(validators=[REQUEST_ID])


class SecureCashoutIn(CashoutIn):
    platformId = StrictCharField(validators=[PLATFORM_ID])


class TokenAmountField(serializers.Field):
    """A token amount as a decimal string (``"12.5"``) or a JSON number, kept exact."""

    default_error_messages = {"invalid": "A decimal amount, as a string or a number."}

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool) or not isinstance(data, (str, int, Decimal)):
            self.fail("invalid")
        try:
            value = Decimal(data.strip() if isinstance(data, str) else data)
        except InvalidOperation:
            self.fail("invalid")
        if not value.is_finite():
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
