"""The console (issue 40): the permission to re-send a webhook event; failed events indexed by
time, so the home finds the merchants whose webhooks were given up on lately (built without
stopping writes, ``core.indexes``)."""

from django.db import migrations, models

from core.indexes import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("merchants", "0009_webhook_event_request_id"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="webhookevent",
            options={"permissions": [("resend_webhook", "Can re-send a webhook event")]},
        ),
        AddIndexOnline(
            model_name="webhookevent",
            index=models.Index(
                condition=models.Q(("status", "failed")),
                fields=["created_at", "merchant"],
                name="webhook_event_failed",
            ),
        ),
    ]
