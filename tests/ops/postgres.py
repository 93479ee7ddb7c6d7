"""A PostgreSQL primary of the test's own (initdb, on a free port) and a streaming replica of it
(pg_basebackup), from the PostgreSQL binaries on the machine. PostgreSQL refuses to run as
root: the clusters run as ``postgres``, in folders it owns."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.faults.processes import free_port


def _bin(name: str) -> str:
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    assert found, f"{name} is missing (Debian's postgresql package)"
    return found


def _as_postgres(*argv: str) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, *argv], check=True, capture_output=True, timeout=120)


class Cluster:
    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port

    @classmethod
    def primary(cls) -> "Cluster":
        folder = Path(tempfile.mkdtemp(prefix="pg-primary-"))
        shutil.chown(folder, "postgres", "postgres")
        cluster = cls(folder, free_port())
        # trust for local and 127.0.0.1, replication included (initdb's default lines).
        _as_postgres(_bin("initdb"), "-D", str(folder / "data"), "-A", "trust", "-U", "postgres")
        cluster.start()
        return cluster

    def replica(self) -> "Cluster":
        folder = Path(tempfile.mkdtemp(prefix="pg-replica-"))
        shutil.chown(folder, "postgres", "postgres")
        replica = Cluster(folder, free_port())
        _as_postgres(
            _bin("pg_basebackup"),
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"),
            *("-D", str(folder / "data"), "-R", "-X", "stream", "-c", "fast"),
        )
        replica.start()
        return replica

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
        _as_postgres(
            _bin("pg_ctl"),
            *("-D", str(self.folder / "data"), "-l", str(self.folder / "log"), "-w"),
            *("-o", options, "start"),
        )

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def execute(self, sql: str, dbname: str = "postgres") -> list[tuple[object, ...]]:
        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            cursor = conn.execute(sql)  # type: ignore[call-overload]
            return cursor.fetchall() if cursor.description else []

    def stop(self) -> None:
        try:
            _as_postgres(_bin("pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
