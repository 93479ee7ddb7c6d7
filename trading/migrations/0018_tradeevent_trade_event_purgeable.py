from django.db import migrations, models

from core.indexes import AddIndexOnline


class Migration(migrations.Migration):
    # Trades keep moving while the index is built (CREATE INDEX CONCURRENTLY).
    atomic = False

    dependencies = [
        ("trading", "0017_trade_console"),
    ]

    operations = [
        AddIndexOnline(
            model_name="tradeevent",
            index=models.Index(
                condition=models.Q(
                    models.Q(("to_status", "hold"), _negated=True),
                    models.Q(("from_status", "hold"), _negated=True),
                ),
                fields=["created_at"],
                name="trade_event_purgeable",
            ),
        ),
    ]
