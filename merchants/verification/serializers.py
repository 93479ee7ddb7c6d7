"""Bodies of the verification endpoints."""

from typing import Any

from rest_framework import serializers

from core.api.serializers import StrictSerializer


class StrictEmailField(serializers.EmailField):
    """An email address given as a JSON string, as sent (never trimmed)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class VerificationStartIn(StrictSerializer):
    email = StrictEmailField(max_length=254, required=False, allow_null=True)


class VerificationLinkIn(StrictSerializer):
    email = StrictEmailField(max_length=254)
