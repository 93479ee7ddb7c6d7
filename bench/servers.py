"""granian (WSGI) against gunicorn (gthread, config/gunicorn.py), each serving the limit app and
the service with the same processes and threads, in alternating rounds on the same machine:

    .venv/bin/python bench/servers.py [--seconds 8] [--rounds 2]

Per round and server: the three limits and four of the service's endpoints (req/s, p50, p99,
non-2xx); then a reload under load (wrk on the no-op while the master gets SIGHUP: every request
must still be answered 2xx); then the malformed requests of tests/hostile/test_web_server.py
(status and content type of what each server answers). Prints markdown tables."""

import argparse
import json
import os
import signal
import socket
import threading
import time

import suite_data as data
from harness import (
    RESULTS,
    Request,
    Result,
    drive,
    ensure_database,
    receiver,
    setup_django,
    stack,
)
from limits import NO_IO, READ, WRITE, limit_lines, limit_server, limit_tables_ensure
from suite import CONNECTIONS, WEB_THREADS, WEB_WORKERS, rate_limits_lift
from tradedata import RECEIVER_PORT

# (name, server, connections a gunicorn worker takes): gunicorn as config/gunicorn.py has it
# (1,000: keep-alive), and as the bench ran it before (as many as its threads: no keep-alive,
# since gthread keeps a connection only when it may take more than its threads).
VARIANTS = [
    ("granian", "granian", 1000),
    ("gunicorn", "gunicorn", 1000),
    ("gunicorn, 4 connections", "gunicorn", WEB_THREADS),
]
# From tests/hostile/test_web_server.py: what a front server refuses before the application.
MALFORMED = {
    "long URL": b"GET /secure/trades?x=" + b"a" * 9_000 + b" HTTP/1.1\r\n",
    "NUL in URL": b"GET /secure/trades/a\x00b HTTP/1.1\r\n",
    "20 KB header": b"GET /secure/trades HTTP/1.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n",
    "150 headers": b"GET /secure/trades HTTP/1.1\r\n" + b"X-Many: a\r\n" * 150,
    "NUL in header": b"GET /secure/trades HTTP/1.1\r\nX-Nul: a\x00b\r\n",
    "space in header name": b"GET /secure/trades HTTP/1.1\r\nX Space: a\r\n",
}


def exchange(port: int, head: bytes) -> str:
    """What the server answers a raw request: status line, content type, start of the body."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(head + b"Host: x\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError as exc:
        return f"connection error: {exc}"
    if not answer:
        return "connection closed, no answer"
    header, _, body = answer.partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    kind = next(
        (h.split(":", 1)[1].strip() for h in lines if h.lower().startswith("content-type")), "-"
    )
    return f"{lines[0]} / {kind} / {body[:60]!r}"


def reload_under_load(service, lines: list[Request], seconds: int) -> Result:  # type: ignore[no-untyped-def]
    """wrk on ``lines`` for ``seconds``; SIGHUP to the master a third of the way in."""
    timer = threading.Timer(seconds / 3, lambda: os.kill(service.web.pid, signal.SIGHUP))
    timer.start()
    try:
        return drive(
            service.base_url,
            "reload",
            lines,
            seconds=seconds,
            connections=CONNECTIONS,
            warmup_seconds=0,
        )
    finally:
        timer.join()


def row(server: str, round_: int, name: str, r: Result) -> str:
    return (
        f"| {round_} | {server} | {name} | {r.rps:.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} "
        f"| {r.non_2xx} | {r.errors} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    ensure_database()
    setup_django()
    limit_tables_ensure()
    rows, reloads, refusals = [], [], []
    with receiver(RECEIVER_PORT) as hooks:
        cast = data.cast_create(
            prefix=f"servers {time.strftime('%Y%m%dT%H%M%S')}", callback_url=hooks
        )
        endpoints = {
            "GET /sandbox/clock (no-op)": data.baseline_lines(cast),
            "GET /v1/wallets/me/balance": data.balance_lines(cast),
            "GET /secure/market/item": data.market_item_lines(cast),
            "POST /auth/authenticate-client": data.authenticate_lines(cast),
        }
        for round_ in range(1, args.rounds + 1):
            for server, kind, connections in VARIANTS if round_ % 2 else reversed(VARIANTS):
                size = {
                    "server": kind,
                    "workers": WEB_WORKERS,
                    "threads": WEB_THREADS,
                    "worker_connections": connections,
                }
                with limit_server(**size) as limits:  # type: ignore[arg-type]
                    for kind in (NO_IO, READ, WRITE):
                        drive(
                            limits.base_url,
                            kind,
                            limit_lines(kind),
                            seconds=2,
                            warmup_seconds=0,
                            connections=CONNECTIONS,
                        )
                        result = drive(
                            limits.base_url,
                            kind,
                            limit_lines(kind),
                            seconds=args.seconds,
                            warmup_seconds=0,
                            connections=CONNECTIONS,
                        )
                        rows.append(row(server, round_, f"limit {kind}", result))
                        print(rows[-1], flush=True)
                with stack(**size) as service:  # type: ignore[arg-type]
                    rate_limits_lift(cast.merchant_ids())
                    for name, lines in endpoints.items():
                        drive(
                            service.base_url,
                            name,
                            lines,
                            seconds=2,
                            warmup_seconds=0,
                            connections=CONNECTIONS,
                        )
                        result = drive(
                            service.base_url,
                            name,
                            lines,
                            seconds=args.seconds,
                            warmup_seconds=0,
                            connections=CONNECTIONS,
                        )
                        rows.append(row(server, round_, name, result))
                        print(rows[-1], flush=True)
                    reload = reload_under_load(
                        service, endpoints["GET /sandbox/clock (no-op)"], 3 * args.seconds
                    )
                    reloads.append(row(server, round_, "no-op, SIGHUP a third in", reload))
                    print(reloads[-1], flush=True)
                    if round_ == 1:
                        port = int(service.base_url.rsplit(":", 1)[1])
                        for name, head in MALFORMED.items():
                            refusals.append(f"| {server} | {name} | {exchange(port, head)} |")
    header = (
        "| round | server | endpoint | req/s | p50 ms | p99 ms | non-2xx | socket errors |\n"
        "|---|---|---|---:|---:|---:|---:|---:|"
    )
    out = "\n".join(
        [
            header,
            *rows,
            "",
            header,
            *reloads,
            "",
            "| server | request | answer |",
            "|---|---|---|",
            *refusals,
        ]
    )
    print(out)
    (RESULTS / "servers.md").write_text(out + "\n")
    print(json.dumps({"written": str(RESULTS / "servers.md")}))


if __name__ == "__main__":
    main()
