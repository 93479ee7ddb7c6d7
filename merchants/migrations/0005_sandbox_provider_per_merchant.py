"""The sandbox identity provider's outage switch belongs to one merchant (decisions section 8).
The switch set before had no merchant and is dropped: the provider is online for everyone."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('merchants', '0004_identity_verification'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SandboxIdentityProviderState',
        ),
        migrations.CreateModel(
            name='SandboxIdentityProviderState',
            fields=[
                ('merchant', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='merchants.merchant')),
                ('online', models.BooleanField(default=True)),
            ],
        ),
    ]
