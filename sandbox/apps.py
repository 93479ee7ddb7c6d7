from django.apps import AppConfig


class SandboxConfig(AppConfig):
    """The simulated outside world and its ``/sandbox/`` helpers: installed only with
    ``SANDBOX=true``. It may use every app; no app uses it."""

    name = "sandbox"
    verbose_name = "Sandbox world"
