"""Real processes for the fault tests, started the way the deployment starts them (a Celery
worker, gunicorn, a Redis of our own) and killed the way machines die: SIGKILL to the whole
process group, no chance to clean up."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from django.conf import settings

from tests.faults.database import SERVICE_APPLICATION

# Generous: the machine is small and shared; a passing run takes a fraction of this.
DEADLINE_SECONDS = 40.0
POLL_SECONDS = 0.05


def free_port() -> int:
    """A loopback port nobody listens on now (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Process:
    """One long-running program with its own log file, restartable after a kill."""

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str], log: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.log = log
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> "Process":
        assert self.popen is None or self.popen.poll() is not None, f"{self.name} is running"
        with self.log.open("ab") as out:
            out.write(f"--- start {' '.join(self.argv)}\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.argv,
                cwd=settings.BASE_DIR,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a kill takes every child too
            )
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash or an out-of-memory kill delivers it."""
        assert self.alive(), f"{self.name} was not running\n{self.log_tail()}"
        os.killpg(self.pid, signal.SIGKILL)
        assert self.popen is not None
        self.popen.wait(timeout=DEADLINE_SECONDS)

    def stop(self) -> None:
        """At the end of a test: nothing it leaves behind matters, so no graceful shutdown."""
        if self.alive():
            self.kill()

    def log_tail(self, lines: int = 40) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def child_pids(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux: read from /proc)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry.name))
    return children


def wait_until(
    condition: Callable[[], object],
    what: str,
    *,
    alive: Sequence[Process] = (),
    deadline: float = DEADLINE_SECONDS,
) -> None:
    """Polls until ``condition()`` holds; the given processes must stay up meanwhile."""
    give_up = time.monotonic() + deadline
    while not condition():
        for process in alive:
            assert process.alive(), f"{process.name} exited while waiting for {what}\n" + (
                process.log_tail()
            )
        if time.monotonic() > give_up:
            logs = "\n".join(f"[{p.name}]\n{p.log_tail()}" for p in alive)
            raise AssertionError(f"no {what} within {deadline:.0f} s\n{logs}")
        time.sleep(POLL_SECONDS)


def service_env(*, database_url: str, redis_url: str) -> dict[str, str]:
    """The environment of a deployed process against the test database and a given Redis."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": settings.SECRET_KEY,
        "SANDBOX": "true",
        "PYTHONUNBUFFERED": "1",
        "LOG_LEVEL": "WARNING",
        "PGAPPNAME": SERVICE_APPLICATION,  # tells their database connections from the test's
    }
    for name in ("CELERY_TASK_ALWAYS_EAGER", "SANDBOX_AUTOPILOT_SECONDS"):
        env.pop(name, None)  # the world moves only when a test moves it
    return env


def celery_worker(env: Mapping[str, str], log: Path, pool: str = "solo") -> Process:
    """One worker taking one task at a time, so "the task in flight" is a single, known task:
    run by the worker itself (``solo``), by its one pool process (``prefork``) or by its one
    thread (``threads``, the pool production runs)."""
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", pool]
    argv += ["--concurrency", "1", "-Q", "celery", "--loglevel", "WARNING"]
    argv += ["--without-mingle", "--without-gossip", "--without-heartbeat"]
    return Process("celery worker", argv, env, log)


def web_server(env: Mapping[str, str], port: int, log: Path) -> Process:
    """gunicorn as bin/start runs it, with config/gunicorn.py: two processes with four threads
    each."""
    config = str(settings.BASE_DIR / "config" / "gunicorn.py")
    argv = [sys.executable, "-m", "gunicorn", "-c", config, "config.wsgi:application"]
    argv += ["--bind", f"127.0.0.1:{port}", "--graceful-timeout", "2"]
    return Process("gunicorn", argv, env, log)


def redis_server(port: int, log: Path) -> Process:
    """A Redis of the test's own that keeps nothing on disk: a restart loses every message."""
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
    argv += ["--save", "", "--appendonly", "no", "--dir", str(log.parent)]
    return Process("redis", argv, os.environ, log)


def celery_beat(env: Mapping[str, str], log: Path) -> Process:
    """Beat as the README's production section runs it: one process sending the sweeps."""
    argv = [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING"]
    return Process("celery beat", argv, env, log)
