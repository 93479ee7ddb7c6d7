"""The switches now belong to core (core/migrations/0001): trading forgets the model, the table
and its rows stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0001_initial"),
        ("trading", "0009_sandbox_per_merchant"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ServiceSettings")],
            database_operations=[],
        ),
    ]
