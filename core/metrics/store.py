"""Where the processes of one machine keep their metrics, and how they are read back together.

prometheus-client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, set before any process
starts) has every process write its values to memory-mapped files that a scrape merges. Its
documented rule is to empty the folder when the server starts; but one machine runs several
servers (gunicorn, Celery workers, beat, feed processes) that start and stop on their own, and
one emptying the shared folder would wipe the counters of the others while they run. So each
*process tree* (gunicorn's master and its workers, a Celery worker and its pool, beat, a feed
process) writes to a folder of its own, ``<root>/<role>-<pid of its first process>``, made empty
when the tree starts; a tree starting also removes the folders of the trees of its role that are
no longer running (``role_start``). A scrape merges each role's folders and labels every sample
with ``role``, so a restart resets only that role's series, which Prometheus reads as the reset
it is (a partial drop in a series shared by roles would read as a bogus increase).

Nothing here imports Django: gunicorn's master calls it from ``config/gunicorn.py``."""

import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.samples import Sample

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# The machine's folder, kept when a tree points PROMETHEUS_MULTIPROC_DIR at its own below it.
ROOT_ENV = "TRADING_METRICS_ROOT"
# Files of a process that started no tree (a management command, a shell).
UNROLED = "other"


def metrics_root() -> Path | None:
    """The machine's metrics folder, or None without multiprocess mode."""
    root = os.environ.get(ROOT_ENV) or os.environ.get(MULTIPROC_ENV)
    return Path(root) if root else None


def role_start(role: str) -> None:
    """Called by the first process of a tree before it forks or records anything: its folder
    (empty), its children write there too (they inherit the environment). The values a process
    made before this (none, while every process metric has labels: core.metrics) would stay in
    the folder it used before."""
    root = metrics_root()
    if root is None:
        return
    root.mkdir(parents=True, exist_ok=True)
    for folder in root.glob(f"{role}-*"):
        if folder.is_dir() and not _running(folder.name.rpartition("-")[2]):
            shutil.rmtree(folder, ignore_errors=True)
    own = root / f"{role}-{os.getpid()}"
    shutil.rmtree(own, ignore_errors=True)
    own.mkdir()
    os.environ[ROOT_ENV] = str(root)
    os.environ[MULTIPROC_ENV] = str(own)


def process_dead(pid: int) -> None:
    """A child of this tree exited (a gunicorn worker, a pool process): its live gauges (open
    sockets, pool connections) stop counting. Its counters stay, as the tree's."""
    folder = os.environ.get(MULTIPROC_ENV)
    if folder and os.environ.get(ROOT_ENV):
        mark_process_dead(pid, folder)


def _running(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _role_files(root: Path) -> dict[str, list[str]]:
    """Each role's files. A tree that is no longer running (killed, or its folder not yet
    removed by the next start of its role) keeps its counters but not its live gauges."""
    roles: dict[str, list[str]] = {UNROLED: [str(path) for path in root.glob("*.db")]}
    for folder in root.iterdir():
        if not folder.is_dir():
            continue
        role, _, pid = folder.name.rpartition("-")
        files = folder.glob("*.db") if _running(pid) else _not_live(folder)
        roles.setdefault(role or UNROLED, []).extend(str(path) for path in files)
    return roles


def _not_live(folder: Path) -> Iterator[Path]:
    return (path for path in folder.glob("*.db") if not path.name.startswith("gauge_live"))


def merged(root: Path) -> list[Metric]:
    """Every process's values on this machine, merged per role, with a ``role`` label. Read
    again if a dead tree's folder was removed (by a start of its role) while being read."""
    try:
        return _merged(root)
    except FileNotFoundError:
        return _merged(root)


def _merged(root: Path) -> list[Metric]:
    families: dict[str, Metric] = {}
    for role, files in _role_files(root).items():
        if not files:
            continue
        for metric in MultiProcessCollector.merge(files, accumulate=True):
            family = families.setdefault(
                metric.name, Metric(metric.name, metric.documentation, metric.type)
            )
            family.samples.extend(_with_role(metric.samples, role))
    return list(families.values())


def _with_role(samples: Iterable[Sample], role: str) -> Iterator[Sample]:
    for sample in samples:
        yield sample._replace(labels={**sample.labels, "role": role})
