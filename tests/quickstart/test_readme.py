"""The README's "First calls", in the README's order, against a real quick start: ``bin/start``
(migrations, the seeded sandbox world, the demo merchant, gunicorn, a Celery worker and beat on
SQLite and files) on a free port with a VAR_DIR of its own. Every curl of the README runs as
written, in a shell that did not export ``PORT``, from a folder whose ``var/`` is the quick
start's (where the README's first lines read the URL and the key), with the values of its
``<placeholders>`` taken from the answers its notes name (tests/quickstart/readme_calls.py); the
first call that fails fails the test, named. And what bin/start prints: a quiet start that ends
with what to do next."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from tests.quickstart import readme_calls

README = settings.BASE_DIR / "README.md"
RUNNER = Path(readme_calls.__file__)
START_SECONDS = 240  # migrations, static files and seeding 4,000 items on a shared machine
STOP_SECONDS = 20

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class QuickStart:
    port: int
    var_dir: Path
    log: Path

    @property
    def api_key(self) -> str:
        key: str = json.loads((self.var_dir / "demo.json").read_text())["apiKey"]
        return key


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _quick_start_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return env | extra


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """The whole process group bin/start leads (gunicorn, the worker, beat)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=STOP_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuickStart]:
    # Named var, as bin/start's own: the README's calls read var/demo.json from its parent.
    var_dir = tmp_path_factory.mktemp("quick-start") / "var"
    started = QuickStart(port=_free_port(), var_dir=var_dir, log=var_dir / "bin-start.log")
    env = _quick_start_env(
        PORT=str(started.port),
        # Relative, as bin/start's own default "var" is (a relative cache path made Django warn
        # in every command).
        VAR_DIR=os.path.relpath(var_dir, settings.BASE_DIR),
        # The README's world, faster: a step a second instead of bin/start's five.
        SANDBOX_AUTOPILOT_SECONDS="1",
        CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS="1",
    )
    var_dir.mkdir()
    with started.log.open("wb") as log:
        process = subprocess.Popen(
            [str(settings.BASE_DIR / "bin" / "start")],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _healthy(started.port):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("bin/start did not come up:\n" + started.log.read_text()[-3000:])
            time.sleep(1)  # waiting for another process, not for the service clock
        # bin/start sets the demo merchant's callback URL once the server answers, then says so.
        while "\nReady: " not in started.log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("bin/start did not finish:\n" + started.log.read_text()[-3000:])
            time.sleep(1)
        yield started
    finally:
        _stop(process)


def test_the_readme_first_calls_parse_into_calls_with_their_notes():
    script, commands = readme_calls.readme_script(
        README.read_text(), python=sys.executable, runner=str(RUNNER)
    )
    calls = [command for command in commands if command.is_call]
    defined = {
        note.split("=")[0].removeprefix("#").strip()
        for command in calls
        for note in command.notes
        if readme_calls.DEFINE.match(note)
    }

    assert len(calls) >= 60
    assert {"<token>", "<its token>", "<txHash>", "<funding id>", "<dossierId>"} <= defined
    assert any(c.text.startswith("curl -s -X POST $B/sandbox/reset") for c in calls[-6:])
    assert calls[-1].text.startswith("curl -s -X POST $B/sandbox/webhooks/test")
    assert script.count("readme_next ") == len(calls)


def test_every_placeholder_is_given_by_an_answer_above_its_first_use():
    _, commands = readme_calls.readme_script(
        README.read_text(), python=sys.executable, runner=str(RUNNER)
    )
    given: set[str] = set()  # the URL and the key are read from var/demo.json
    used_before_given = []
    for command in commands:
        used = set(readme_calls.PLACEHOLDER.findall(command.text))
        used_before_given += sorted(used - given)
        given |= {
            match.group(1) for note in command.notes if (match := readme_calls.DEFINE.match(note))
        }

    assert used_before_given == []


def test_the_readme_first_calls_work_in_order_against_the_quick_start(quick_start, tmp_path):
    script, commands = readme_calls.readme_script(
        README.read_text(), python=sys.executable, runner=str(RUNNER)
    )
    state = tmp_path / "readme-state.json"
    state.write_text(json.dumps({"values": {}, "calls": 0}))
    shell = {k: v for k, v in os.environ.items() if k != "PORT"}  # as a new shell has it

    done = subprocess.run(
        ["bash", "-c", script],
        cwd=quick_start.var_dir.parent,
        env=shell | {"README_STATE": str(state)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )

    calls = sum(command.is_call for command in commands)
    assert done.returncode == 0, done.stderr[-4000:]
    assert json.loads(state.read_text())["calls"] == calls


def test_the_feed_answers_on_the_api_port(quick_start):
    """As the original SDK connects (shared decisions, section 11): Socket.IO on the API's own
    origin, long-polling first and then upgraded to a WebSocket, and on a WebSocket alone."""
    import socketio

    base = f"http://127.0.0.1:{quick_start.port}"
    for transports in (["polling", "websocket"], ["websocket"]):
        client = socketio.Client(reconnection=False)
        try:
            client.connect(
                base, auth={"apiKey": quick_start.api_key}, transports=transports, wait_timeout=20
            )
            answer = client.call("subscribe", {"market": {"game": "730"}}, timeout=20)
            assert client.connected
            assert answer == {"type": "sync", "reason": "subscribe", "game": "730"}
        finally:
            client.disconnect()
    # The API answers on the same port, in its envelope.
    with urllib.request.urlopen(f"{base}/health", timeout=10) as health:
        assert json.loads(health.read())["data"]["maintenance"] == {"mode": "off"}


def test_every_repeated_call_is_a_read():
    """A call the README says to repeat until the world is there must change nothing: a POST
    repeated would act again (or be refused as an illegal move)."""
    _, commands = readme_calls.readme_script(
        README.read_text(), python=sys.executable, runner=str(RUNNER)
    )
    repeated = [c for c in commands if any(readme_calls.REPEAT.match(n) for n in c.notes)]

    assert len(repeated) >= 6
    assert [c.text for c in repeated if " -X " in c.text or " -d " in c.text] == []


def test_the_readme_names_no_fixed_port_for_its_calls():
    section = README.read_text().split("\n## First calls\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)

    assert [b for b in blocks if "8000" in b.replace("# http://127.0.0.1:8000", "")] == []
    assert "PORT" not in section


def test_bin_start_is_quiet_and_ends_with_what_to_do_next(quick_start):
    log = quick_start.log.read_text()
    demo = json.loads((quick_start.var_dir / "demo.json").read_text())
    before, _, rest = log.partition("\nReady: ")
    block, _, after = rest.partition("-" * 80 + "\n")
    base = f"http://127.0.0.1:{quick_start.port}"

    assert demo["url"] == base
    assert "System check identified" not in log
    assert "warning" not in before.lower(), before
    assert "celery@" not in log  # no banner
    assert len(before.splitlines()) < 12, before
    # The password is kept, never printed; the block says where.
    assert demo["adminPassword"] not in log
    assert '"adminPassword" in ' in block
    assert f"API key   {demo['apiKey']}\n" in block
    assert f"Docs      {base}/docs/" in block
    first_call = next(
        line.strip() for line in block.splitlines() if line.strip().startswith("curl ")
    )
    # After the block only what the requests bring (the README's calls, webhooks): their access
    # lines, and the log lines of the ones answered 5xx on purpose (FLEET_DEGRADED is a 503).
    started = [line for line in after.splitlines() if line and "HTTP/1.1" not in line]
    assert [line for line in started if "requestId=" not in line] == []
    done = subprocess.run(["bash", "-c", first_call], capture_output=True, text=True, check=False)
    answer = json.loads(done.stdout)
    assert answer["success"] is True
    assert answer["data"]["currency"] == "USD"
