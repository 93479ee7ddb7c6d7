"""A platform asset (each unit of a stack) sits in at most one live deposit, of any merchant:
deposit items name their owner and unit, and a partial unique index refuses a second live one."""

from typing import Any

from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery

LIVE = ("initiated", "pending", "active", "hold")


def deposit_assets_name(apps: Any, schema_editor: Any) -> None:
    trade_item = apps.get_model("trading", "TradeItem")
    trade = apps.get_model("trading", "Trade")
    owner = trade.objects.filter(pk=OuterRef("trade_id")).values("client_platform_id")[:1]
    trade_item.objects.filter(trade__type="deposit").update(asset_owner=Subquery(owner))
    # An asset already in two live deposits (the double sells this migration stops): the oldest
    # deposit keeps it; the others are left naming no asset, which check_wallet reports.
    shared = (
        trade_item.objects.filter(status__in=LIVE)
        .exclude(asset_owner="")
        .order_by()
        .values("asset_owner", "public_id")
        .annotate(live=Count("id"))
        .filter(live__gt=1)
    )
    for group in shared:
        rows = trade_item.objects.filter(
            status__in=LIVE, asset_owner=group["asset_owner"], public_id=group["public_id"]
        ).order_by("trade__created_at", "id")
        later = [row.pk for row in rows[1:]]
        trade_item.objects.filter(pk__in=later).update(asset_owner="")


class Migration(migrations.Migration):
    dependencies = [
        ("trading", "0007_sweep_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="tradeitem",
            name="asset_owner",
            field=models.CharField(blank=True, max_length=17),
        ),
        migrations.AddField(
            model_name="tradeitem",
            name="asset_unit",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(deposit_assets_name, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="tradeitem",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("status__in", ("initiated", "pending", "active", "hold")),
                    models.Q(("asset_owner", ""), _negated=True),
                ),
                fields=("asset_owner", "public_id", "asset_unit"),
                name="deposit_asset_unit_live",
            ),
        ),
    ]
