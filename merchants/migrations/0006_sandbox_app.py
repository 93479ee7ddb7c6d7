"""The sandbox identity provider belongs to the sandbox app now (installed only with
SANDBOX=true; its migrations create its tables): merchants drops its models. Their rows were
simulated data."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("merchants", "0005_sandbox_provider_per_merchant"),
    ]

    operations = [
        migrations.DeleteModel(name="SandboxDossier"),
        migrations.DeleteModel(name="SandboxIdentityProviderState"),
    ]
