"""The switches move here from trading with their table: only Django's idea of which app owns
the model changes (trading/migrations/0010 drops it there), no row is copied or lost. The table
keeps its name (``db_table``) and is created by trading's first migration on a new database,
hence the dependency. The admin's content type moves along, so staff permissions on the
switches stay."""

from django.db import migrations, models


def _relabel(source: str, target: str):
    def run(apps, schema_editor):
        rows = apps.get_model("contenttypes", "ContentType").objects.using(
            schema_editor.connection.alias
        )
        if rows.filter(app_label=source, model="servicesettings").exists():
            # A migrate run between two steps may have made an empty one for the target already.
            rows.filter(app_label=target, model="servicesettings").delete()
            rows.filter(app_label=source, model="servicesettings").update(app_label=target)

    return run


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("trading", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ServiceSettings",
                    fields=[
                        ("id", models.PositiveSmallIntegerField(default=1, editable=False, primary_key=True, serialize=False)),
                        ("maintenance", models.BooleanField(default=False, help_text="Refuse every API call with 1007 SYSTEM_MAINTENANCE (HTTP 503).")),
                        ("clock_offset_seconds", models.BigIntegerField(default=0, help_text="Sandbox only: how far the service clock runs ahead of real time.")),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "verbose_name": "service settings",
                        "verbose_name_plural": "service settings",
                        "db_table": "trading_servicesettings",
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_relabel("trading", "core"), _relabel("core", "trading")),
    ]
