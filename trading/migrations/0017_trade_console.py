"""The console (issue 40): permissions of the staff actions on trades and bots; the trades in
flight indexed by their last move (the home counts those past their state's expected time),
those in their hold by its end, and every trade newest first (the console's list of trades). The indexes are built without stopping writes to the trades
(``core.indexes``), hence a migration outside a transaction."""

from django.db import migrations, models

from core.indexes import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("trading", "0016_supplier_withdraws"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="steambot",
            options={"ordering": ["id"], "permissions": [("log_in_bot", "Can log a bot in again")]},
        ),
        migrations.AlterModelOptions(
            name="trade",
            options={
                "permissions": [
                    ("retry_purchase", "Can retry a withdrawal's purchase"),
                    ("cancel_trade", "Can cancel a trade, refunding what was not delivered"),
                ]
            },
        ),
        # The new index answers the scrape's count per type and status as the old one did.
        AddIndexOnline(
            model_name="trade",
            index=models.Index(
                condition=models.Q(("status__in", ("initiated", "pending", "active", "hold"))),
                fields=["type", "status", "updated_at"],
                name="trade_in_flight_since",
            ),
        ),
        RemoveIndexOnline(model_name="trade", name="trade_in_flight"),
        AddIndexOnline(
            model_name="trade",
            index=models.Index(
                condition=models.Q(("status", "hold")),
                fields=["type", "hold_end_date"],
                name="trade_hold_end",
            ),
        ),
        AddIndexOnline(
            model_name="trade",
            index=models.Index(fields=["-created_at", "-id"], name="trade_newest"),
        ),
    ]
