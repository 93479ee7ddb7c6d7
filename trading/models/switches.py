from django.db import models


class GameSettings(models.Model):
    """Per-game switches: deposit pauses (staff) and the hold period of accepted trades."""

    game = models.PositiveIntegerField(primary_key=True)
    deposits_paused = models.BooleanField(default=False)
    hold_days = models.PositiveSmallIntegerField(default=8)

    class Meta:
        verbose_name = "game settings"
        verbose_name_plural = "game settings"

    def __str__(self) -> str:
        return f"game {self.game}"
