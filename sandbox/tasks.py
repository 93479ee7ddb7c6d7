"""The autopilots: with ``SANDBOX_AUTOPILOT_SECONDS`` set, beat moves the sandbox world."""

from celery import shared_task

from sandbox.services.autopilot import sandbox_autopilot_step
from sandbox.services.crypto import crypto_sandbox_autopilot_step


@shared_task(name="sandbox.autopilot", time_limit=60)
def sandbox_autopilot() -> int:
    return sandbox_autopilot_step()


@shared_task(name="sandbox.crypto_autopilot", time_limit=60)
def crypto_sandbox_autopilot() -> int:
    return crypto_sandbox_autopilot_step()
