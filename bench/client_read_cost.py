"""What the client reads and the no-op cost in process (issue 32): CPU per request through the
whole Django stack (``django.test.Client``, no network), statements and Redis round trips per
request, Python calls per request, optionally a cProfile of each.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_clientreads_bench \\
        BENCH_REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/client_read_cost.py [--requests 500] [--profile] [--dump out.json]

The database is filled as the suite's (``bench/suite_data.py``): the market seeded (50,000 items,
1,000,000 listings), reader merchants with ten clients each, their deposit addresses allocated
and their inventories fetched once before the run. The readers are made once and found by name
afterwards (a new key and new client tokens each run), so two checkouts read the same rows;
the budgets are lifted as the suite lifts them (each request is still counted in the gate's
round trip, none refused). Requests go round the clients, as wrk goes round the suite's lines.
``--dump`` writes each endpoint's bodies without what changes from run to run (``requestId``,
the inventory's ``updatedAt``, the clock's ``now``), to compare two checkouts byte for byte."""

import argparse
import cProfile
import json
import pstats
import re
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))

from harness import ensure_database, setup_django

READERS = 4
CLIENTS_PER_READER = 10
NAME = "client reads reader {}"


def _readers():  # type: ignore[no-untyped-def]
    """(api key, [client tokens]) of each reader: merchants made once, keys and tokens new."""
    from suite_data import PLATFORM_BASE, _merchant
    from tradedata import TRADE_URL

    from crypto.services.addresses import allocation_get
    from merchants.models import Merchant, Scope
    from merchants.services import ClientData, api_key_create, client_authenticate
    from trading.accounts.selectors.inventory import inventory_assets

    made = []
    for n in range(READERS):
        name = NAME.format(n)
        merchant = Merchant.objects.filter(name=name).first()
        if merchant is None:
            _merchant(name, "", Decimal(10_000_000), [])
            merchant = Merchant.objects.get(name=name)
        _, key = api_key_create(merchant=merchant, scopes=[Scope.CORE_ACCESS])
        tokens = []
        for c in range(CLIENTS_PER_READER):
            partner = 20_000 + n * CLIENTS_PER_READER + c
            platform_id = str(PLATFORM_BASE + partner)
            tokens.append(
                client_authenticate(
                    merchant=merchant,
                    platform_id=platform_id,
                    trade_url=TRADE_URL.format(partner),
                    client_id=None,
                    client_data=ClientData(),
                )
            )
            allocation_get(merchant=merchant, platform_id=platform_id)
            inventory_assets(merchant=merchant, platform_id=platform_id, game=730)
        made.append((str(merchant.pk), key, tokens))
    return made


def _lift(merchant_ids: list[str]) -> None:
    from suite import rate_limits_lift

    rate_limits_lift(merchant_ids)


class Counters:
    """Statements (Django's execute wrappers) and Redis round trips (replies read)."""

    def __init__(self) -> None:
        self.statements = 0
        self.redis = 0
        self.trace: list[str] | None = None

    def install(self) -> None:
        import redis.connection

        counters = self
        read_response = redis.connection.AbstractConnection.read_response

        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            counters.redis += 1
            return read_response(*args, **kwargs)

        redis.connection.AbstractConnection.read_response = counted  # type: ignore[method-assign]

    def statement(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.statements += 1
        if self.trace is not None:
            self.trace.append(" ".join(sql.split())[:200])
        return execute(sql, params, many, context)


VARYING = (
    re.compile(r'"requestId":"[^"]*"'),
    re.compile(r'"updatedAt":"[^"]*"'),
    re.compile(r'"now":"[^"]*"'),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--profile", action="store_true", help="cProfile each endpoint (stderr)")
    parser.add_argument("--sort", default="tottime", help="the profile's order (pstats)")
    parser.add_argument("--only", help="one endpoint: no-op, balance, inventory, deposit address")
    parser.add_argument("--sql", action="store_true", help="print the statements of a request")
    parser.add_argument("--dump", help="write each endpoint's bodies here (JSON)")
    args = parser.parse_args()
    ensure_database()
    setup_django()
    from django.db import connection
    from django.test import Client
    from market import seed_if_needed

    print(seed_if_needed(), file=sys.stderr)
    readers = _readers()
    counters = Counters()
    counters.install()
    keys = [{"api-key": key} for _, key, _ in readers]
    bearers = [{"Authorization": f"Bearer {t}"} for _, _, tokens in readers for t in tokens]
    endpoints = {
        "no-op": ("/sandbox/clock", keys),
        "balance": ("/v1/wallets/me/balance", keys),
        "inventory": ("/client/inventory", bearers),
        "deposit address": ("/client/crypto/deposit-address?chain=ETH", bearers),
    }
    http = Client()
    bodies: dict[str, list[str]] = {}
    print(
        "| endpoint | CPU ms/req | statements/req | Redis round trips/req | Python calls/req |\n"
        "|---|---:|---:|---:|---:|"
    )
    for name, (path, headers) in endpoints.items():
        if args.only and name != args.only:
            continue
        _lift([merchant_id for merchant_id, _, _ in readers])

        def run(n: int, path: str = path, headers: list[dict[str, str]] = headers) -> None:
            for i in range(n):
                response = http.get(path, headers=headers[i % len(headers)])
                assert response.status_code == 200, (path, response.content)

        run(args.warmup)
        bodies[name] = []
        for h in headers:
            body = http.get(path, headers=h).content.decode()
            for pattern in VARYING:
                body = pattern.sub("", body)
            bodies[name].append(body)
        counters.trace = []
        with connection.execute_wrapper(counters.statement):
            run(1)
        trace, counters.trace = counters.trace, None
        statements, redis_trips = counters.statements, counters.redis
        with connection.execute_wrapper(counters.statement):
            cpu = time.process_time()
            run(args.requests)
            cpu = time.process_time() - cpu
        statements = counters.statements - statements
        redis_trips = counters.redis - redis_trips
        # Function calls are steady where time is not on a shared machine. CPU time, not wall
        # time: waits for PostgreSQL and Redis would hide where the CPU goes.
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        run(args.requests if args.profile else 50)
        profile.disable()
        calls = pstats.Stats(profile).total_calls // (args.requests if args.profile else 50)  # type: ignore[attr-defined]
        n = args.requests
        print(
            f"| {name} | {1000 * cpu / n:.2f} | {statements / n:.1f} | {redis_trips / n:.1f} "
            f"| {calls:,} |",
            flush=True,
        )
        if args.sql:
            print(f"{name}:\n  " + "\n  ".join(trace), file=sys.stderr)
        if args.profile:
            print(f"\n{name}:", file=sys.stderr)
            pstats.Stats(profile, stream=sys.stderr).sort_stats(args.sort).print_stats(45)
    if args.dump:
        Path(args.dump).write_text(json.dumps(bodies, indent=1))


if __name__ == "__main__":
    main()
