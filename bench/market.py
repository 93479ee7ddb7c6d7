"""The market figures of issue 3: market search with a sort over 1,000,000 listings (8
concurrent clients), perPage=1000, the whole price book, a cached client inventory.

    .venv/bin/python bench/market.py [--seconds 20] [--merchants 200]

Seeds 50,000 items and 1,000,000 listings into the bench database first if it has fewer.
Requests are spread over many merchants, as in production, so no merchant's rate limit is hit.
"""

import argparse
import itertools
import time
from urllib.parse import quote

from harness import (
    Request,
    drive,
    ensure_database,
    flush_rate_limits,
    manage,
    setup_django,
    stack,
    table,
)

SEARCHES = [
    "redline",
    "ak-47",
    "doppler",
    "asiimov",
    "karambit",
    "fade",
    "hyper beast",
    "stattrak",
    "case hardened",
    "printstream",
    "m4a1-s",
    "awp",
    "glock",
]
SORTS = ["relevance", "priceAsc", "priceDesc", "nameAsc", "nameDesc"]
# Reseeding (about 50 s) only below this: each benchmark run buys a few thousand listings.
SEEDED_FLOOR = 990_000


def seed_if_needed() -> str:
    from sandbox.models import SandboxListing

    listings = SandboxListing.objects.count()
    if listings >= SEEDED_FLOOR:
        return f"market already seeded ({listings:,} listings)"
    started = time.perf_counter()
    manage("seed_sandbox", "--items", "50000", "--listings", "1000000")
    return f"seeded 50,000 items and 1,000,000 listings in {time.perf_counter() - started:.1f} s"


def actors(count: int) -> list[tuple[str, str]]:
    """(api key, client token) of fresh verified merchants."""
    from merchants.models import Scope
    from merchants.services import ClientData, api_key_create, client_authenticate, merchant_create

    made = []
    for n in range(count):
        merchant = merchant_create(name=f"bench market {n}", is_verified=True)
        _, key = api_key_create(merchant=merchant, scopes=[Scope.CORE_ACCESS])
        partner = 1000 + n
        token = client_authenticate(
            merchant=merchant,
            platform_id=str(76561197960265728 + partner),
            trade_url=f"https://steamcommunity.com/tradeoffer/new/?partner={partner}&token=Ab3_x-Z9",
            client_id=None,
            client_data=ClientData(),
        )
        made.append((key, token))
    return made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--merchants", type=int, default=200)
    args = parser.parse_args()
    ensure_database()
    setup_django()
    print(seed_if_needed())
    people = actors(args.merchants)
    flush_rate_limits()
    keys = [{"api-key": key} for key, _ in people]
    tokens = [{"Authorization": f"Bearer {token}"} for _, token in people]
    combos = list(itertools.product(SEARCHES, SORTS))
    combos *= 1 + len(tokens) // len(combos)
    searches = [
        Request("GET", f"/client/market?search={quote(term)}&sort={sort}", tokens[n % len(tokens)])
        for n, (term, sort) in enumerate(combos)
    ]
    with stack() as service:
        results = [
            drive(
                service.base_url,
                "GET /client/market, search + sort, 1M listings",
                searches,
                seconds=args.seconds,
            ),
            drive(
                service.base_url,
                "GET /secure/market?perPage=1000&sort=priceAsc",
                [Request("GET", "/secure/market?perPage=1000&sort=priceAsc", h) for h in keys],
                seconds=args.seconds,
            ),
            drive(
                service.base_url,
                "GET /secure/prices (whole book, cached), 8 clients",
                [Request("GET", "/secure/prices", h) for h in keys],
                seconds=args.seconds,
            ),
            drive(
                service.base_url,
                "GET /secure/prices (whole book, cached), 1 client",
                [Request("GET", "/secure/prices", h) for h in keys],
                seconds=args.seconds,
                connections=1,
                threads=1,
            ),
            drive(
                service.base_url,
                "GET /client/inventory (cached)",
                [Request("GET", "/client/inventory", h) for h in tokens],
                seconds=args.seconds,
            ),
        ]
    print(table(results))


if __name__ == "__main__":
    main()
