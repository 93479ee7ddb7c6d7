"""The sandbox helpers act on the calling merchant's world only (decisions section 8): configured
platform users and bot statuses belong to a merchant. Configurations made before had no merchant
and are dropped: every merchant starts again from the generated users and an online fleet."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('merchants', '0005_sandbox_provider_per_merchant'),
        ('trading', '0008_deposit_asset_live_unique'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SandboxPlatformUser',
        ),
        migrations.CreateModel(
            name='SandboxPlatformUser',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('platform_id', models.CharField(max_length=17)),
                ('trade_url_state', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('anti_cheat_banned', models.BooleanField(default=False)),
                ('game_bans', models.PositiveIntegerField(default=0)),
                ('economy_ban', models.CharField(default='none', max_length=16)),
                ('escrow_days', models.PositiveIntegerField(default=0)),
                ('inventory_private', models.BooleanField(default=False)),
                ('inventory', models.JSONField(blank=True, help_text='Replaces the generated one.', null=True)),
                ('fault', models.CharField(blank=True, choices=[('', 'none'), ('unavailable', 'Unavailable'), ('rate_limited', 'Rate Limited'), ('error', 'Error')], default='', max_length=16)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('merchant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='merchants.merchant')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('merchant', 'platform_id'), name='sandbox_platform_user_per_merchant')],
            },
        ),
        migrations.RemoveField(
            model_name='sandboxbot',
            name='status',
        ),
        migrations.CreateModel(
            name='SandboxBotState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('online', 'Online'), ('degraded', 'Degraded'), ('offline', 'Offline')], max_length=16)),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='states', to='trading.sandboxbot')),
                ('merchant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='merchants.merchant')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('merchant', 'bot'), name='sandbox_bot_state_per_merchant')],
            },
        ),
    ]
