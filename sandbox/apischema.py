"""The answers of the ``/sandbox/`` helpers, for the OpenAPI description."""

from rest_framework import serializers

from crypto.apischema import DepositOut, WithdrawalOut
from crypto.networks import CHAINS


class SandboxTransferOut(serializers.Serializer):
    txHash = serializers.CharField()
    chain = serializers.ChoiceField(choices=list(CHAINS))
    confirmations = serializers.IntegerField()
    dropped = serializers.BooleanField()
    deposit = DepositOut(allow_null=True)
    withdrawal = WithdrawalOut(allow_null=True)


class SandboxChainOut(serializers.Serializer):
    chain = serializers.ChoiceField(choices=list(CHAINS))
    paused = serializers.BooleanField()
    failBroadcasts = serializers.BooleanField()


class SandboxIdentityProviderOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["online", "offline"])
