"""Embedded services for a machine that has only Python: ``make run`` and ``make test``.

* PostgreSQL: when ``DATABASE_URL`` is unset, the ``pgserver`` package starts the
  PostgreSQL 16 it ships, in ``<data dir>/pg`` (``make test`` first tries 127.0.0.1:5432).
* Celery broker: when ``REDIS_URL`` is unset, ``make run`` uses kombu's filesystem transport
  (settings.py): tasks still go through a real worker process. ``make test`` needs a real
  Redis and starts a ``redis-server`` binary on a spare port if none answers on 6379.

``python -m memoryhub.embedded CMD...`` sets these up and then runs CMD with them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Protocol
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent


class EmbeddedServer(Protocol):
    """The handle pgserver returns for a server it started (or reused)."""

    def cleanup(self) -> None: ...


def data_dir() -> Path:
    path = Path(os.environ.get("MEMORYHUB_DATA_DIR", BASE_DIR / ".data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_embedded_postgres(database: str = "memoryhub") -> tuple[EmbeddedServer, str]:
    """Start (or reuse) the embedded server; returns (server handle, DATABASE_URL)."""
    import pgserver

    pgdata = data_dir() / "pg"
    pgdata.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    if not database.isidentifier():
        raise ValueError(f"not a database name: {database!r}")
    # psql takes no parameters; the name was just checked to be a plain identifier.
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")  # noqa: S608
    if "1 row" not in exists:
        server.psql(f'CREATE DATABASE "{database}";')
    info = server.get_postmaster_info()
    host = quote(str(info.socket_dir), safe="")
    return server, f"postgres://postgres@{host}:{info.port}/{database}"


def running_database_url(database: str = "memoryhub") -> str | None:
    """The URL of ``make run``'s embedded PostgreSQL when it is running, else None.

    Read from ``<data dir>/pg/postmaster.pid`` (PID, data dir, start, port, socket dir, ...),
    so that ``manage.py`` beside ``make run`` reaches the same database without pgserver.
    """
    pid_file = data_dir() / "pg" / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid, port, socket_dir = int(lines[0]), int(lines[3]), lines[4].strip()
    except (OSError, IndexError, ValueError):
        return None
    try:
        os.kill(pid, 0)  # signal 0: is it alive?
    except PermissionError:
        pass  # alive, another user's
    except OSError:
        return None  # a stale file: the server stopped without removing it
    return f"postgres://postgres@{quote(socket_dir, safe='')}:{port}/{database}"


def beside_make_run(environ: MutableMapping[str, str]) -> bool:
    """With nothing configured, use ``make run``'s embedded database and development settings.

    Only when MEMORYHUB_ENV, SECRET_KEY and DATABASE_URL are all unset and the embedded
    PostgreSQL of this checkout (``.data/pg``) is running: a production setup sets at least
    DATABASE_URL, so it still refuses to start without SECRET_KEY. ``manage.py`` and
    ``memoryhub-mcp`` call it before Django loads its settings.
    """
    if any(environ.get(name) for name in ("MEMORYHUB_ENV", "SECRET_KEY", "DATABASE_URL")):
        return False
    url = running_database_url()
    if url is None:
        return False
    environ["MEMORYHUB_ENV"] = "development"
    environ["DATABASE_URL"] = url
    return True


def ensure_database(
    environ: MutableMapping[str, str], *, prefer_local: bool = False
) -> EmbeddedServer | None:
    """Point DATABASE_URL at a PostgreSQL; returns the embedded server's handle, if started.

    ``make run`` always embeds when DATABASE_URL is unset; ``make test`` first tries the
    PostgreSQL on 127.0.0.1:5432 (``prefer_local``).
    """
    if environ.get("DATABASE_URL"):
        return None
    if prefer_local and port_open("127.0.0.1", 5432):
        environ["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/memoryhub"
        return None
    server, url = start_embedded_postgres()
    environ["DATABASE_URL"] = url
    print(f"embedded PostgreSQL 16 running in {data_dir() / 'pg'}", flush=True)
    return server


def ensure_redis_for_tests(environ: MutableMapping[str, str]) -> subprocess.Popen[bytes] | None:
    """Tests talk to a real Redis: the one on 6379, or a redis-server we start."""
    if environ.get("REDIS_URL"):
        return None
    if port_open("127.0.0.1", 6379):
        environ["REDIS_URL"] = "redis://127.0.0.1:6379/15"
        return None
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("make test needs Redis: install redis-server or set REDIS_URL")
    port = free_port()
    process = subprocess.Popen(  # noqa: S603 - our own argument list
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            tempfile.mkdtemp(prefix="memoryhub-redis-"),
        ],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(50):
        if port_open("127.0.0.1", port):
            break
        time.sleep(0.1)
    environ["REDIS_URL"] = f"redis://127.0.0.1:{port}/15"
    return process


def main(argv: list[str]) -> int:
    """Run a command (the test suite) with a database and a Redis it can reach."""
    environ = dict(os.environ)
    server = ensure_database(environ, prefer_local=True)
    redis = ensure_redis_for_tests(environ)
    try:
        return subprocess.call(argv, env=environ)  # noqa: S603 - the caller's command
    finally:
        if redis is not None:
            redis.terminate()
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
