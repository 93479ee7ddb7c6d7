"""The fields every trading flow's input shares: the game (in a query string or a body), a
trade's externalId, an item's price bound."""

from decimal import Decimal

from django.core.validators import RegexValidator
from rest_framework import serializers

from config.api.serializers import GameField, StrictCharField
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
