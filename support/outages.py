"""Dependencies a fault test or a fault run (``python -m bench.load --fault``) may stop and
start: a private PostgreSQL and a private Redis, never the shared ones."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

from memoryhub.embedded import free_port, port_open

# A request must answer within this while a dependency is down (its timeouts are 5 s).
ANSWER_WITHIN = 15


class Postgres:
    """pgserver's PostgreSQL in ``pgdata``, stopped and started with its own pg_ctl on the
    same socket, so that clients reach it again at the same address."""

    def __init__(self, pgdata: Path, database: str = "outage") -> None:
        import pgserver

        self.server = pgserver.get_server(pgdata, cleanup_mode="stop")
        self.info = self.server.get_postmaster_info()
        self.database = database
        self.server.psql(f'CREATE DATABASE "{database}";')
        self.running = True

    @property
    def socket_dir(self) -> str:
        return str(self.info.socket_dir)

    @property
    def port(self) -> int:
        return int(self.info.port)

    @property
    def url(self) -> str:
        host = quote(self.socket_dir, safe="")
        return f"postgres://postgres@{host}:{self.port}/{self.database}"

    def _ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(list(args), pgdata=self.server.pgdata, user=self.server.system_user, timeout=30)

    def stop(self) -> None:
        self._ctl("-w", "-m", "fast", "stop")
        self.running = False

    def start(self) -> None:
        self._ctl(
            "-w",
            "-o",
            '-h ""',
            "-o",
            f"-k {self.info.socket_dir}",
            "-o",
            f"-p {self.info.port}",
            "-l",
            str(self.server.log),
            "start",
        )
        self.running = True

    def cleanup(self) -> None:
        # Stopped here: pgserver's own cleanup only stops the postmaster it started, so one
        # started again by ``start`` would outlive the test.
        if self.running:
            self.stop()
        self.server.cleanup()


class Redis:
    """A ``redis-server`` on a free port of its own, without persistence: stopping it loses
    every queued message, as a crashed Redis would."""

    def __init__(self, folder: Path) -> None:
        self.port, self.folder = free_port(), folder
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.process = subprocess.Popen(  # noqa: S603 - a fixed binary and arguments
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not port_open("127.0.0.1", self.port):
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
