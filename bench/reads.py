"""The read endpoints of issue 17 in process: CPU per request through the whole Django stack
(``django.test.Client``, no network), statements per request, optionally a cProfile of each.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_reads_perf \
        BENCH_REDIS_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python bench/reads.py [--requests 300] [--profile] [--dump bodies.json]

Seeds on first use, through the services: one ledger merchant with the suite's 10,000
fundings, one funded reader merchant with a client whose deposit addresses exist. ``--dump``
writes every endpoint's body, to compare two checkouts byte for byte."""

import argparse
import cProfile
import json
import pstats
import re
import sys
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))

from harness import ensure_database, setup_django

READER = "reads reader"


def _reader_access(reader):  # type: ignore[no-untyped-def]
    from suite_data import PLATFORM_BASE, Client, Seller
    from tradedata import TRADE_URL

    from merchants.models import Scope
    from merchants.services import ClientData, api_key_create, client_authenticate

    _, key = api_key_create(merchant=reader, scopes=[Scope.CORE_ACCESS])
    platform_id = str(PLATFORM_BASE + 1)
    token = client_authenticate(
        merchant=reader,
        platform_id=platform_id,
        trade_url=TRADE_URL.format(1),
        client_id=None,
        client_data=ClientData(),
    )
    client = Client(str(reader.pk), token, platform_id)
    return Seller(str(reader.pk), key, reader.withdraw_fee_rate, [client])


def _world() -> dict[str, tuple[str, dict[str, str]]]:
    """Each endpoint's path and headers."""
    from suite_data import _copy_fundings, _merchant
    from tradedata import loaded_merchants

    from crypto.services.addresses import allocation_get
    from ledger.models import Funding
    from merchants.models import Merchant, Scope
    from merchants.services import api_key_create

    (ledger,) = loaded_merchants("reads ledger", 1, _copy_fundings, "ledger_funding")
    _, ledger_key = api_key_create(merchant=ledger, scopes=[Scope.LEDGER_READ])
    funding = Funding.objects.filter(merchant=ledger).order_by("id").values_list("id", flat=True)[0]
    # The reader is made once and then found by name: a new key and client token each run, the
    # same balance and addresses (the bodies of two checkouts compare).
    reader = Merchant.objects.filter(name=READER).first()
    if reader is None:
        _merchant(READER, "", Decimal(10_000), [])
        reader = Merchant.objects.get(name=READER)
    seller = _reader_access(reader)
    (client,) = seller.clients
    allocation_get(merchant=Merchant.objects.get(pk=seller.id), platform_id=client.platform_id)
    ledger_headers = {"api-key": ledger_key}
    return {
        "no-op": ("/sandbox/clock", {"api-key": seller.key}),
        "ledger list": ("/v1/ledger/transactions", ledger_headers),
        "ledger lookup": (f"/v1/ledger/transactions/{funding}", ledger_headers),
        "balance": ("/v1/wallets/me/balance", {"api-key": seller.key}),
        "deposit address": (
            "/client/crypto/deposit-address?chain=ETH",
            {"Authorization": f"Bearer {client.token}"},
        ),
    }


def _recorder(queries: list[str]):  # type: ignore[no-untyped-def]
    """An execute wrapper that notes each statement (the pool's connections keep no log)."""

    def record(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        queries.append(sql)
        return execute(sql, params, many, context)

    return record


def _unlimited() -> None:
    """Budgets too large to reach: the requests are still counted (the gate's round trip), never
    refused."""
    from core.api.routes import routed_views
    from merchants.ratelimits import Rate, Rates
    from merchants.views import CallerApiView

    for _, view in routed_views():
        limited = view.rate_limit if issubclass(view, CallerApiView) else None
        if limited is not None:
            rate = Rate(10**9, limited.rates.verified.window_seconds)
            view.rate_limit = replace(limited, rates=Rates(rate, rate))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="cumulative", help="the profile's order (pstats)")
    parser.add_argument("--dump")
    parser.add_argument("--only", help="one endpoint: ledger list, ledger lookup, balance, ...")
    parser.add_argument("--sql", action="store_true", help="print the statements of a request")
    parser.add_argument(
        "--without-metrics", action="store_true", help="no request metrics (their cost)"
    )
    args = parser.parse_args()
    ensure_database()
    setup_django()
    from django.conf import settings
    from django.db import connection
    from django.test import Client

    if args.without_metrics:
        settings.MIDDLEWARE = [
            name for name in settings.MIDDLEWARE if not name.endswith("RequestMetricsMiddleware")
        ]

    _unlimited()
    world = _world()
    http = Client()
    bodies = {}
    print(
        "| endpoint | CPU ms/req | of it, the request's thread | wall ms/req | statements |"
        " Python calls/req |\n|---|---:|---:|---:|---:|---:|"
    )
    for name, (path, headers) in world.items():
        if args.only and name != args.only:
            continue
        for _ in range(30):
            response = http.get(path, headers=headers)
            assert response.status_code == 200, (name, response.content)
        # Without the request's own id, which is new each request.
        bodies[name] = re.sub(r'"requestId":"[^"]*"', "", response.content.decode())
        queries: list[str] = []
        with connection.execute_wrapper(_recorder(queries)):
            http.get(path, headers=headers)
        wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        for _ in range(args.requests):
            http.get(path, headers=headers)
        cpu = (time.process_time() - cpu) / args.requests * 1000
        own = (time.thread_time() - own) / args.requests * 1000
        wall = (time.perf_counter() - wall) / args.requests * 1000
        # Function calls are steady where time is not on a shared machine.
        counted = cProfile.Profile()
        counted.enable()
        for _ in range(50):
            http.get(path, headers=headers)
        counted.disable()
        calls = pstats.Stats(counted).total_calls // 50  # type: ignore[attr-defined]
        print(
            f"| {name} | {cpu:.2f} | {own:.2f} | {wall:.2f} | {len(queries)} | {calls:,} |",
            flush=True,
        )
        if args.sql:
            print("\n".join(queries), file=sys.stderr)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(args.requests):
                http.get(path, headers=headers)
            profile.disable()
            pstats.Stats(profile, stream=sys.stderr).sort_stats(args.sort).print_stats(40)
    if args.dump:
        Path(args.dump).write_text(json.dumps(bodies, indent=1))


if __name__ == "__main__":
    main()
