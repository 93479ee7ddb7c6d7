"""The ledger query (input) and the shapes of ledger rows (OpenAPI only; representations.py
builds the bodies)."""

from datetime import UTC, date, datetime, time
from typing import Any

from rest_framework import serializers

from ledger.models import Funding
from ledger.selectors import ADMIN_KINDS, ADMIN_STATUS

MAX_OFFSET = 2**31 - 1


class IsoMomentField(serializers.Field):
    """An ISO 8601 date or date-time. A date means midnight UTC at the start of that day; a
    date-time without an offset is UTC."""

    default_error_messages = {"invalid": "Must be an ISO 8601 date or date-time."}

    def to_internal_value(self, data: Any) -> datetime:
        if not isinstance(data, str) or not data.strip():
            self.fail("invalid")
        text = data.strip()
        try:
            if "T" not in text.upper() and " " not in text:
                return datetime.combine(date.fromisoformat(text), time.min, tzinfo=UTC)
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                return moment.replace(tzinfo=UTC)
            return moment.astimezone(UTC)
        except (ValueError, OverflowError):
            self.fail("invalid")

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class LedgerQueryIn(serializers.Serializer):
    type = serializers.ChoiceField(choices=Funding.Type.values, required=False)
    status = serializers.ChoiceField(choices=Funding.Status.values, required=False)
    startDate = IsoMomentField(required=False)
    endDate = IsoMomentField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("startDate"), attrs.get("endDate")
        if start is not None and end is not None and end < start:
            raise serializers.ValidationError({"endDate": "Must not be before startDate."})
        return attrs


def _usd() -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=18, decimal_places=2, coerce_to_string=False)


class LedgerAmountOut(serializers.Serializer):
    usd = _usd()
    crypto = serializers.CharField(help_text='Token amount with 6 decimals; "0" on admin rows.')
    token = serializers.CharField(allow_null=True)
    chain = serializers.CharField(allow_null=True)


class LedgerTimestampsOut(serializers.Serializer):
    created = serializers.DateTimeField()
    completed = serializers.DateTimeField(allow_null=True)
    updated = serializers.DateTimeField()


class LedgerRowOut(serializers.Serializer):
    id = serializers.CharField(help_text="Funding id, or the ledger transaction id of admin rows.")
    type = serializers.ChoiceField(choices=[*Funding.Type.values, *ADMIN_KINDS])
    status = serializers.ChoiceField(choices=[*Funding.Status.values, ADMIN_STATUS])
    amount = LedgerAmountOut()
    fee = _usd()
    address = serializers.CharField(allow_null=True)
    txnHash = serializers.CharField(allow_null=True)
    timestamps = LedgerTimestampsOut()


class LedgerPaginationOut(serializers.Serializer):
    page = serializers.IntegerField(help_text="offset // limit + 1")
    limit = serializers.IntegerField()
    total = serializers.IntegerField()
    totalPages = serializers.IntegerField()


class LedgerPageOut(serializers.Serializer):
    items = LedgerRowOut(many=True)
    pagination = LedgerPaginationOut()


class LedgerTransactionTimestampsOut(LedgerTimestampsOut):
    expired = serializers.DateTimeField(
        allow_null=True, help_text="INITIATED fundings: created + 24 hours; otherwise null."
    )


class LedgerTransactionOut(LedgerRowOut):
    type = serializers.ChoiceField(choices=Funding.Type.values)
    status = serializers.ChoiceField(choices=Funding.Status.values)
    timestamps = LedgerTransactionTimestampsOut()
