"""config/gunicorn.py as it is, plus a hook telling the benchmark when each worker has loaded
the application. A worker still importing Django takes no connection: wrk's keep-alive
connections, opened meanwhile, all stay on the other worker, and the run measures one core
(bench/README.md, "Spreading the connections")."""

import os
import runpy
from pathlib import Path
from typing import Any

globals().update(
    {
        name: value
        for name, value in runpy.run_path(
            str(Path(__file__).resolve().parents[1] / "config" / "gunicorn.py")
        ).items()
        if not name.startswith("__")
    }
)


def post_worker_init(worker: Any) -> None:
    Path(os.environ["BENCH_READY_DIR"], str(worker.pid)).touch()
