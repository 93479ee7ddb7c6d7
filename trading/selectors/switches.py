from trading.models import GameSettings


def game_settings_get(*, game: int) -> GameSettings:
    """Deposit pauses and hold days of a game (staff edit them; cheap enough to read each time)."""
    row, _ = GameSettings.objects.get_or_create(game=game)
    return row
