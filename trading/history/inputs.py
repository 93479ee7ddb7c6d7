"""What trade history's query string may hold."""

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.api.serializers import QueryIntegerField, StrictCharField
from trading.history.selectors import CURSOR_PATTERN
from trading.trades.inputs import game_query_field


class TradesQueryIn(serializers.Serializer):
    cursor = StrictCharField(
        required=False,
        validators=[RegexValidator(CURSOR_PATTERN, "Not a cursor this service gives.")],
        help_text="nextCursor of the previous page",
    )
    limit = QueryIntegerField(min_value=1, max_value=100, default=20)
    type = serializers.ChoiceField(choices=["deposit", "withdraw"], required=False)
    game = game_query_field()
