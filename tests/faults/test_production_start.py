"""The deployment starts under production settings (``DATABASE_URL``, ``REDIS_URL`` and
``SECRET_KEY`` set, ``SANDBOX=false``) on a machine with no ``var/`` folder: the web server,
a worker and beat, each as the README starts it. All three stay up, ``/health`` is 200 over
plain HTTP, an authenticated call is served with HSTS when the TLS proxy says it came over
HTTPS and redirected to HTTPS when not, beat's webhook sweep reaches the worker (a due event
that only a sweep can find gets its attempt), and nothing is written under ``VAR_DIR``.
Without the sandbox there are no ``/sandbox/`` routes, and an outside system nobody configured
answers as unavailable.

Outside the sandbox the guard refuses plain-http loopback callbacks, so the attempt the worker
records is that refusal: proof that beat sent the sweep and the worker ran what it found."""

import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.utils import timezone

from merchants.models import Merchant
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import web_serving
from tests.faults.database import database_url
from tests.faults.processes import celery_beat, celery_worker, service_env, wait_until
from tests.faults.test_redis_restarted import OwnRedis, own_redis

__all__ = ["own_redis"]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def production_env(redis_url: str, var_dir: Path) -> dict[str, str]:
    env = service_env(database_url=database_url(), redis_url=redis_url)
    for outside_system in ("GAME_PLATFORM", "MARKETPLACE", "IDENTITY_PROVIDER", "CRYPTO_CHAINS"):
        env.pop(outside_system, None)  # none configured: the domain's unconfigured adapters
    env.update(
        SANDBOX="false",
        VAR_DIR=str(var_dir),
        CRYPTO_HD_MNEMONIC=settings.SANDBOX_HD_MNEMONIC,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
    )
    return env


# What the TLS proxy in front adds to a request that reached it over HTTPS (README, "Production").
OVER_TLS = {"X-Forwarded-Proto": "https"}


def due_event(actor: Actor) -> WebhookEvent:
    """An event due now that no task was ever sent for: only a sweep can find it."""
    now = timezone.now()
    return WebhookEvent.objects.create(
        id=uuid.uuid4(),
        merchant=actor.merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id="t-1",
        sequence=2,
        payload={"id": "t-1"},
        created_at=now - timedelta(minutes=1),
        next_attempt_at=now - timedelta(minutes=1),
    )


def test_web_worker_and_beat_run_under_production_settings_without_var(
    shop: Actor, callback: CallbackServer, own_redis: OwnRedis, tmp_path: Path
) -> None:
    var_dir = tmp_path / "no-var"
    env = production_env(own_redis.url, var_dir)
    event = due_event(shop)
    assert Merchant.objects.get(pk=shop.merchant.pk).callback_url == callback.url

    worker = celery_worker(env, tmp_path / "worker.log", "threads").start()
    beat = celery_beat(env, tmp_path / "beat.log").start()
    try:
        with web_serving(env, tmp_path / "web.log") as web:
            health = requests.get(f"{web}/health", timeout=10)
            assert health.status_code == 200
            assert health.json()["data"]["checks"] == {
                "database": "ok",
                "cache": "ok",
                "broker": "ok",
            }
            assert "Strict-Transport-Security" not in health.headers  # plain HTTP, not redirected
            plain = requests.get(
                f"{web}/v1/wallets/me/balance?x=1",
                headers=shop.headers,
                timeout=10,
                allow_redirects=False,
            )
            assert plain.status_code == 301
            assert plain.headers["Location"] == f"https{web[4:]}/v1/wallets/me/balance?x=1"
            proxied = shop.headers | OVER_TLS
            balance = requests.get(f"{web}/v1/wallets/me/balance", headers=proxied, timeout=10)
            assert balance.status_code == 200, balance.text
            assert balance.json()["success"] is True
            assert balance.headers["Strict-Transport-Security"] == "max-age=31536000"
            market = requests.get(f"{web}/secure/market", headers=proxied, timeout=10)
            assert market.status_code == 503, market.text
            assert market.json()["error"]["key"] == "SERVICE_UNAVAILABLE"
            helper = requests.get(f"{web}/sandbox/clock", headers=proxied, timeout=10)
            assert helper.status_code == 404
            assert helper.json()["error"]["key"] == "NOT_FOUND"
            wait_until(
                lambda: WebhookDelivery.objects.filter(event=event).exists(),
                "the swept event's attempt",
                alive=[worker, beat],
            )
            assert worker.alive()
            assert beat.alive()
    finally:
        beat.stop()
        worker.stop()

    (attempt,) = WebhookDelivery.objects.filter(event=event)
    assert "https" in attempt.error  # the production guard, not the sandbox, decided
    assert callback.received == []
    assert not var_dir.exists()


def test_production_settings_refuse_to_start_without_redis(tmp_path: Path) -> None:
    """Without Redis the cache and broker would be the quick start's files under VAR_DIR."""
    env = production_env("", tmp_path / "no-var")
    del env["REDIS_URL"]
    started = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0
    assert "REDIS_URL must be set" in started.stderr
    assert not (tmp_path / "no-var").exists()
