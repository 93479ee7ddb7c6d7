"""The sandbox chain switches belong to one merchant (decisions section 8); the operator's
CRYPTO_PAUSED_CHAINS stays service-wide. Switches set before had no merchant and are dropped:
every chain runs and accepts broadcasts again."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('crypto', '0001_initial'),
        ('merchants', '0005_sandbox_provider_per_merchant'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SandboxChain',
        ),
        migrations.CreateModel(
            name='SandboxChain',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('chain', models.CharField(choices=[('ETH', 'ETH'), ('BSC', 'BSC'), ('SOL', 'SOL')], max_length=8)),
                ('paused', models.BooleanField(default=False, help_text='The chain halts: no credits, no sends.')),
                ('fail_broadcasts', models.BooleanField(default=False, help_text='Every broadcast is refused by the node.')),
                ('merchant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='merchants.merchant')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('merchant', 'chain'), name='sandbox_chain_per_merchant')],
            },
        ),
    ]
