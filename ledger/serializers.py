"""The ledger query."""

from datetime import UTC, date, datetime, time
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledger.models import ADMIN_KINDS, Funding

MAX_OFFSET = 2**31 - 1


@extend_schema_field(OpenApiTypes.STR)
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


_MOMENT = "ISO 8601 date (midnight UTC at the start of that day) or date-time"


class LedgerQueryIn(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=[*Funding.Type.values, *ADMIN_KINDS],
        required=False,
        help_text=(
            "DEPOSIT and WITHDRAWAL also leave out admin rows, REFUND and INTERNAL_TRANSFER keep "
            "them; ADMIN_CREDIT and ADMIN_DEBIT list only the staff credits or debits"
        ),
    )
    status = serializers.ChoiceField(
        choices=Funding.Status.values, required=False, help_text="admin rows are not filtered"
    )
    startDate = IsoMomentField(required=False, help_text=f"{_MOMENT}; created at or after")
    endDate = IsoMomentField(required=False, help_text=f"{_MOMENT}; created at or before")
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    offset = serializers.IntegerField(
        min_value=0, max_value=MAX_OFFSET, default=0, help_text="rows to skip"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("startDate"), attrs.get("endDate")
        if start is not None and end is not None and end < start:
            raise serializers.ValidationError({"endDate": "Must not be before startDate."})
        return attrs
