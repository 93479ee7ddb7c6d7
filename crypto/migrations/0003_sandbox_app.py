"""The sandbox chains belong to the sandbox app now (installed only with SANDBOX=true; its
migrations create its tables): crypto drops them. Their rows were simulated data."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("crypto", "0002_sandbox_chain_per_merchant"),
    ]

    operations = [
        migrations.DeleteModel(name="SandboxChain"),
        migrations.DeleteModel(name="SandboxChainTransfer"),
        migrations.DeleteModel(name="SandboxTokenAccount"),
    ]
