"""The ledger query. An endDate before the startDate is an empty range: no rows, no refusal
(the document cannot compare two parameters)."""

import re
from datetime import UTC, date, datetime, time
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.serializers import QueryIntegerField, Rfc3339DateTimeField
from ledger.models import ADMIN_KINDS, Funding

MAX_OFFSET = 2**31 - 1
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "format": "date"},
            {"type": "string", "format": "date-time"},
        ]
    }
)
class MomentField(Rfc3339DateTimeField):
    """A date (``2026-05-02``: midnight UTC at the start of that day) or an RFC 3339
    date-time (with its offset)."""

    def to_internal_value(self, value: Any) -> datetime:
        if isinstance(value, str) and _DATE.fullmatch(value):
            try:
                return datetime.combine(date.fromisoformat(value), time.min, tzinfo=UTC)
            except ValueError:
                self.fail("invalid", format="a date (2026-05-02) or an RFC 3339 date-time")
        return super().to_internal_value(value)


_MOMENT = "a date (midnight UTC at the start of that day) or an RFC 3339 date-time"


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
    startDate = MomentField(required=False, help_text=f"{_MOMENT}; created at or after")
    endDate = MomentField(required=False, help_text=f"{_MOMENT}; created at or before")
    limit = QueryIntegerField(min_value=1, max_value=100, default=50)
    offset = QueryIntegerField(
        min_value=0, max_value=MAX_OFFSET, default=0, help_text="rows to skip"
    )
