"""Bodies and answers of the verification endpoints."""

from typing import Any

from rest_framework import serializers

from config.api.serializers import StrictSerializer

PROCESS_STATUSES = ["PENDING", "ACCEPTED", "REJECTED", "EXPIRED"]


class StrictEmailField(serializers.EmailField):
    """An email address given as a JSON string."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class VerificationStartIn(StrictSerializer):
    email = StrictEmailField(max_length=254, required=False, allow_null=True)


class VerificationLinkIn(StrictSerializer):
    email = StrictEmailField(max_length=254)


class VerificationStartOut(serializers.Serializer):
    captureUrl = serializers.URLField(help_text="Send the person here to capture document+selfie.")
    dossierId = serializers.CharField()


class VerificationProcessOut(serializers.Serializer):
    dossierId = serializers.CharField()
    status = serializers.ChoiceField(choices=PROCESS_STATUSES)
    startedAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField(allow_null=True)


class LinkedIdentityOut(serializers.Serializer):
    identityId = serializers.UUIDField()
    linkedAt = serializers.DateTimeField()


class VerificationStatusOut(serializers.Serializer):
    verificationLevel = serializers.IntegerField(
        min_value=0, max_value=3, help_text="0: not verified; 3: document and selfie accepted."
    )
    email = serializers.CharField(allow_null=True)
    latestProcess = VerificationProcessOut(allow_null=True)
    linkedIdentity = LinkedIdentityOut(allow_null=True)
