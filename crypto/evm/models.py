"""What the service keeps of the real EVM chains: the scanner's cursor and the hashes of the
blocks it ended at, the token transfers it found, the nonces of the addresses it sends from, the
transactions it signed with their attempts (a fee bump is a new attempt at the same nonce), and
the sweeps of deposit addresses to the hot wallet. Registered by ``CryptoConfig.import_models``."""

import uuid

from django.db import models
from django.db.models import Q

CHAIN_CHOICES = [("ETH", "ETH"), ("BSC", "BSC")]
TOKEN_CHOICES = [("USDT", "USDT"), ("USDC", "USDC")]
HASH_LENGTH = 66
ADDRESS_LENGTH = 42


def wei_field(**options: object) -> models.DecimalField:
    """Wei and raw token units: integers up to 2^256, beyond a bigint."""
    return models.DecimalField(max_digits=78, decimal_places=0, **options)  # type: ignore[arg-type]


class EvmCursor(models.Model):
    """Per chain, the first block the deposit scanner has not read yet, where its scanning began,
    and what the last step saw: the node's head (a step stores it, so readers such as /health
    never ask the node) and the times of the blocks, from which its lag is told."""

    chain = models.CharField(max_length=8, primary_key=True, choices=CHAIN_CHOICES)
    next_block = models.PositiveBigIntegerField()
    updated_at = models.DateTimeField(help_text="When the cursor last moved.")
    first_block = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The block the first scan began at (the head then)."
    )
    started_at = models.DateTimeField(null=True, blank=True, help_text="When scanning began.")
    scanned_block_time = models.DateTimeField(
        null=True, blank=True, help_text="The chain's time of the last block read."
    )
    head = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The node's head at the last step."
    )
    head_time = models.DateTimeField(
        null=True, blank=True, help_text="The chain's time of that head block."
    )
    scanned_at = models.DateTimeField(
        null=True, blank=True, help_text="When a step last completed (the service clock)."
    )

    class Meta:
        verbose_name = "EVM deposit scanner"

    def __str__(self) -> str:
        return f"{self.chain} from block {self.next_block}"


class EvmBlock(models.Model):
    """The hash of a block a scan ended at. When the chain no longer has it at that height, a
    reorganisation replaced it: the scanner goes back to the newest one the chain still has."""

    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    number = models.PositiveBigIntegerField()
    hash = models.CharField(max_length=HASH_LENGTH)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chain", "number"], name="evm_block_per_height")
        ]

    def __str__(self) -> str:
        return f"{self.chain} #{self.number} {self.hash}"


class EvmTransferLog(models.Model):
    """A token transfer to a deposit address as the scanner last saw it: the block it was in
    tells a reorganisation (that block replaced) from a node that merely lost track."""

    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    tx_hash = models.CharField(max_length=HASH_LENGTH)
    log_index = models.PositiveIntegerField()
    block_number = models.PositiveBigIntegerField()
    block_hash = models.CharField(max_length=HASH_LENGTH)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "tx_hash", "log_index"], name="evm_transfer_log_per_event"
            )
        ]

    def __str__(self) -> str:
        return f"{self.chain} {self.tx_hash}#{self.log_index}"


class EvmSender(models.Model):
    """An address the service sends from on one chain (the hot wallet, a deposit address being
    swept). Its row lock serializes nonce allocation across every worker process."""

    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    address = models.CharField(max_length=ADDRESS_LENGTH)
    next_nonce = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chain", "address"], name="evm_sender_per_chain")
        ]

    def __str__(self) -> str:
        return f"{self.chain} {self.address} next nonce {self.next_nonce}"


class EvmTransaction(models.Model):
    """A transaction the service signed, one per ``key`` (a cashout, a sweep's gas or transfer)
    and per nonce of its sender. Kept until final: sent again while no node has it, replaced
    at higher fees while it stays out of blocks."""

    class Status(models.TextChoices):
        PENDING = "pending"  # in no block
        MINED = "mined"  # in a block, fewer confirmations than the chain asks
        CONFIRMED = "confirmed"  # final: see ``succeeded``
        DROPPED = "dropped"  # final: its nonce went to a transaction that is not one of ours

    class Purpose(models.TextChoices):
        CASHOUT = "cashout"
        GAS = "gas", "gas top-up of a deposit address"
        SWEEP = "sweep", "sweep of a deposit address"

    LIVE = (Status.PENDING, Status.MINED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key = models.CharField(max_length=80, unique=True)
    purpose = models.CharField(max_length=8, choices=Purpose.choices)
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    sender = models.CharField(max_length=ADDRESS_LENGTH)
    nonce = models.PositiveBigIntegerField()
    to = models.CharField(max_length=ADDRESS_LENGTH)
    value = wei_field(default=0)
    data = models.TextField(blank=True, help_text="The call, hex.")
    gas = models.PositiveBigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices)
    mined_hash = models.CharField(max_length=HASH_LENGTH, blank=True)
    block_number = models.PositiveBigIntegerField(null=True, blank=True)
    succeeded = models.BooleanField(null=True, blank=True, help_text="False: it reverted.")
    next_check_at = models.DateTimeField(
        null=True, blank=True, help_text="Deadline of the transactions sweep (live ones)."
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "sender", "nonce"], name="evm_transaction_per_nonce"
            )
        ]
        indexes = [
            models.Index(
                fields=["next_check_at"],
                condition=Q(status__in=["pending", "mined"]),
                name="evm_transaction_check_due",
            )
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.chain} {self.sender}#{self.nonce} ({self.status})"


class EvmAttempt(models.Model):
    """One signing of a transaction: the first, then one per fee bump (same nonce)."""

    evm_transaction = models.ForeignKey(
        EvmTransaction, on_delete=models.CASCADE, related_name="attempts"
    )
    tx_hash = models.CharField(max_length=HASH_LENGTH, unique=True)
    max_fee_per_gas = wei_field()
    max_priority_fee_per_gas = wei_field()
    raw = models.TextField(help_text="The signed transaction, hex.")
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.tx_hash


class EvmSweep(models.Model):
    """One token of one deposit address moved to the hot wallet: the gas topped up from the hot
    wallet first when the address has too little for it (beside what its other live sweep holds
    back), then the transfer. One live sweep per address and token."""

    class Status(models.TextChoices):
        FUNDING = "funding", "gas top-up on its way"
        SWEEPING = "sweeping"
        COMPLETED = "completed"
        FAILED = "failed"

    class Trigger(models.TextChoices):
        SCHEDULE = "schedule"
        STAFF = "staff"

    LIVE = (Status.FUNDING, Status.SWEEPING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    token = models.CharField(max_length=8, choices=TOKEN_CHOICES)
    allocation = models.ForeignKey(
        "crypto.AddressAllocation", on_delete=models.PROTECT, related_name="evm_sweeps"
    )
    address = models.CharField(max_length=ADDRESS_LENGTH)
    amount = models.DecimalField(max_digits=40, decimal_places=18, help_text="Tokens moved.")
    gas_needed = wei_field(help_text="Wei the transfer may burn at most (gas x max fee).")
    gas_topup = wei_field(default=0, help_text="Wei sent from the hot wallet for the gas.")
    status = models.CharField(max_length=10, choices=Status.choices)
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    reason = models.CharField(max_length=200, blank=True)
    gas_transaction = models.ForeignKey(
        EvmTransaction, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    sweep_transaction = models.ForeignKey(
        EvmTransaction, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    tx_hash = models.CharField(max_length=HASH_LENGTH, blank=True)
    next_step_at = models.DateTimeField(
        null=True, blank=True, help_text="Deadline of the sweeps' sweep (live ones)."
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "address", "token"],
                condition=Q(status__in=["funding", "sweeping"]),
                name="evm_sweep_live_per_token",
            )
        ]
        indexes = [
            models.Index(
                fields=["next_step_at"],
                condition=Q(status__in=["funding", "sweeping"]),
                name="evm_sweep_step_due",
            ),
            models.Index(
                fields=["allocation", "chain", "token", "-created_at"], name="evm_sweep_history"
            ),
        ]

    def __str__(self) -> str:
        return f"sweep {self.id} {self.chain} {self.token} {self.address} ({self.status})"
