"""Query and body parsing of the crypto endpoints."""

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.api.serializers import (
    QueryIntegerField,
    Rfc3339DateTimeField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictSerializer,
)
from crypto.networks import CHAINS, TOKENS, USDC
from merchants.tradeurls import PLATFORM_ID_PATTERN

PLATFORM_ID = RegexValidator(PLATFORM_ID_PATTERN, "Must be 76561 followed by 12 digits.")
REQUEST_ID = RegexValidator(r"\A[A-Za-z0-9_-]{8,64}\Z", "8 to 64 of A-Z a-z 0-9 _ -.")
MAX_CASHOUT_CENTS = 100_000_000


def _platform_id_query() -> StrictCharField:
    return StrictCharField(validators=[PLATFORM_ID])


class DepositAddressQueryIn(serializers.Serializer):
    chain = serializers.ChoiceField(choices=list(CHAINS))
    # Solana only (the token whose account is opened); ignored on the other chains.
    token = serializers.ChoiceField(choices=list(TOKENS), default=USDC)


class SecureDepositAddressQueryIn(DepositAddressQueryIn):
    platformId = _platform_id_query()


class HistoryQueryIn(serializers.Serializer):
    limit = QueryIntegerField(min_value=1, max_value=100, default=20)
    before = Rfc3339DateTimeField(required=False, help_text="nextBefore of the previous page")


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
