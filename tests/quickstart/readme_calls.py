"""The README's "First calls", run as the README says to run them.

``readme_script`` turns the section's shell blocks into one bash script: every ``curl`` of the
README goes to this file's ``call`` (``python3 readme_calls.py call <curl arguments>``), which
puts in the values of ``<placeholders>`` taken from earlier answers, runs the real curl, and
checks the answer against the notes the README writes under the call:

    #   <name> = data.path           <name> is this field of the answer from now on
    #   repeat until data.path is v  the call is repeated (every second) until its answer has
                                     the field v (error answers on the way are repeated too)
    #   answers data.path is v       the field is v
    #   fails with ERROR_KEY         the call is refused with this error key

Any other call must answer 2xx with ``success: true``. The first call that does not stops the
script, its README text named. The state (values, the last answer) is a JSON file between calls.
No Django here: it runs in the bash script's own processes.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

PLACEHOLDER = re.compile(r"<[^<>\s][^<>]*>")
DEFINE = re.compile(r"^#\s+(<[^<>]+>)\s*=\s*(\S+)\s*$")
REPEAT = re.compile(r"^#\s+repeat until (\S+) is (\S+)\s*$")
ANSWERS = re.compile(r"^#\s+answers (\S+) is (\S+)\s*$")
FAILS = re.compile(r"^#\s+fails with ([A-Z_]+)\s*$")
PATH_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
REPEAT_SECONDS = 1.0


class ReadmeCallError(Exception):
    pass


# -- The README side: its shell blocks as commands with their notes.


@dataclass
class Command:
    text: str
    notes: list[str] = field(default_factory=list)

    @property
    def is_call(self) -> bool:
        return self.text.lstrip().startswith("curl ")


def first_calls_blocks(readme: str) -> list[str]:
    """The ``sh`` blocks of the "First calls" section that call the API (with curl), in order;
    a block without a call (the feed's watcher, which runs until stopped) is not one."""
    section = readme.split("\n## First calls\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    return [block for block in blocks if re.search(r"^curl ", block, flags=re.MULTILINE)]


def _ends_unquoted(line: str, quote: str | None) -> tuple[str | None, bool]:
    """The quote still open at the end of ``line`` (given the one open at its start), and
    whether the line ends with a continuation backslash outside quotes. A ``#`` after a space
    outside quotes starts a comment."""
    previous = " "
    position = 0
    while position < len(line):
        char = line[position]
        if quote is None:
            if char in "'\"":
                quote = char
            elif char == "\\":
                position += 1
            elif char == "#" and previous.isspace():
                return None, False
        elif char == quote:
            quote = None
        elif char == "\\" and quote == '"':
            position += 1
        previous = char
        position += 1
    return quote, quote is None and line.rstrip().endswith("\\")


def commands(block: str) -> list[Command]:
    """Each command of a shell block (a call may span lines), with the notes under it."""
    found: list[Command] = []
    lines: list[str] = []
    quote: str | None = None
    continued = False
    for line in block.splitlines():
        if not lines and not continued:
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                if found and any(p.match(stripped) for p in (DEFINE, REPEAT, ANSWERS, FAILS)):
                    found[-1].notes.append(stripped)
                elif found and stripped.startswith("#   "):
                    raise ValueError(f"a note the README test cannot read: {stripped}")
                continue
        lines.append(line)
        quote, continued = _ends_unquoted(line, quote)
        if quote is None and not continued:
            found.append(Command("\n".join(lines)))
            lines = []
    if lines:
        raise ValueError("the README's last command does not end: " + "\n".join(lines))
    return found


def readme_script(readme: str, *, python: str, runner: str) -> tuple[str, list[Command]]:
    """A bash script running the README's calls through this file, and the commands in it."""
    all_commands = [c for block in first_calls_blocks(readme) for c in commands(block)]
    script = [
        "set -euo pipefail",
        f'curl() {{ "{python}" "{runner}" call "$@"; }}',
        f'readme_next() {{ "{python}" "{runner}" next "$1"; }}',
    ]
    for number, command in enumerate(all_commands, start=1):
        if command.is_call:
            note = {"number": number, "text": command.text, "notes": command.notes}
            script.append("readme_next " + _single_quoted(json.dumps(note)))
        script.append(command.text)
    return "\n".join(script) + "\n", all_commands


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# -- The call side: one curl of the README, run and checked.


def _state_file() -> Path:
    return Path(os.environ["README_STATE"])


def _load() -> dict[str, Any]:
    state: dict[str, Any] = json.loads(_state_file().read_text())
    return state


def _save(state: dict[str, Any]) -> None:
    _state_file().write_text(json.dumps(state))


def field_at(answer: Any, path: str) -> Any:
    """``data.items[0].offer.price`` of the answer."""
    value = answer
    for name, index in PATH_STEP.findall(path):
        try:
            value = value[int(index)] if index else value[name]
        except (KeyError, IndexError, TypeError) as exc:
            raise ReadmeCallError(f"the answer has no {path}") from exc
    return value


def as_text(value: Any) -> str:
    """A value as the README writes it: numbers as they were sent, booleans in JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _substituted(arguments: list[str], values: dict[str, str]) -> list[str]:
    filled = []
    for argument in arguments:
        for name, value in values.items():
            argument = argument.replace(name, value)
        missing = PLACEHOLDER.findall(argument)
        if missing:
            raise ReadmeCallError(f"no earlier answer gave {', '.join(missing)}")
        filled.append(argument)
    return filled


def _run_curl(arguments: list[str]) -> tuple[int, str]:
    curl = shutil.which("curl")
    assert curl is not None, "curl is not installed"
    done = subprocess.run(
        [curl, *arguments, "--write-out", "\n%{http_code}", "--max-time", "30"],
        capture_output=True,
        text=True,
        check=False,
    )
    body, _, status = done.stdout.rpartition("\n")
    return int(status or 0), body


def _answer(body: str) -> Any:
    try:
        return json.loads(body, parse_float=Decimal)
    except ValueError as exc:
        raise ReadmeCallError(f"the answer is not JSON: {body[:300]}") from exc


def _check(status: int, body: str, answer: Any, notes: list[str]) -> None:
    failure = next((FAILS.match(n) for n in notes if FAILS.match(n)), None)
    if failure is not None:
        key = answer.get("error", {}).get("key") if isinstance(answer, dict) else None
        if status < 400 or key != failure.group(1):
            raise ReadmeCallError(f"expected {failure.group(1)}, got {status}: {body[:500]}")
        return
    if not 200 <= status < 300 or not isinstance(answer, dict) or answer.get("success") is not True:
        raise ReadmeCallError(f"answered {status}: {body[:500]}")
    for note in notes:
        if expected := ANSWERS.match(note):
            got = as_text(field_at(answer, expected.group(1)))
            if got != expected.group(2):
                raise ReadmeCallError(f"{expected.group(1)} is {got}, not {expected.group(2)}")


def _repeat_until(note: str) -> tuple[str, str] | None:
    match = REPEAT.match(note)
    return (match.group(1), match.group(2)) if match else None


def call(arguments: list[str]) -> None:
    state = _load()
    pending = state.pop("next")
    filled = _substituted(arguments, state["values"])
    repeat = next((r for n in pending["notes"] if (r := _repeat_until(n))), None)
    deadline = time.monotonic() + float(os.environ.get("README_REPEAT_SECONDS", "120"))
    while True:
        status, body = _run_curl(filled)
        try:
            answer = _answer(body)
            _check(status, body, answer, pending["notes"])
            if repeat is None:
                break
            got = as_text(field_at(answer, repeat[0]))
            if got == repeat[1]:
                break
            raise ReadmeCallError(f"{repeat[0]} still {got}, never {repeat[1]}")
        except ReadmeCallError:
            # A repeated call waits for the world, which may refuse the step until it is there.
            if repeat is None or time.monotonic() > deadline:
                raise
        time.sleep(REPEAT_SECONDS)  # another process (the worker, beat) moves the world
    for note in pending["notes"]:
        if define := DEFINE.match(note):
            state["values"][define.group(1)] = as_text(field_at(answer, define.group(2)))
    state["calls"] += 1
    _save(state)
    sys.stdout.write(body + "\n")


def main(argv: list[str]) -> int:
    command, *rest = argv
    if command == "next":
        state = _load()
        state["next"] = json.loads(rest[0])
        _save(state)
        return 0
    pending = _load()["next"]
    try:
        call(rest)
    except ReadmeCallError as exc:
        sys.stderr.write(f"README call {pending['number']} failed: {exc}\n{pending['text']}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
