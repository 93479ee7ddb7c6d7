"""The sandbox world is an app of its own now (installed only with SANDBOX=true; its migrations
create its tables): trading drops the sandbox's models. Their rows were simulated data:
``manage.py seed_sandbox --if-empty`` seeds the world again."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("trading", "0010_servicesettings_to_core"),
    ]

    operations = [
        # What refers to a bot goes first.
        migrations.DeleteModel(name="SandboxOffer"),
        migrations.DeleteModel(name="SandboxBotState"),
        migrations.DeleteModel(name="SandboxListing"),
        migrations.DeleteModel(name="SandboxBot"),
        migrations.DeleteModel(name="SandboxPlatformUser"),
        migrations.DeleteModel(name="SandboxPurchase"),
        migrations.DeleteModel(name="SandboxReceivedWebhook"),
    ]
