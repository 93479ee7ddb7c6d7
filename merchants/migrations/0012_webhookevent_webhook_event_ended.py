from django.db import migrations, models

from core.indexes import AddIndexOnline


class Migration(migrations.Migration):
    # The outbox takes writes while the index is built (CREATE INDEX CONCURRENTLY).
    atomic = False

    dependencies = [
        ("merchants", "0011_webhook_event_merchant_indexes"),
    ]

    operations = [
        AddIndexOnline(
            model_name="webhookevent",
            index=models.Index(
                condition=models.Q(("status__in", ["delivered", "failed"])),
                fields=["created_at"],
                name="webhook_event_ended",
            ),
        ),
    ]
