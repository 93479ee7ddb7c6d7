"""What the service keeps of real Solana: the scanner's cursor per deposit token account, the
transactions it signed with their attempts (each signing names a blockhash, valid up to a block
height: once that passed unseen, the transaction is signed again), and the sweeps of deposit
token accounts to the hot wallet. Registered by ``CryptoConfig.import_models``."""

import uuid

from django.db import models
from django.db.models import Q

TOKEN_CHOICES = [("USDT", "USDT"), ("USDC", "USDC")]
ADDRESS_LENGTH = 44  # base58 of 32 bytes
SIGNATURE_LENGTH = 88  # base58 of 64 bytes


class SolanaCursor(models.Model):
    """Per deposit token account, the newest signature the scanner handed on (every older one
    was), and when the account is due to be scanned again."""

    account = models.OneToOneField(
        "crypto.SolanaTokenAccount",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="cursor",
    )
    last_signature = models.CharField(max_length=SIGNATURE_LENGTH, blank=True)
    last_slot = models.PositiveBigIntegerField(null=True, blank=True)
    next_scan_at = models.DateTimeField()
    scanned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["next_scan_at"], name="solana_cursor_due")]

    def __str__(self) -> str:
        return f"{self.account_id} after {self.last_signature or 'nothing'}"


class SolanaTransaction(models.Model):
    """A transaction the service signs, one per ``key`` (a cashout, an account opening, a
    sweep). Its instructions are kept, so it can be signed again with a new blockhash when the
    last signing expired unseen; it is never signed again while one of its signings may land."""

    class Status(models.TextChoices):
        PENDING = "pending"  # its latest attempt may land; none seen yet
        LANDED = "landed"  # an attempt is in a block not yet at the service's commitment
        FINAL = "final"  # at the service's commitment: see ``succeeded``
        REFUSED = "refused"  # the node refused the latest attempt: nothing of it was forwarded

    class Purpose(models.TextChoices):
        CASHOUT = "cashout"
        OPEN = "open", "token account opening"
        SWEEP = "sweep", "sweep of a deposit token account"

    LIVE = (Status.PENDING, Status.LANDED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key = models.CharField(max_length=120, unique=True)
    purpose = models.CharField(max_length=8, choices=Purpose.choices)
    fee_payer = models.CharField(max_length=ADDRESS_LENGTH, help_text="The hot wallet.")
    signers = models.JSONField(
        default=list, help_text="HD indexes of the deposit owners that sign beside the payer."
    )
    instructions = models.JSONField(
        help_text="Program, accounts and data (base64) of each instruction, without the "
        "compute budget ones (added at each signing)."
    )
    compute_unit_limit = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices)
    landed_signature = models.CharField(max_length=SIGNATURE_LENGTH, blank=True)
    slot = models.PositiveBigIntegerField(null=True, blank=True)
    succeeded = models.BooleanField(null=True, blank=True, help_text="False: it failed on chain.")
    error = models.CharField(max_length=300, blank=True)
    next_check_at = models.DateTimeField(
        null=True, blank=True, help_text="Deadline of the transactions sweep (live ones)."
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(
                fields=["next_check_at"],
                condition=Q(status__in=["pending", "landed"]),
                name="solana_transaction_check_due",
            )
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.key} ({self.status})"


class SolanaAttempt(models.Model):
    """One signing of a transaction: its blockhash, the last block height at which it can land,
    its priority fee and the signed bytes, sent again as they are while they are valid."""

    solana_transaction = models.ForeignKey(
        SolanaTransaction, on_delete=models.CASCADE, related_name="attempts"
    )
    signature = models.CharField(max_length=SIGNATURE_LENGTH, unique=True)
    blockhash = models.CharField(max_length=ADDRESS_LENGTH)
    last_valid_block_height = models.PositiveBigIntegerField()
    priority_fee = models.PositiveBigIntegerField(help_text="Micro-lamports per compute unit.")
    raw = models.TextField(help_text="The signed transaction, base64.")
    refused = models.CharField(
        max_length=300, blank=True, help_text="Why the node refused it (it was not forwarded)."
    )
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.signature


class SolanaSweep(models.Model):
    """A deposit token account's tokens moved to the hot wallet's token account; with
    ``closes`` the account is closed in the same transaction (its rent back to the hot wallet).
    One live sweep per account."""

    class Status(models.TextChoices):
        SWEEPING = "sweeping"
        COMPLETED = "completed"
        FAILED = "failed"

    class Trigger(models.TextChoices):
        CLOSE = "close", "closing an emptied account"
        SCHEDULE = "schedule"
        STAFF = "staff"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(
        "crypto.SolanaTokenAccount", on_delete=models.PROTECT, related_name="sweeps"
    )
    address = models.CharField(max_length=ADDRESS_LENGTH)
    token = models.CharField(max_length=8, choices=TOKEN_CHOICES)
    amount = models.DecimalField(max_digits=40, decimal_places=18, help_text="Tokens moved.")
    closes = models.BooleanField()
    status = models.CharField(max_length=10, choices=Status.choices)
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    reason = models.CharField(max_length=300, blank=True)
    solana_transaction = models.ForeignKey(
        SolanaTransaction, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    tx_hash = models.CharField(max_length=SIGNATURE_LENGTH, blank=True)
    next_step_at = models.DateTimeField(
        null=True, blank=True, help_text="Deadline of the sweeps' sweep (live ones)."
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["address"],
                condition=Q(status="sweeping"),
                name="solana_sweep_live_per_account",
            )
        ]
        indexes = [
            models.Index(
                fields=["next_step_at"],
                condition=Q(status="sweeping"),
                name="solana_sweep_step_due",
            ),
            models.Index(fields=["account", "-created_at"], name="solana_sweep_history"),
        ]

    def __str__(self) -> str:
        return f"sweep {self.id} {self.token} {self.address} ({self.status})"
