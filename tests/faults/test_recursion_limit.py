"""Every kind of process (web, worker, beat, feed) runs with the interpreter's default recursion
limit after its start-up (config/recursion.py): above it, a deeply nested structure parsed by C
code overruns the C stack and the process dies with SIGSEGV instead of raising RecursionError
(issue 25: one feed message of 100,000 ``[`` killed the feed).

Each process is started as it is deployed, by the commands of bin/start in quick-start mode and of
the README's "Production" section under production settings, with one thing added: an observer,
a ``sitecustomize`` module on PYTHONPATH that runs a thread in each process (and in each process
it forks) writing down, when the test asks, the process's recursion limit and whether it had
loaded Django's apps and py_ecc (the library that raises the limit). The test asks once each
kind serves: gunicorn with every worker up and ``/health`` answered, Celery once it printed its
banner (after its start-up imports), the feed once ``/health`` answered. Nothing of this is in
the deployed service."""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings

from config import gunicorn
from tests.faults.processes import Process, child_pids, free_port, wait_until
from tests.faults.test_production_start import production_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OBSERVER = """
import json, os, sys, threading, time

FOLDER = os.environ["RECURSION_LIMIT_REPORTS"]


def report():
    apps = sys.modules.get("django.apps")
    state = {
        "limit": sys.getrecursionlimit(),
        "apps_ready": bool(apps and apps.apps.ready),
        "py_ecc": "py_ecc" in sys.modules,
    }
    with open(os.path.join(FOLDER, f"{os.getpid()}.part"), "w") as out:
        json.dump(state, out)
    os.replace(os.path.join(FOLDER, f"{os.getpid()}.part"), os.path.join(FOLDER, str(os.getpid())))


def watch():
    while not os.path.exists(os.path.join(FOLDER, "now")):
        time.sleep(0.05)
    report()


def start_watching():
    threading.Thread(target=watch, daemon=True).start()


start_watching()
os.register_at_fork(after_in_child=start_watching)
"""


@dataclass
class Kind:
    name: str
    command: str  # as a shell reads it; {bin} is the venv's bin folder, {port} a free port
    ready: Callable[[Process, int], bool]  # (the process, its port) -> serving

    def argv(self, port: int) -> list[str]:
        return self.command.format(bin=Path(sys.executable).parent, port=port).split()


def answers_http(_: Process, port: int) -> bool:
    """``/health`` answers at all (the application is loaded and has served a request)."""
    try:
        requests.get(f"http://127.0.0.1:{port}/health", timeout=5)
    except requests.RequestException:
        return False
    return True


def every_worker_answers_http(process: Process, port: int) -> bool:
    """gunicorn: ``/health`` answers and every worker of config/gunicorn.py is up."""
    return answers_http(process, port) and len(child_pids(process.pid)) == gunicorn.workers


def printed(text: str) -> Callable[[Process, int], bool]:
    """The process printed ``text`` (Celery's banners come after its start-up imports)."""

    def ready(process: Process, _: int) -> bool:
        return process.log.exists() and text in process.log.read_text(errors="replace")

    return ready


WEB = "{bin}/gunicorn -c config/gunicorn.py config.wsgi:application --bind 127.0.0.1:{port}"
FEED = "{bin}/python manage.py feed --host 127.0.0.1 --port {port}"

QUICK_START = [  # bin/start's commands
    Kind("web", WEB, every_worker_answers_http),
    Kind(
        "worker with beat",
        "{bin}/celery -A config worker --beat --loglevel WARNING --pool threads --concurrency 4",
        printed("[queues]"),
    ),
    Kind("feed", FEED, answers_http),
]
PRODUCTION = [  # the README's "Production" commands
    Kind("web", WEB, every_worker_answers_http),
    Kind(
        "worker",
        "{bin}/celery -A config worker --pool threads --concurrency 8 --loglevel INFO",
        printed("[queues]"),
    ),
    Kind("beat", "{bin}/celery -A config beat --loglevel INFO", printed("Configuration ->")),
    Kind("feed", FEED, answers_http),
]


def quick_start_env(var_dir: Path) -> dict[str, str]:
    """bin/start's environment: no database or Redis URL, the sandbox, everything in VAR_DIR."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.pop("SECRET_KEY", None)
    for folder in ("broker", "broker-processed", "broker-control", "static"):
        (var_dir / folder).mkdir(parents=True)
    env.update(
        VAR_DIR=str(var_dir),
        SANDBOX="true",
        SANDBOX_AUTOPILOT_SECONDS="5",
        PYTHONUNBUFFERED="1",
    )
    return env


def deployed_env(tmp_path: Path) -> dict[str, str]:
    env = production_env(settings.REDIS_URL, tmp_path / "no-var")
    # The feed's bus on a channel of this test's own.
    env.update(FEED_BUS="redis", FEED_CHANNEL=f"trading-feed-test:{tmp_path.name}")
    return env


def interpreter_default() -> int:
    """The recursion limit of this interpreter started bare (isolated: no site customization)."""
    out = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; print(sys.getrecursionlimit())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def process_tree(pid: int) -> list[int]:
    tree = [pid]
    for child in child_pids(pid):
        tree += process_tree(child)
    return tree


@dataclass
class Started:
    kind: Kind
    process: Process
    port: int
    reports: Path

    def serving(self) -> bool:
        return self.kind.ready(self.process, self.port)

    def all_reported(self) -> bool:
        return all((self.reports / str(pid)).exists() for pid in process_tree(self.process.pid))

    def read_reports(self) -> list[dict]:
        return [json.loads(p.read_text()) for p in self.reports.iterdir() if p.name.isdigit()]


def run_and_report(kinds: list[Kind], env: dict[str, str], tmp_path: Path) -> dict[str, list]:
    """Start every kind and wait until each serves; then every process of each reports."""
    observer = tmp_path / "observer"
    observer.mkdir()
    (observer / "sitecustomize.py").write_text(OBSERVER)
    started: list[Started] = []
    try:
        for kind in kinds:
            name = kind.name.replace(" ", "-")
            reports = tmp_path / "reports" / name
            reports.mkdir(parents=True)
            kind_env = dict(env, RECURSION_LIMIT_REPORTS=str(reports))
            kind_env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(observer), env.get("PYTHONPATH")])
            )
            port = free_port()
            process = Process(kind.name, kind.argv(port), kind_env, tmp_path / f"{name}.log")
            started.append(Started(kind, process.start(), port, reports))
        for one in started:
            wait_until(one.serving, f"{one.kind.name} serving", alive=[one.process])
        for one in started:
            (one.reports / "now").touch()
            wait_until(one.all_reported, f"every {one.kind.name} process", alive=[one.process])
    finally:
        for one in started:
            one.process.stop()
    return {one.kind.name: one.read_reports() for one in started}


def problems(reports: dict[str, list]) -> list[str]:
    """What is wrong with each kind's reports: none at all, none from a process that loaded the
    apps and py_ecc (then the test proves nothing), or a limit other than the default."""
    default = interpreter_default()
    found = []
    for kind, seen in reports.items():
        if not any(report["apps_ready"] and report["py_ecc"] for report in seen):
            found.append(f"{kind}: no process reported having loaded the apps and py_ecc: {seen}")
        over = [report for report in seen if report["limit"] != default]
        if over:
            found.append(f"{kind}: recursion limit is not {default}: {over}")
    return found


def test_every_process_of_the_quick_start_runs_with_the_default_recursion_limit(
    tmp_path: Path,
) -> None:
    reports = run_and_report(QUICK_START, quick_start_env(tmp_path / "var"), tmp_path)

    assert set(reports) == {"web", "worker with beat", "feed"}
    found = problems(reports)
    assert not found, "\n".join(found)


def test_every_process_of_a_deployment_runs_with_the_default_recursion_limit(
    tmp_path: Path,
) -> None:
    reports = run_and_report(PRODUCTION, deployed_env(tmp_path), tmp_path)

    assert set(reports) == {"web", "worker", "beat", "feed"}
    found = problems(reports)
    assert not found, "\n".join(found)
