"""The trading figures of issue 4: POST /secure/buy throughput with the worker running (and the
wallet invariant check afterwards), and GET /secure/trades page 1 against deep keyset pages
over 1,000,000 trades.

    .venv/bin/python bench/trading.py [--seconds 20] [--merchants 20]

Needs the market seeded (bench/market.py seeds it). Creates 1,000,000 trades on first use.
"""

import argparse
import sys

from harness import (
    Request,
    drive,
    ensure_database,
    flush_rate_limits,
    manage,
    receiver,
    setup_django,
    stack,
    table,
)
from tradedata import RECEIVER_PORT, buy_requests, buyers, drain, trade_history, untaken_listings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--merchants", type=int, default=20)
    args = parser.parse_args()
    ensure_database()
    setup_django()
    with receiver(RECEIVER_PORT):
        people = buyers(args.merchants)
        buys = buy_requests(people, untaken_listings(2_000 * len(people)))
        history = trade_history()
        flush_rate_limits()
        with stack(celery=True) as service:
            buy = drive(
                service.base_url,
                "POST /secure/buy (worker running)",
                buys,
                seconds=args.seconds,
                warmup_seconds=0,
            )
            drained = drain()
            if drained is None:
                raise SystemExit("the worker did not drain the queue in time")
            check = manage("check_wallet")
            flush_rate_limits()
            history_runs = []
            for connections in (8, 1):
                for label, depth in (
                    ("page 1", None),
                    ("10,000 trades deep", 0),
                    ("90,000 trades deep", 1),
                ):
                    flush_rate_limits()
                    history_runs.append(
                        drive(
                            service.base_url,
                            f"GET /secure/trades {label}, {connections} client(s)",
                            [
                                Request(
                                    "GET",
                                    "/secure/trades?limit=20"
                                    + (f"&cursor={c[depth]}" if depth is not None else ""),
                                    {"api-key": k},
                                )
                                for k, c in history
                            ],
                            seconds=args.seconds,
                            connections=connections,
                            threads=min(2, connections),
                        )
                    )
    print(table([buy, *history_runs]))
    print(
        f"worker drained the backlog {drained:.1f} s after the load; check_wallet: {check.strip()}"
    )
    for start in (0, 3):
        page1, deep, deeper = history_runs[start : start + 3]
        print(
            f"depth ratios, {page1.name.rsplit(', ', 1)[1]} (p95): 10,000 deep "
            f"{deep.p95_ms / page1.p95_ms:.2f}, 90,000 deep {deeper.p95_ms / page1.p95_ms:.2f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
