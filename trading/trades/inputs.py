"""The fields every trading flow's input shares: the game (in a query string or a body), a
trade's externalId, an item's price bound, USD bounds, pages and true/false in a query string."""

from decimal import Decimal
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.api.serializers import GameField, QueryDecimalField, QueryIntegerField, StrictCharField
from trading.games import GAMES

GAME_CHOICES = [str(game) for game in GAMES]
MAX_ITEM_PRICE = Decimal(100_000)
# A trade's externalId is also a ref of GET /secure/trades/{tradeId}, which reads a comma as a
# list of refs (decisions section 7): one with a comma could never be found.
EXTERNAL_ID = RegexValidator(r"\A[^,\x00]*\Z", "Must not contain a comma or NUL characters.")


def external_id_field() -> StrictCharField:
    return StrictCharField(
        max_length=128, required=False, allow_blank=True, validators=[EXTERNAL_ID]
    )


def game_query_field(required: bool = False) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=GAME_CHOICES, default="730", required=required)


def game_body_field(games: tuple[int, ...] = GAMES) -> GameField:
    return GameField(games=games, required=False, default=730)


MAX_USD = Decimal(100_000_000)


def usd_field(help_text: str | None = None) -> QueryDecimalField:
    return QueryDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=MAX_USD,
        required=False,
        help_text=help_text,
    )


def page_field() -> QueryIntegerField:
    return QueryIntegerField(min_value=1, max_value=1_000_000, default=1)


class TrueFalseField(serializers.ChoiceField):
    """Exactly ``true`` or ``false`` in a query string."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=["true", "false"], **kwargs)

    def to_internal_value(self, data: Any) -> bool:  # type: ignore[override]
        return bool(super().to_internal_value(data) == "true")

    def to_representation(self, value: Any) -> str:
        """``true`` or ``false``, as the query string has it (the OpenAPI shows the default)."""
        return "true" if value else "false"
