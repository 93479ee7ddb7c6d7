from decimal import ROUND_DOWN, Decimal
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.api.serializers import (
    QueryIntegerField,
    Rfc3339DateTimeField,
    StrictBooleanField,
    StrictCharField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from merchants.services import ClientData
from merchants.tradeurls import PLATFORM_ID_PATTERN, TradeUrlValidator

CENT = Decimal("0.01")


class ClientDataIn(StrictSerializer):
    totalWager = StrictDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(10**13),
        required=False,
    )
    kycLevel = StrictIntegerField(min_value=0, max_value=3, required=False)
    fiatDeposits = StrictBooleanField(required=False)
    cryptoDeposits = StrictBooleanField(required=False)
    registrationDate = Rfc3339DateTimeField(required=False, allow_null=True)
    kycHash = StrictCharField(max_length=256, required=False, allow_null=True)


class AuthenticateClientIn(StrictSerializer):
    clientPlatformId = StrictCharField(
        validators=[RegexValidator(PLATFORM_ID_PATTERN, "Must be 76561 followed by 12 digits.")]
    )
    # Delivering to the account of clientPlatformId is the service's rule (13 INVALID_TRADEURL).
    clientTradeUrl = StrictCharField(max_length=200, validators=[TradeUrlValidator()])
    clientId = StrictCharField(max_length=128, required=False, allow_null=True)
    clientData = ClientDataIn(required=False, allow_null=True)


def client_data_from(data: dict[str, Any] | None) -> ClientData:
    """Omitted fields default to 0, false and null; the wager is kept to the cent."""
    data = data or {}
    return ClientData(
        total_wager=data.get("totalWager", Decimal(0)).quantize(CENT, rounding=ROUND_DOWN),
        kyc_level=data.get("kycLevel", 0),
        fiat_deposits=data.get("fiatDeposits", False),
        crypto_deposits=data.get("cryptoDeposits", False),
        registration_date=data.get("registrationDate"),
        kyc_hash=data.get("kycHash") or None,
    )


class WebhookEventsQueryIn(serializers.Serializer):
    status = serializers.ChoiceField(choices=["pending", "delivered", "failed"], required=False)
    limit = QueryIntegerField(min_value=1, max_value=100, default=50)
