"""``manage.py check`` says whether the identity provider is configured: Sumsub named with every
setting it needs is quiet; named without some, a warning names them (as unset, a warning)."""

import pytest

from merchants.checks import outside_systems_check
from tests.test_sandbox_installation import deployment_env, manage
from tests.verification.sumsub.conftest import SUMSUB

NEEDED = {
    "SUMSUB_APP_TOKEN": "sbx:token",
    "SUMSUB_SECRET_KEY": "secret",
    "SUMSUB_WEBHOOK_SECRET": "webhook-secret",
    "SUMSUB_LEVEL_NAME": "id-and-liveness",
}


def _ids(settings) -> list[str]:
    return [message.id for message in outside_systems_check()]


def test_configured_sumsub_is_quiet(settings):
    settings.IDENTITY_PROVIDER = SUMSUB
    for name, value in NEEDED.items():
        setattr(settings, name, value)

    assert _ids(settings) == []


@pytest.mark.parametrize("missing", list(NEEDED))
def test_each_missing_setting_is_named(settings, missing):
    settings.IDENTITY_PROVIDER = SUMSUB
    for name, value in NEEDED.items():
        setattr(settings, name, "" if name == missing else value)

    (message,) = outside_systems_check()

    assert message.id == "merchants.W002"
    assert missing in message.msg
    assert "VERIFICATION_NOT_AVAILABLE" in message.msg
    assert [name for name in NEEDED if name in message.msg] == [missing]


def test_unset_and_sandbox_as_before(settings):
    settings.IDENTITY_PROVIDER = ""
    assert _ids(settings) == ["merchants.W001"]
    settings.IDENTITY_PROVIDER = "sandbox.identity.SandboxIdentityProvider"
    assert _ids(settings) == []  # the sandbox needs nothing more


@pytest.mark.slow
def test_manage_check_in_a_deployment(tmp_path):
    """As ``manage.py check`` runs with production settings (no sandbox)."""
    named = deployment_env(sandbox=False, database=None, var_dir=tmp_path, IDENTITY_PROVIDER=SUMSUB)
    for name in NEEDED:
        named.pop(name, None)

    unconfigured = manage("check", env=named)

    output = unconfigured.stdout + unconfigured.stderr
    assert unconfigured.returncode == 0, output
    assert "merchants.W002" in output
    assert all(name in output for name in NEEDED)
    assert "merchants.W001" not in output

    configured = manage("check", env=named | NEEDED)

    output = configured.stdout + configured.stderr
    assert configured.returncode == 0, output
    assert "merchants.W00" not in output
    assert "trading.W001" in output  # the other systems are still reported
