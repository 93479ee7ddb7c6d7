"""Benchmark harness: the service run as production would (gunicorn, optionally a Celery
worker, on PostgreSQL and Redis), driven by wrk from a separate process, on loopback only.

Each benchmark script builds its data through the project's own services (``django.setup()``
against the bench database), then runs scenarios and prints a markdown table."""

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The checkout's own virtualenv, else the one running this script (a worktree shares one).
VENV = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin").is_dir() else Path(sys.executable).parent
RESULTS = ROOT / "bench" / "results"

BENCH_ENV = {
    "DATABASE_URL": os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trading_perf"
    ),
    "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/2"),
    "SECRET_KEY": "bench-only-insecure-secret-key",
    "SANDBOX": "true",
    "LOG_LEVEL": "WARNING",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    # This checkout's code, even when the virtualenv has another checkout installed.
    "PYTHONPATH": str(ROOT),
}


def setup_django() -> None:
    """Use the bench database from this process (for building data)."""
    os.environ.update(BENCH_ENV)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def ensure_database() -> None:
    name = BENCH_ENV["DATABASE_URL"].rsplit("/", 1)[1]
    exists = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{name}'",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if exists != "1":
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {name}"],
            check=True,
        )
    manage("migrate", "--no-input", "-v0")


def manage(*args: str) -> str:
    env = {**os.environ, **BENCH_ENV}
    return subprocess.run(
        [str(VENV / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def flush_rate_limits() -> None:
    """A fresh start for the bench's Redis database (rate-limit windows, caches)."""
    url = BENCH_ENV["REDIS_URL"]
    db = url.rsplit("/", 1)[1]
    subprocess.run(["redis-cli", "-n", db, "flushdb"], check=True, capture_output=True)


# The web servers the bench can run an application under (bench/README.md, "Web server").
SERVERS = ("granian", "gunicorn")
DEFAULT_SERVER = "gunicorn"


@dataclass
class Web:
    """One web server (its master process and workers) serving one application."""

    base_url: str
    web: subprocess.Popen[bytes]
    workers: int
    server: str
    ready_dir: Path | None = None  # gunicorn: a file per worker that has loaded the application

    def web_pids(self) -> list[int]:
        out = subprocess.run(
            ["pgrep", "-P", str(self.web.pid)], capture_output=True, text=True
        ).stdout
        return [int(pid) for pid in out.split()]

    def workers_renew(self, timeout_seconds: float = 60) -> None:
        """Fresh web workers (on SIGHUP both servers start new ones and stop the old), so that
        a scenario's peak memory is its own, not what earlier scenarios left allocated."""
        old = set(self.web_pids())
        os.kill(self.web.pid, signal.SIGHUP)
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            pids = set(self.web_pids())
            if len(pids) == self.workers and not pids & old:
                self.workers_ready(deadline)
                _wait_for(f"{self.base_url}/health", 30)
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.server} did not renew its workers")

    def workers_ready(self, deadline: float) -> None:
        """Until every current worker has loaded the application (gunicorn only): connections
        opened before then would all stay on the workers already up."""
        if self.ready_dir is None:
            return
        while time.monotonic() < deadline:
            pids = self.web_pids()
            if len(pids) == self.workers and all(
                (self.ready_dir / str(pid)).exists() for pid in pids
            ):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.server}'s workers did not load the application")

    def peak_rss_mb(self) -> float:
        """The largest peak resident set (VmHWM) among the web workers, in MB (2^20 bytes)."""
        peaks = [0.0]
        for pid in self.web_pids():
            with suppress(OSError), open(f"/proc/{pid}/status") as handle:
                peaks += [int(line.split()[1]) / 1024 for line in handle if line[:6] == "VmHWM:"]
        return max(peaks)


@dataclass
class Stack(Web):
    worker: subprocess.Popen[bytes] | None = None


def web_argv(
    server: str, app: str, port: int, *, workers: int, threads: int, worker_connections: int
) -> list[str]:
    """The command that serves ``app`` as production does (bin/start), with this many processes
    and threads: gunicorn with config/gunicorn.py (gthread), or granian's WSGI interface."""
    if server == "gunicorn":
        return [
            str(VENV / "gunicorn"),
            "-c",
            str(ROOT / "bench" / "gunicorn_ready.py"),  # config/gunicorn.py and a readiness hook
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--worker-connections",
            str(worker_connections),
            "--log-level",
            "warning",
            # The envelope worker (config/gunicorn_worker.py) needs the service's settings; for
            # another application its parent class, which differs only in refused requests.
            *([] if app == SERVICE_APP else ["--worker-class", "gthread"]),
        ]
    if server == "granian":
        return [
            str(VENV / "granian"),
            *GRANIAN_OPTIONS,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--blocking-threads",
            str(threads),
            "--log-level",
            "warning",
            app,
        ]
    raise ValueError(f"unknown web server {server}")


SERVICE_APP = "config.wsgi:application"
# granian's WSGI interface over HTTP/1.1 only (no websockets, no HTTP/2 upgrade); a worker that
# dies is replaced, and one that will not stop within 30 s of a reload or shutdown is killed
# (without it granian waits for ever), as gunicorn's graceful timeout does.
GRANIAN_OPTIONS = (
    "--interface",
    "wsgi",
    "--http",
    "1",
    "--no-ws",
    "--respawn-failed-workers",
    "--workers-kill-timeout",
    "30",
)


@contextmanager
def web(
    *,
    app: str = SERVICE_APP,
    server: str = DEFAULT_SERVER,
    workers: int = 2,
    threads: int = 4,
    port: int = 8098,
    env: dict[str, str] | None = None,
    worker_connections: int = 1000,
    health: str = "/health",
) -> Iterator[Web]:
    """``app`` under ``server`` until the block ends."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = open(RESULTS / "stack.log", "ab")  # noqa: SIM115 (open for the server's lifetime)
    argv = web_argv(
        server, app, port, workers=workers, threads=threads, worker_connections=worker_connections
    )
    ready_dir = None
    if server == "gunicorn":
        ready_dir = Path(tempfile.mkdtemp(prefix="ready-", dir=RESULTS))
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, **BENCH_ENV, **(env or {}), "BENCH_READY_DIR": str(ready_dir or "")},
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        served = Web(
            base_url=base_url, web=process, workers=workers, server=server, ready_dir=ready_dir
        )
        served.workers_ready(time.monotonic() + 60)
        _wait_for(f"{base_url}{health}", 60)
        yield served
    finally:
        process_group_stop(process)
        log.close()
        if ready_dir is not None:
            shutil.rmtree(ready_dir, ignore_errors=True)


def process_group_stop(process: subprocess.Popen[Any], *, grace: float = 30) -> None:
    """SIGTERM to a process started in its own session, SIGKILL to its group if it has not
    gone within ``grace`` seconds (a server waiting for clients that never close)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def load_average() -> tuple[float, float, float]:
    """The machine's 1, 5 and 15 minute load averages."""
    with open("/proc/loadavg") as handle:
        one, five, fifteen = handle.read().split()[:3]
    return float(one), float(five), float(fifteen)


@contextmanager
def receiver(port: int) -> Iterator[str]:
    """bench/receiver.py in its own process, a merchant callback URL that approves every
    withdrawal; yields the URL."""
    process = subprocess.Popen(
        [str(VENV / "python"), str(ROOT / "bench" / "receiver.py"), str(port)]
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/hooks"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_for(url: str, deadline_seconds: float) -> None:
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not come up")


# As production runs them (README, "Production"): one worker process per core, each running its
# tasks in threads, and beat in the first.
WORKER_PROCESSES = 2
WORKER_THREADS = 8


def celery_argvs(
    app: str = "config", *, hostname: str = "bench", beat: bool = True
) -> list[list[str]]:
    """The worker processes of ``app`` as production runs the service's (beat in the first)."""
    common = ["-A", app, "worker", "--loglevel", "WARNING", "--pool", "threads"]
    return [
        [
            str(VENV / "celery"),
            *common,
            "--concurrency",
            str(WORKER_THREADS),
            "--hostname",
            f"{hostname}{n}@%h",
            *(
                ["--beat", "--schedule", str(RESULTS / "celerybeat-schedule")]
                if beat and n == 0
                else []
            ),
        ]
        for n in range(WORKER_PROCESSES)
    ]


@contextmanager
def celery_workers(
    argvs: list[list[str]], env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """The worker processes, until the block ends, under one shell: the CPU shares count its
    process tree, and stopping its process group stops them all. Yields the shell."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "stack.log", "ab") as log:
        worker = subprocess.Popen(
            ["sh", "-c", " & ".join(shlex.join(argv) for argv in argvs) + " & wait"],
            cwd=ROOT,
            env={**os.environ, **BENCH_ENV, **env},
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            yield worker
        finally:
            process_group_stop(worker)


@contextmanager
def stack(
    *,
    server: str = DEFAULT_SERVER,
    workers: int = 2,
    threads: int = 4,
    celery: bool = False,
    port: int = 8098,
    extra_env: dict[str, str] | None = None,
    worker_connections: int = 1000,
) -> Iterator[Stack]:
    """The service: its web server and, with ``celery``, a worker with beat."""
    workers_started = celery_workers(celery_argvs(), extra_env or {}) if celery else nullcontext()
    with (
        web(
            server=server,
            workers=workers,
            threads=threads,
            port=port,
            env=extra_env,
            worker_connections=worker_connections,
        ) as served,
        workers_started as worker,
    ):
        yield Stack(
            base_url=served.base_url,
            web=served.web,
            workers=served.workers,
            server=served.server,
            ready_dir=served.ready_dir,
            worker=worker,
        )


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: str = ""

    def line(self) -> str:
        headers = "|".join(f"{k}: {v}" for k, v in self.headers.items())
        return f"{self.method}\t{self.path}\t{headers}\t{self.body}"


@dataclass(frozen=True)
class Result:
    name: str
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    errors: int


def drive(
    base_url: str,
    name: str,
    requests: Sequence[Request],
    *,
    seconds: int = 20,
    connections: int = 8,
    threads: int = 2,
    warmup_seconds: int = 3,
    delay_ms: float | None = None,
) -> Result:
    """wrk from its own process: a warm-up run (discarded), then the measured run. With
    ``delay_ms`` each request waits a random 0 to twice that long first (bench/requests.lua)."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get update && apt-get install -y wrk")
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        handle.write("\n".join(r.line() for r in requests) + "\n")
    env = {**os.environ, "WRK_REQUESTS": handle.name, "WRK_THREADS": str(threads)}
    if delay_ms is not None:
        env["WRK_DELAY_MS"] = f"{delay_ms:.0f}"
    script = str(ROOT / "bench" / "requests.lua")

    def run(duration: int) -> dict[str, float]:
        out = subprocess.run(
            [
                "wrk",
                "-t",
                str(threads),
                "-c",
                str(connections),
                "-d",
                f"{duration}s",
                "--timeout",
                "10s",
                "-s",
                script,
                base_url,
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])

    if warmup_seconds:
        run(warmup_seconds)
    stats = run(seconds)
    os.unlink(handle.name)
    return Result(
        name=name,
        rps=stats["rps"],
        p50_ms=stats["p50_ms"],
        p95_ms=stats["p95_ms"],
        p99_ms=stats["p99_ms"],
        requests=int(stats["requests"]),
        non_2xx=int(stats["non_2xx"]),
        errors=int(stats["errors"]),
    )


def table(results: Sequence[Result]) -> str:
    lines = [
        "| endpoint | req/s | p50 ms | p95 ms | p99 ms | requests | non-2xx |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.name} | {r.rps:.0f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | {r.p99_ms:.1f} "
        f"| {r.requests} | {r.non_2xx} |"
        for r in results
    ]
    return "\n".join(lines)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def processes_cpu(pids: list[int]) -> float:
    """CPU seconds (user and system) the processes have used so far, read from /proc; a process
    gone meanwhile counts nothing."""
    used = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return used
