"""Tenant isolation under a fault (issue 39): while one merchant's callback receiver is slow,
refusing or dripping and that merchant keeps many buys waiting for its approval, another
merchant buys and cashes out; its approval-callback and completion times are compared with the
run just before, where no merchant is faulty (the machine's load drifts between runs). The
target: within 2x.

    bench/run --only isolation [--buys 20] [--cashouts 10] [--faulty-in-flight 24]
    .venv/bin/python bench/isolation.py ...            # the same

The service runs as the other benchmarks run it (bench/harness.py: gunicorn, two Celery worker
processes of 8 threads with beat, PostgreSQL, Redis), the sandbox world moving by itself
(``SANDBOX_AUTOPILOT_SECONDS=1``: a bought item is delivered, accepted and its hold ended one
step a second, a cashout's transaction confirmed). The receivers run in this process:

- the healthy merchant's answers 200 at once (approving) and notes when each event arrived;
- "slow" answers after 15 s (past the 10 s an attempt has);
- "refusing" is a port nobody listens on;
- "dripping" answers ``HTTP/1.1 200 OK``, ``X-Pad: `` and then one byte every 4 s.

Each faulty merchant keeps ``--faulty-in-flight`` buys waiting for their approval (more than the
worker's 16 threads), buying again as each fails. The healthy merchant's operations start one
every 0.5 s; a buy's approval time is from its POST to the arrival of its approval callback
(``trade.initiated``), its completion time to ``trade.completed``; a cashout's to
``crypto_withdrawal.awaiting_approval`` and ``crypto_withdrawal.completed``. ``--unshared``
adds a run alone and the dripping run on a stack with the per-merchant share lifted
(WEBHOOK_DELIVERIES_PER_MERCHANT=1000), for what the share does. Uses BENCH_DATABASE_URL and
BENCH_REDIS_URL as every benchmark does (give your own while others use theirs); ports
8290-8299.
"""

import argparse
import json
import select
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests
from harness import (
    ensure_database,
    flush_rate_limits,
    load_average,
    manage,
    setup_django,
    stack,
)

WEB_PORT = 8290
HEALTHY_PORT = 8291
SLOW_PORT = 8292
REFUSING_PORT = 8293  # nothing listens
DRIPPING_PORT = 8294
PACE_SECONDS = 0.5
SLOW_SECONDS = 15.0
DRIP_SECONDS = 4.0
RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner={}&token=Ab3_x-Z9"
SETTLE_SECONDS = 180  # the longest the healthy merchant's operations may take to complete
FAULTS = {
    "slow": SLOW_PORT,
    "refusing": REFUSING_PORT,
    "dripping": DRIPPING_PORT,
}


@dataclass
class Arrivals:
    """When each (event type, subject id) reached the healthy merchant's receiver."""

    seen: dict[tuple[str, str], float] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def note(self, body: dict) -> None:  # type: ignore[type-arg]
        subject = body.get("trade") or body.get("withdrawal") or {}
        with self.changed:
            self.seen.setdefault((str(body.get("type")), str(subject.get("id"))), time.monotonic())
            self.changed.notify_all()

    def wait_for(self, keys: list[tuple[str, str]], timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: all(k in self.seen for k in keys), timeout)


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the service gave up on a slow answer: that is the point


def _serve(port: int, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = _Quiet(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server


@contextmanager
def receivers(arrivals: Arrivals) -> Iterator[None]:
    class Healthy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            parsed = json.loads(body)
            if "type" in parsed:
                arrivals.note(parsed)

        def log_message(self, *args: object) -> None:
            pass

    class Slow(Healthy):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(SLOW_SECONDS)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    servers = [_serve(HEALTHY_PORT, Healthy), _serve(SLOW_PORT, Slow)]
    stop = threading.Event()
    threading.Thread(target=_drip_forever, args=(stop,), daemon=True).start()
    try:
        yield
    finally:
        stop.set()
        for server in servers:
            server.shutdown()
            server.server_close()


def _drip_forever(stop: threading.Event) -> None:
    """The dripping receiver: its status line at once, then a header one byte every 4 s."""
    listener = socket.create_server(("127.0.0.1", DRIPPING_PORT), backlog=256)
    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        threading.Thread(target=_drip, args=(conn,), daemon=True).start()
    listener.close()


def _drip(conn: socket.socket) -> None:
    with conn:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
            for _ in range(30):
                readable, _, _ = select.select([conn], [], [], DRIP_SECONDS)
                if readable and not conn.recv(65536):
                    return  # the sender gave up
                conn.sendall(b"a")
        except OSError:
            return


@dataclass(frozen=True)
class Merchant:
    id: str
    key: str
    fee: Decimal


def merchant(name: str, port: int) -> Merchant:
    from merchants.models import Merchant as MerchantRow
    from merchants.models import Scope
    from merchants.services import api_key_create, merchant_create
    from wallet.services import wallet_admin_credit

    made = merchant_create(name=f"{name} {uuid.uuid4().hex[:6]}", is_verified=True)
    # Set without the URL's test, which a refusing receiver fails.
    MerchantRow.objects.filter(pk=made.pk).update(callback_url=f"http://127.0.0.1:{port}/hooks")
    _, key = api_key_create(merchant=made, scopes=[Scope.CORE_ACCESS])
    wallet_admin_credit(merchant=made, amount=Decimal(10_000_000), reason="bench")
    return Merchant(str(made.pk), key, made.withdraw_fee_rate)


def callbacks_off(merchants: list[Merchant]) -> None:
    """The faulty merchants' receivers are left alone between runs: their events fail at once."""
    from core import clock
    from merchants.callers import callers_changed
    from merchants.models import Merchant as MerchantRow

    MerchantRow.objects.filter(pk__in=[m.id for m in merchants]).update(
        callback_disabled_at=clock.now()
    )
    callers_changed()


def callback_on(faulty: Merchant) -> None:
    from merchants.callers import callers_changed
    from merchants.models import Merchant as MerchantRow

    MerchantRow.objects.filter(pk=faulty.id).update(callback_disabled_at=None)
    callers_changed()


class Listings:
    """First-game listings no trade took yet, handed out once each."""

    def __init__(self, count: int) -> None:
        from sandbox.models import SandboxListing
        from trading.models import TradeItem

        taken = TradeItem.objects.exclude(listing_id="").values("listing_id")
        self._free = list(
            SandboxListing.objects.filter(game=730)
            .exclude(id__in=taken)
            .order_by("?")
            .values_list("id", "price")[:count]
        )
        self._lock = threading.Lock()

    def take(self) -> tuple[str, Decimal]:
        with self._lock:
            return self._free.pop()


def buy(base: str, who: Merchant, listings: Listings, partner: int) -> str:
    """A buy of one listing; another one while the market's churn (the autopilot stirs it)
    took or repriced the one tried."""
    from trading.pricing import fee_inclusive

    for tries_left in reversed(range(5)):
        listing_id, price = listings.take()
        body = {
            "tradeUrl": TRADE_URL.format(partner),
            "items": [{"itemId": listing_id, "price": float(fee_inclusive(price, who.fee))}],
        }
        answer = requests.post(
            f"{base}/secure/buy", json=body, headers={"api-key": who.key}, timeout=30
        )
        if answer.status_code in (400, 404, 409) and tries_left:
            continue
        answer.raise_for_status()
        break
    return str(answer.json()["data"]["id"])


def client_token(base: str, who: Merchant, partner: int) -> str:
    answer = requests.post(
        f"{base}/auth/authenticate-client",
        json={
            "clientPlatformId": str(76561197960265728 + partner),
            "clientTradeUrl": TRADE_URL.format(partner),
        },
        headers={"api-key": who.key},
        timeout=30,
    )
    answer.raise_for_status()
    return str(answer.json()["data"]["token"])


def cashout(base: str, token: str) -> str:
    body = {
        "chain": "ETH",
        "token": "USDC",
        "address": RECIPIENT,
        "amountCents": 2500,
        "requestId": uuid.uuid4().hex[:24],
    }
    answer = requests.post(
        f"{base}/client/crypto/withdraw",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    answer.raise_for_status()
    return str(answer.json()["data"]["id"])


def waiting_for_approval(who: Merchant) -> int:
    from trading.models import Trade

    return Trade.objects.filter(merchant_id=who.id, status="initiated").count()


def faulty_load(
    base: str, who: Merchant, listings: Listings, in_flight: int, stop: threading.Event
) -> None:
    """Keeps ``in_flight`` of the faulty merchant's buys waiting for its approval."""
    partner = 1000
    while not stop.is_set():
        for _ in range(in_flight - waiting_for_approval(who)):
            partner += 1
            try:
                buy(base, who, listings, partner)
            except requests.RequestException as exc:
                print(f"  faulty merchant's buy refused: {exc}", flush=True)
        stop.wait(1.0)


@dataclass
class Operation:
    kind: str  # "buy" or "cashout"
    started: float
    subject: str = ""

    def awaited(self) -> tuple[tuple[str, str], tuple[str, str]]:
        if self.kind == "buy":
            return ("trade.initiated", self.subject), ("trade.completed", self.subject)
        return (
            ("crypto_withdrawal.awaiting_approval", self.subject),
            ("crypto_withdrawal.completed", self.subject),
        )


@dataclass(frozen=True)
class Figures:
    name: str
    approval: list[float]
    completion: list[float]
    missing: int
    faulty_attempts: int
    load: float  # the machine's 1-minute load average at the run's end

    def row(self, alone: "Figures | None") -> str:
        def cell(values: list[float], base: list[float]) -> str:
            if not values:
                return "-"
            text = f"{statistics.median(values):.2f} / {max(values):.2f}"
            if base:
                median = statistics.median(values) / statistics.median(base)
                text += f" ({median:.2f}x / {max(values) / max(base):.2f}x)"
            return text

        return (
            f"| {self.name} | {cell(self.approval, alone.approval if alone else [])} "
            f"| {cell(self.completion, alone.completion if alone else [])} "
            f"| {self.missing} | {self.faulty_attempts} | {self.load:.1f} |"
        )


def interleaved(buys: int, cashouts: int) -> list[str]:
    """``buys`` buys and ``cashouts`` cashouts, the cashouts spread evenly among the buys."""
    total = buys + cashouts
    return [
        "cashout" if (n * cashouts) // total != ((n + 1) * cashouts) // total else "buy"
        for n in range(total)
    ]


def healthy_run(
    base: str,
    healthy: Merchant,
    token: str,
    listings: Listings,
    arrivals: Arrivals,
    args: argparse.Namespace,
) -> tuple[list[Operation], int]:
    """The healthy merchant's operations, one every PACE_SECONDS; then until each completed."""
    operations = []
    for n, kind in enumerate(interleaved(args.buys, args.cashouts)):
        started = time.monotonic()
        subject = (
            buy(base, healthy, listings, 100 + n % 50) if kind == "buy" else cashout(base, token)
        )
        operations.append(Operation(kind, started, subject))
        time.sleep(max(0.0, started + PACE_SECONDS - time.monotonic()))
    keys = [key for op in operations for key in op.awaited()]
    arrivals.wait_for(keys, SETTLE_SECONDS)
    missing = sum(1 for key in keys if key not in arrivals.seen)
    return operations, missing


def faulty_attempts(who: Merchant) -> int:
    """Every delivery attempt to the merchant so far."""
    from merchants.webhooks.models import WebhookDelivery

    return WebhookDelivery.objects.filter(event__merchant_id=who.id).count()


def measure(
    name: str,
    base: str,
    healthy: Merchant,
    token: str,
    faulty: Merchant | None,
    everyone_faulty: list[Merchant],
    listings: Listings,
    arrivals: Arrivals,
    args: argparse.Namespace,
) -> Figures:
    callbacks_off(everyone_faulty)
    stop = threading.Event()
    load = None
    before = 0
    if faulty is not None:
        callback_on(faulty)
        before = faulty_attempts(faulty)
        load = threading.Thread(
            target=faulty_load,
            args=(base, faulty, listings, args.faulty_in_flight, stop),
            daemon=True,
        )
        load.start()
        deadline = time.monotonic() + 60
        while waiting_for_approval(faulty) < args.faulty_in_flight and time.monotonic() < deadline:
            time.sleep(0.5)
    operations, missing = healthy_run(base, healthy, token, listings, arrivals, args)
    stop.set()
    if load is not None:
        load.join()
    attempts = faulty_attempts(faulty) - before if faulty is not None else 0
    callbacks_off(everyone_faulty)
    approval, completion = [], []
    for op in operations:
        asked, done = op.awaited()
        if asked in arrivals.seen:
            approval.append(arrivals.seen[asked] - op.started)
        if done in arrivals.seen:
            completion.append(arrivals.seen[done] - op.started)
    figures = Figures(name, approval, completion, missing, attempts, load_average()[0])
    print(figures.row(None), flush=True)
    return figures


def warm_up(base: str, healthy: Merchant, listings: Listings, arrivals: Arrivals) -> None:
    """One buy approved end to end: the worker has started and loaded everything."""
    trade_id = buy(base, healthy, listings, 99)
    if not arrivals.wait_for([("trade.completed", trade_id)], SETTLE_SECONDS):
        raise SystemExit("the warm-up buy did not complete: is the worker running?")


def quiet(faulty: list[Merchant], timeout: float = 120) -> None:
    """Until no faulty merchant's buy waits for its approval (their callbacks are off)."""
    deadline = time.monotonic() + timeout
    while any(waiting_for_approval(m) for m in faulty) and time.monotonic() < deadline:
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="isolation", help=argparse.SUPPRESS)
    parser.add_argument("--buys", type=int, default=20)
    parser.add_argument("--cashouts", type=int, default=10)
    parser.add_argument("--faulty-in-flight", type=int, default=24)
    parser.add_argument("--unshared", action="store_true", help="also dripping without the share")
    args = parser.parse_args()
    ensure_database()
    setup_django()
    print(manage("seed_sandbox", "--items", "400", "--listings", "20000", "--if-empty").strip())
    flush_rate_limits()
    arrivals = Arrivals()
    healthy = merchant("isolation healthy", HEALTHY_PORT)
    faulty = {fault: merchant(f"isolation {fault}", port) for fault, port in FAULTS.items()}
    everyone_faulty = list(faulty.values())
    # Each faulty run right after a run alone, its own baseline: the machine's load drifts.
    runs = [
        (name, who) for fault in FAULTS for name, who in (("alone", None), (fault, faulty[fault]))
    ]
    listings = Listings((args.buys + 200) * (len(runs) + 2) + args.faulty_in_flight * 40)
    results: list[Figures] = []
    env = {"SANDBOX_AUTOPILOT_SECONDS": "1"}
    stacks = [("", env)]
    if args.unshared:
        lifted = {**env, "WEBHOOK_DELIVERIES_PER_MERCHANT": "1000"}
        stacks.append((", no share", lifted))
    with receivers(arrivals):
        for suffix, stack_env in stacks:
            with stack(celery=True, port=WEB_PORT, extra_env=stack_env) as service:
                token = client_token(service.base_url, healthy, 7)
                warm_up(service.base_url, healthy, listings, arrivals)
                chosen = runs if not suffix else [("alone", None), ("dripping", faulty["dripping"])]
                for name, who in chosen:
                    results.append(
                        measure(
                            name + suffix,
                            service.base_url,
                            healthy,
                            token,
                            who,
                            everyone_faulty,
                            listings,
                            arrivals,
                            args,
                        )
                    )
                    quiet(everyone_faulty)
    print()
    print(
        "| run | approval s, median / max (x the run alone before it) | completion s, the same "
        "| not arrived | faulty merchant's attempts | load |"
    )
    print("|---|---|---|---:|---:|---:|")
    alone = None
    for figures in results:
        print(figures.row(alone if figures.name.startswith(tuple(FAULTS)) else None))
        alone = figures
    from wallet.selectors import wallet_invariants_check

    print(f"\nwallet invariants hold: {wallet_invariants_check().clean}")


if __name__ == "__main__":
    main()
