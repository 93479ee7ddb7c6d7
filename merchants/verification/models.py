"""The tables of identity verification (app label ``merchants``, registered by
``MerchantsConfig.import_models``): the verified people, each check at the provider and the
provider's notifications kept for replay detection."""

import uuid

from django.db import models
from django.db.models import Q

from merchants.models import Client, Merchant


class VerifiedIdentity(models.Model):
    """A person whose document and selfie a verification accepted, per merchant. Several
    platform accounts (clients) of the merchant can belong to one identity; its email, when
    known, is how another account links to it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="identities")
    email = models.CharField(max_length=254, blank=True, help_text="Lower case; may be empty.")
    level = models.PositiveSmallIntegerField()
    verified_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "verified identities"
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "email"],
                condition=~Q(email=""),
                name="identity_email_unique",
            )
        ]

    def __str__(self) -> str:
        return f"identity {self.id} ({self.email or 'no email'})"


class VerificationProcess(models.Model):
    """One document-and-selfie check of a client at the provider (the provider's dossier).
    ``next_check_at`` is the deadline the verdict sweep moves on while the verdict is pending."""

    class Status(models.TextChoices):
        PENDING = "PENDING"
        ACCEPTED = "ACCEPTED"
        REJECTED = "REJECTED"
        EXPIRED = "EXPIRED"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    client = models.ForeignKey(
        Client, on_delete=models.CASCADE, related_name="verification_processes"
    )
    dossier_id = models.CharField(max_length=128, unique=True)
    capture_url = models.URLField(max_length=500)
    email = models.CharField(max_length=254, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    identity = models.ForeignKey(
        VerifiedIdentity, on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    started_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True)
    checks = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client"],
                condition=Q(status="PENDING"),
                name="verification_one_open_per_client",
            )
        ]
        indexes = [
            models.Index(fields=["client", "-started_at"]),
            models.Index(
                fields=["next_check_at"],
                condition=Q(status="PENDING"),
                name="verification_check_due",
            ),
        ]

    def __str__(self) -> str:
        return f"dossier {self.dossier_id} ({self.status})"


class IdentityNotification(models.Model):
    """A notification the identity provider pushed (its signature verified), kept while the
    replay window could still accept a copy of it: the same bytes again are a replay. Rows
    older than the window are pruned (``merchants.prune_identity_notifications``)."""

    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the raw body.")
    kind = models.CharField(max_length=64)
    dossier_id = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(help_text="When the provider made it.")
    received_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.dossier_id} ({self.digest[:12]})"
