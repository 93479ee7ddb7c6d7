"""The console (issue 40): the record of staff actions, and the sandbox clock's moves (a sandbox
whose clock moved before this migration gets one shift from the start of time at its offset
then: the best known for what it stamped before)."""

from datetime import UTC, datetime

from django.db import migrations, models


def _first_shift(apps, schema_editor):
    settings_row = apps.get_model("core", "ServiceSettings").objects.filter(pk=1).first()
    if settings_row is not None and settings_row.clock_offset_seconds:
        apps.get_model("core", "ClockShift").objects.create(
            service_from=datetime(2000, 1, 1, tzinfo=UTC),
            offset_seconds=settings_row.clock_offset_seconds,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='ClockShift',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('service_from', models.DateTimeField(unique=True)),
                ('offset_seconds', models.BigIntegerField()),
            ],
            options={
                'ordering': ['service_from'],
            },
        ),
        migrations.CreateModel(
            name='StaffAction',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user', models.CharField(help_text="the staff user's name in the console", max_length=150)),
                ('action', models.CharField(max_length=40)),
                ('subject_type', models.CharField(max_length=32)),
                ('subject_id', models.CharField(max_length=64)),
                ('reason', models.CharField(max_length=500)),
                ('detail', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField()),
            ],
            options={
                'indexes': [models.Index(fields=['subject_type', 'subject_id', 'created_at'], name='core_staffa_subject_53d422_idx')],
            },
        ),
        migrations.RunPython(_first_shift, migrations.RunPython.noop),
    ]
