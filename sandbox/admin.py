"""Staff pages of the sandbox world; Django's admin logs every add, change and delete."""

from django.contrib import admin

from sandbox.models import SandboxChain


@admin.register(SandboxChain)
class SandboxChainAdmin(admin.ModelAdmin):
    list_display = ["chain", "merchant", "paused", "fail_broadcasts"]
