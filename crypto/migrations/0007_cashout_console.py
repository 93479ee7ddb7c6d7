"""The console (issue 40): the permission to sweep a deposit address; cashouts waiting for a
decision or their broadcast indexed by state and age (built without stopping writes,
``core.indexes``)."""

from django.db import migrations, models

from core.indexes import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("crypto", "0006_evm_scan_state"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="addressallocation",
            options={
                "permissions": [("sweep_address", "Can sweep a deposit address to the hot wallet")]
            },
        ),
        AddIndexOnline(
            model_name="cryptowithdrawal",
            index=models.Index(
                condition=models.Q(("status__in", ("awaiting_approval", "in_review", "approved"))),
                fields=["status", "created_at"],
                name="withdrawal_waiting",
            ),
        ),
    ]
