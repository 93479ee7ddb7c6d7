"""Case-insensitive substring search on item names (Django's ``icontains`` is
``UPPER(name) LIKE UPPER(...)``) uses a trigram index on ``UPPER(name)`` on PostgreSQL; the two
games get their settings rows."""

from django.db import migrations

from core.db import on_postgresql

CREATE = """
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX IF NOT EXISTS catalog_upper_name_trgm
    ON trading_catalogitem USING gin (UPPER(market_hash_name) gin_trgm_ops);
"""
DROP = "DROP INDEX IF EXISTS catalog_upper_name_trgm;"


def _games(apps, schema_editor):  # type: ignore[no-untyped-def]
    GameSettings = apps.get_model("trading", "GameSettings")
    for game in (730, 252490):
        GameSettings.objects.get_or_create(game=game, defaults={"hold_days": 8})


class Migration(migrations.Migration):
    dependencies = [("trading", "0002_gamesettings_sandboxbot_sandboxplatformuser_and_more")]

    operations = [
        migrations.RunPython(on_postgresql(CREATE), on_postgresql(DROP)),
        migrations.RunPython(_games, migrations.RunPython.noop),
    ]
