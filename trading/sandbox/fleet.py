"""The bot fleet as one merchant's sandbox world sees it."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from trading.models import SandboxBot, SandboxBotState

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _InWorld(TypedDict):
        status: str

    FleetBot = WithAnnotations[SandboxBot, _InWorld]


def sandbox_fleet(*, tenant: str) -> QuerySet[FleetBot]:
    """Every bot, annotated with ``status``: its status in the tenant's world (online unless
    that merchant's ``POST /sandbox/bots`` said otherwise)."""
    status = SandboxBotState.objects.filter(bot=OuterRef("pk"), merchant_id=tenant).values(
        "status"
    )[:1]
    return SandboxBot.objects.annotate(
        status=Coalesce(Subquery(status), Value(SandboxBotState.Status.ONLINE.value))
    ).order_by("id")
