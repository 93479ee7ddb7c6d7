"""What the metrics cost a request, in process, with no I/O: the request middleware's
bookkeeping (a counter, a histogram, the throttled pool reading) around a view that does
nothing, with and without multiprocess mode (each in a process of its own: the mode is chosen
when prometheus-client is imported), against the same chain without the middleware.

    .venv/bin/python bench/metrics_cost.py [--requests 200000] [--rounds 5]

Prints microseconds per request, the best of the rounds (the least disturbed by neighbours)."""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent


def measure(requests: int, rounds: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from django.conf import settings

    # Importing config (its Celery app) reads these two.
    settings.configure(DATABASES={}, USE_TZ=True, SANDBOX=False, LOG_FORMAT="line")
    from core.api.metrics import RequestMetricsMiddleware

    response = SimpleNamespace(status_code=200)
    match = SimpleNamespace(route="v1/wallets/me/balance")
    request = SimpleNamespace(method="GET", resolver_match=match)

    def view(_request: object) -> object:
        return response

    chains = {"without": view, "with": RequestMetricsMiddleware(view)}  # type: ignore[arg-type]
    best = {name: float("inf") for name in chains}
    for _ in range(rounds):
        for name, chain in chains.items():
            started = time.perf_counter()
            for _ in range(requests):
                chain(request)
            elapsed = (time.perf_counter() - started) / requests * 1e6
            best[name] = min(best[name], elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        best = measure(args.requests, args.rounds)
        print(f"{best['with'] - best['without']:.2f}")
        return
    argv = [sys.executable, __file__, "--child", "--requests", str(args.requests)]
    argv += ["--rounds", str(args.rounds)]
    print("| mode | metrics per request (µs) |\n|---|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for mode, extra in (
            ("one process (no PROMETHEUS_MULTIPROC_DIR)", {}),
            ("multiprocess (memory-mapped files)", {"PROMETHEUS_MULTIPROC_DIR": folder}),
        ):
            env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
            done = subprocess.run(argv, env=env | extra, capture_output=True, text=True, check=True)
            print(f"| {mode} | {done.stdout.strip()} |")


if __name__ == "__main__":
    main()
