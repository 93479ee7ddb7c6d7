"""A real PgBouncer (Debian's package; ``.ci/run`` installs it when missing) in transaction
pooling mode, in front of the test database, on a free port: few server connections shared by
many clients, so that consecutive transactions of one client land on different server
connections and any session state left between them would show."""

import os
import shutil
import tempfile
from pathlib import Path

import psycopg

from tests.faults.processes import Process, free_port, wait_until

BINARY = "/usr/sbin/pgbouncer"


class PgBouncer:
    def __init__(self, *, host: str, port: int, dbname: str, pool_size: int = 4) -> None:
        assert Path(BINARY).exists(), "PgBouncer is missing: apt-get install pgbouncer"
        # PgBouncer refuses to run as root: it runs as postgres (-u), so its folder is open.
        self.folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
        self.folder.chmod(0o777)
        self.port = free_port()
        self.dbname = dbname
        users = self.folder / "users.txt"
        users.write_text('"postgres" ""\n')
        config = self.folder / "pgbouncer.ini"
        config.write_text(
            "[databases]\n"
            f"{dbname} = host={host} port={port} dbname={dbname}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {users}\nadmin_users = postgres\n"
            f"pool_mode = transaction\ndefault_pool_size = {pool_size}\n"
            "min_pool_size = 0\nreserve_pool_size = 0\nmax_client_conn = 500\n"
            # libpq and psycopg send these at connect; PgBouncer would refuse the connection.
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.folder / 'pgbouncer.log'}\n"
            f"pidfile = {self.folder / 'pgbouncer.pid'}\n"
        )
        for path in (users, config):
            path.chmod(0o644)
        self.process = Process(
            "pgbouncer",
            [BINARY, "-u", "postgres", str(config)],
            os.environ,
            self.folder / "stdout.log",
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{self.dbname}"

    def start(self) -> "PgBouncer":
        self.process.start()
        wait_until(self._answers, "PgBouncer", alive=[self.process])
        return self

    def _answers(self) -> bool:
        try:
            with psycopg.connect(self.url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def show(self, what: str) -> list[dict[str, object]]:
        """``SHOW <what>`` on the admin console (POOLS, STATS, SERVERS, CLIENTS)."""
        admin = f"postgres://postgres@127.0.0.1:{self.port}/pgbouncer"
        with psycopg.connect(admin, autocommit=True) as conn:
            cursor = conn.execute(f"SHOW {what}")
            names = [column.name for column in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def stop(self) -> None:
        self.process.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
