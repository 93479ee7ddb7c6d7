"""The real-time feed under load (issue 15): open sockets, trade changes per second, the time
from a change's commit to its receipt on every socket of its merchant, and the feed's memory
per socket.

    .venv/bin/python bench/feed.py [--sockets 1000] [--merchants 100] [--rate 100] [--seconds 30]
                                   [--drivers 4] [--port 8096]

One ``manage.py feed`` process (Redis bus) on the bench database and Redis; the sockets live in
a second process (this script with ``--clients``): minimal Engine.IO 4 websocket clients on
aiohttp, so the measuring side costs little CPU. This process is the publisher: ``--drivers``
forked processes move withdrawal trades (initiated -> pending -> active -> hold -> completed)
through the trade state machine (``trade_apply``, one transaction per change, each told by
``trade_events_publish``, so each change also writes its webhook to the outbox) at ``--rate``
per second, spread over the merchants, and note when each commit returned. Every socket notes
when each ``trade`` event arrived. Each change reaches every socket of its merchant
(``--sockets`` / ``--merchants`` of them).
"""

import argparse
import asyncio
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import orjson

MOVES = ("pending", "active", "hold", "completed")
CONNECT_SECONDS = 120


# The sockets' side (``--clients``): no Django here.


async def _socket(
    session: aiohttp.ClientSession, url: str, key: str, index: int, out: list[tuple]
) -> None:
    """One Engine.IO 4 / Socket.IO 5 client: open, join the main namespace, answer pings, note
    each trade event (trade id, status, receipt time)."""
    async with session.ws_connect(
        f"{url}/socket.io/?EIO=4&transport=websocket&apiKey={key}", heartbeat=None
    ) as ws:
        await ws.receive()  # "0{...}": Engine.IO open
        await ws.send_str("40")
        connected = await ws.receive()
        if not str(connected.data).startswith("40"):
            raise RuntimeError(f"socket {index} refused: {connected.data}")
        _READY.append(index)
        async for message in ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            data = message.data
            if data == "2":
                await ws.send_str("3")
            elif data.startswith('42["trade"'):
                received = time.time()
                trade = orjson.loads(data[2:])[1]["trade"]
                out.append((trade["id"], trade["status"], received))


_READY: list[int] = []


async def _clients(url: str, keys: list[str], receipts: Path) -> None:
    out: list[tuple] = []
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    deadline = time.monotonic() + CONNECT_SECONDS
    # aiohttp's connector holds 100 connections by default and a websocket keeps its own for
    # good: without lifting the limit the 101st socket waits for ever.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = []
        for start in range(0, len(keys), 50):  # connect in batches: 50 auth lookups at a time
            batch = [
                asyncio.create_task(_socket(session, url, key, start + n, out))
                for n, key in enumerate(keys[start : start + 50])
            ]
            tasks += batch
            while len(_READY) < min(start + 50, len(keys)):
                failed = [t for t in tasks if t.done()]
                if failed:
                    failed[0].result()
                if stop.is_set() or time.monotonic() > deadline:
                    print(f"CONNECTED ONLY {len(_READY)} of {len(keys)}", flush=True)
                    return
                await asyncio.sleep(0.02)
        print(f"READY {len(_READY)}", flush=True)
        await stop.wait()
        receipts.write_bytes(orjson.dumps(out))
        for task in tasks:
            task.cancel()
    print("DONE", flush=True)


# The publisher's side.


def _merchants(count: int, per_merchant: int) -> tuple[list[Any], list[str]]:
    """Fresh merchants (no callback URL: their webhooks stay in the outbox) and one key per
    socket, merchants in turn."""
    from merchants.models import Scope
    from merchants.services import api_key_create, merchant_create

    run = uuid.uuid4().hex[:6]
    merchants = [merchant_create(name=f"feed bench {run} {n}") for n in range(count)]
    keys = [
        api_key_create(merchant=merchants[n % count], scopes=[Scope.CORE_ACCESS])[1]
        for n in range(count * per_merchant)
    ]
    return merchants, keys


def _outbox_end(merchants: list[Any]) -> None:
    """This run's webhooks, which have nowhere to go, end failed: left pending, beat's sweep would
    have the next suite run's worker attempt them for 72 hours, and its drain wait on them."""
    from merchants.webhooks.models import WebhookEvent

    WebhookEvent.objects.filter(merchant__in=merchants, status=WebhookEvent.Status.PENDING).update(
        status=WebhookEvent.Status.FAILED, next_attempt_at=None, last_error="feed bench: no URL"
    )


def _trades(merchants: list[Any], count: int) -> list[str]:
    """Withdrawal trades of one item each, initiated, spread over the merchants."""
    from django.utils import timezone

    from trading.models import Trade, TradeItem

    now = timezone.now()
    trades = [
        Trade(
            merchant=merchants[n % len(merchants)],
            type="withdraw",
            source="self",
            game=730,
            client_platform_id="76561197960265829",
            client_trade_url="https://steamcommunity.com/tradeoffer/new/?partner=101&token=Ab3_x-Z9",
            total_price=Decimal("10.50"),
            created_at=now,
            updated_at=now,
        )
        for n in range(count)
    ]
    Trade.objects.bulk_create(trades)
    TradeItem.objects.bulk_create(
        TradeItem(
            trade=trade,
            position=0,
            public_id=str(uuid.uuid4()),
            appid=730,
            price=Decimal("10.50"),
            sourcing_price=Decimal("10.00"),
            delivery="standard",
            details={"name": "AK-47 | Redline"},
            updated_at=now,
        )
        for trade in trades
    )
    return [str(trade.id) for trade in trades]


def _drive(trade_ids: list[str], rate: float, changes: int, drivers: int) -> tuple[dict, float]:
    """``changes`` trade changes at ``rate`` per second, each trade's next move a full round of
    the trades later, from ``drivers`` processes (threads of one process shared its GIL and fell
    behind the rate on this machine; spawned, not forked, as a fork would share the parent's
    database connection pool; a trade's moves stay in one process, in order). Returns when each
    commit returned, and the rate achieved."""
    started = time.time() + 5  # every child starts on the same schedule, once all have booted
    with multiprocessing.get_context("spawn").Pool(drivers) as pool:
        parts = pool.starmap(
            _drive_part,
            [(part, drivers, trade_ids, rate, changes, started) for part in range(drivers)],
        )
    committed = {moment: at for part in parts for moment, at in part.items()}
    return committed, changes / (time.time() - started)


def _drive_part(
    part: int, drivers: int, trade_ids: list[str], rate: float, changes: int, started: float
) -> dict[tuple[str, str], float]:
    """One driver's share: the trades whose index modulo ``drivers`` is ``part``."""
    from harness import setup_django

    setup_django()
    from django.db import transaction

    from trading.trades.channels import trade_events_publish
    from trading.trades.services import Move, trade_apply, trade_lock

    committed: dict[tuple[str, str], float] = {}
    for n in range(changes):
        trade_index = n % len(trade_ids)
        if trade_index % drivers != part:
            continue
        trade_id, to = trade_ids[trade_index], MOVES[n // len(trade_ids)]
        pause = started + n / rate - time.time()
        if pause > 0:
            time.sleep(pause)
        moment: list[float] = []
        with transaction.atomic():
            # Registered first, so it runs first after the commit (before the publish).
            transaction.on_commit(lambda moment=moment: moment.append(time.time()))
            trade, items = trade_lock(trade_id=trade_id)
            change = trade_apply(
                trade=trade, items=items, moves=[Move(items[0], to)], actor="bench", kind="bench"
            )
            trade_events_publish(change)
        committed[(trade_id, to)] = moment[0]
    return committed


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--merchants", type=int, default=100)
    parser.add_argument("--rate", type=float, default=100.0, help="trade changes per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--drivers", type=int, default=4, help="processes making the changes")
    parser.add_argument("--port", type=int, default=8096)
    parser.add_argument("--clients", help=argparse.SUPPRESS)  # internal: the sockets' process
    args = parser.parse_args()
    if args.clients:
        spec = orjson.loads(Path(args.clients).read_bytes())
        asyncio.run(_clients(spec["url"], spec["keys"], Path(spec["receipts"])))
        return

    from harness import (
        BENCH_ENV,
        RESULTS,
        ROOT,
        VENV,
        ensure_database,
        flush_rate_limits,
        process_group_stop,
        setup_django,
    )

    if args.sockets % args.merchants:
        raise SystemExit("--sockets must be a multiple of --merchants")
    per_merchant = args.sockets // args.merchants
    changes = int(args.rate * args.seconds)
    ensure_database()
    setup_django()
    merchants, keys = _merchants(args.merchants, per_merchant)
    trade_ids = _trades(merchants, math.ceil(changes / len(MOVES)))

    from django.conf import settings

    # A channel of this run's own: the drivers (spawned with this environment) publish there, the
    # feed reads it.
    channel = settings.FEED_CHANNEL = f"trading-feed-bench:{uuid.uuid4().hex[:8]}"
    os.environ["FEED_CHANNEL"] = channel
    RESULTS.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        **BENCH_ENV,
        "FEED_CHANNEL": channel,
        "FEED_MAX_SOCKETS_PER_MERCHANT": str(max(per_merchant, 100)),
    }
    url = f"http://127.0.0.1:{args.port}"
    with open(RESULTS / "feed.log", "ab") as log:
        feed = subprocess.Popen(
            [str(VENV / "python"), "manage.py", "feed", "--port", str(args.port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    clients = None
    try:
        _wait_healthy(url)
        rss_before = _rss_kb(feed.pid)
        spec = RESULTS / "feed-clients.json"
        receipts = RESULTS / "feed-receipts.json"
        spec.write_bytes(orjson.dumps({"url": url, "keys": keys, "receipts": str(receipts)}))
        clients = subprocess.Popen(
            [str(VENV / "python"), __file__, "--clients", str(spec)],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert clients.stdout is not None
        ready = clients.stdout.readline().strip()
        if not ready.startswith("READY"):
            raise SystemExit(f"the clients did not connect: {ready!r}")
        rss_open = _rss_kb(feed.pid)
        cpu_before = _cpu_seconds(feed.pid)
        committed, achieved = _drive(trade_ids, args.rate, changes, args.drivers)
        time.sleep(2)  # the last events' way to the sockets
        cpu = _cpu_seconds(feed.pid) - cpu_before
        os.kill(clients.pid, signal.SIGTERM)
        clients.stdout.readline()
        clients.wait(timeout=30)
        got = orjson.loads(receipts.read_bytes())
    finally:
        for process in (clients, feed):  # the sockets first: the feed waits for them to close
            if process is not None:
                process_group_stop(process, grace=10)
        flush_rate_limits()  # the webhook deliveries the changes queued (no worker runs here)
        _outbox_end(merchants)

    latencies = [
        (received - committed[(trade_id, status)]) * 1000
        for trade_id, status, received in got
        if (trade_id, status) in committed
    ]
    expected = changes * per_merchant
    drive_seconds = changes / achieved
    print(
        "| sockets | merchants | changes/s (achieved) | events expected | received "
        "| p50 ms | p90 ms | p99 ms | max ms | feed RSS idle / open MB | KB per socket "
        "| feed CPU |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    print(
        f"| {args.sockets} | {args.merchants} | {args.rate:.0f} ({achieved:.1f}) | {expected} "
        f"| {len(latencies)} | {_percentile(latencies, 0.5):.1f} "
        f"| {_percentile(latencies, 0.9):.1f} | {_percentile(latencies, 0.99):.1f} "
        f"| {max(latencies):.1f} | {rss_before / 1024:.0f} / {rss_open / 1024:.0f} "
        f"| {(rss_open - rss_before) / args.sockets:.1f} | {cpu / drive_seconds:.0%} |"
    )
    sys.stdout.flush()


def _wait_healthy(url: str) -> None:
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("the feed did not come up (bench/results/feed.log)")


if __name__ == "__main__":
    main()
