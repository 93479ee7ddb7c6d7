"""Response shapes for the OpenAPI description (they document; representations.py builds)."""

from rest_framework import serializers

from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import CHAINS, TOKENS


class TokenOut(serializers.Serializer):
    token = serializers.ChoiceField(choices=list(TOKENS))
    contract = serializers.CharField()
    decimals = serializers.IntegerField()


class DepositAddressOut(serializers.Serializer):
    platformId = serializers.CharField()
    chain = serializers.ChoiceField(choices=list(CHAINS))
    network = serializers.CharField()
    testnet = serializers.BooleanField()
    status = serializers.ChoiceField(choices=["active", "pending", "paused"])
    address = serializers.CharField(allow_null=True)
    tokenAccount = serializers.CharField(allow_null=True)
    tokens = TokenOut(many=True)
    minDepositCents = serializers.IntegerField()
    minConfirmations = serializers.IntegerField()
    explorerUrl = serializers.CharField(allow_null=True)


class DepositOut(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=["crypto_deposit"])
    status = serializers.ChoiceField(choices=CryptoDeposit.Status.values)
    platformId = serializers.CharField()
    chain = serializers.ChoiceField(choices=list(CHAINS))
    token = serializers.ChoiceField(choices=list(TOKENS))
    amount = serializers.CharField(help_text="USD credited 1:1 with the token, e.g. 12.34")
    amountCents = serializers.IntegerField()
    cryptoAmount = serializers.CharField(help_text="Token amount as sent")
    address = serializers.CharField()
    txHash = serializers.CharField()
    # ``from`` is a Python keyword: declared below.
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField(allow_null=True)
    locals()["from"] = serializers.CharField(allow_null=True, help_text="Sender, when known")


class DepositPageOut(serializers.Serializer):
    deposits = DepositOut(many=True)
    nextBefore = serializers.DateTimeField(allow_null=True)


class WithdrawalOut(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=["crypto_withdraw"])
    status = serializers.ChoiceField(choices=CryptoWithdrawal.Status.values)
    platformId = serializers.CharField()
    chain = serializers.ChoiceField(choices=list(CHAINS))
    token = serializers.ChoiceField(choices=list(TOKENS))
    amount = serializers.CharField(help_text="USD, e.g. 25.00")
    amountCents = serializers.IntegerField()
    feeCents = serializers.IntegerField()
    receiveCents = serializers.IntegerField()
    cryptoAmount = serializers.CharField(help_text="Token amount the address receives")
    address = serializers.CharField()
    txHash = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField(allow_null=True)


class WithdrawalPageOut(serializers.Serializer):
    withdrawals = WithdrawalOut(many=True)
    nextBefore = serializers.DateTimeField(allow_null=True)
