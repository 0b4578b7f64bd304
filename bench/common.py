"""What every benchmark shares: a database of its own, a real gunicorn, a lean HTTP client,
percentiles."""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import requests
from django.core.management import call_command
from django.db import connection, connections

from memoryhub.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def own_database(name: str, *, migrate: bool = True) -> Iterator[str]:
    """Point Django at a fresh database ``name``, migrated unless ``migrate`` is False (the
    caller migrates it with another version's code); yield its DATABASE_URL. The database
    stays when the block ends (``using_database`` points at it again)."""
    shared = connections.settings["default"]
    params = {
        "host": shared.get("HOST") or "127.0.0.1",
        "port": shared.get("PORT") or 5432,
        "user": shared.get("USER") or "postgres",
        "password": shared.get("PASSWORD") or None,
        "dbname": "postgres",
        "autocommit": True,
    }
    with psycopg.connect(**params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"))
    with using_database(name):
        if migrate:
            call_command("migrate", verbosity=0)
        yield urlunsplit(url._replace(path="/" + name))


@contextmanager
def using_database(name: str) -> Iterator[None]:
    """Point Django at the existing database ``name`` for the block."""
    shared = connections.settings["default"]
    previous = shared["NAME"]
    connections.close_all()
    shared["NAME"] = name
    connection.settings_dict["NAME"] = name
    try:
        yield
    finally:
        connections.close_all()
        shared["NAME"] = previous
        connection.settings_dict["NAME"] = previous


@contextmanager
def server(
    database_url: str,
    env: dict | None = None,
    workers: int = 2,
    root: Path = ROOT,
    extra: list[str] | None = None,
) -> Iterator[str]:
    """A real gunicorn serving memoryhub on a free loopback port; yields its base URL.

    ``root``: the source tree it serves (another checkout, to measure an earlier version);
    ``extra``: more gunicorn options."""
    port = free_port()
    environ = {
        **os.environ,
        "DATABASE_URL": database_url,
        "MEMORYHUB_ENV": "development",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "DB_CONN_MAX_AGE": "600",
        **({} if root == ROOT else {"PYTHONPATH": str(root)}),
        **(env or {}),
    }
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    process = subprocess.Popen(  # noqa: S603 - our own venv's gunicorn
        [
            gunicorn,
            "memoryhub.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "--log-level",
            "warning",
            *(extra or []),
        ],
        cwd=root,
        env=environ,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if requests.get(base + "/healthz", timeout=5).status_code < 500:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        else:
            raise RuntimeError("gunicorn did not start")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


class Client:
    """A JSON client on one keep-alive connection (``http.client``), reconnecting when the
    server closes it, as gunicorn's sync workers do after each answer.

    Timings taken through it are the server's and the socket's, not a client library's:
    ``requests`` adds more than a millisecond of its own per call on a 2-core machine.
    """

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        split = urlsplit(base)
        self.host, self.port = split.hostname or "127.0.0.1", split.port or 80
        self.headers = {"Content-Type": "application/json", **headers}
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: object = None) -> tuple[int, dict]:
        payload = None if body is None else json.dumps(body)
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        self.connection.request(method, path, payload, self.headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.will_close:
            self.connection.close()
            self.connection = None
        return response.status, json.loads(data) if data else {}


def percentiles(samples: list[float]) -> dict:
    """p50/p95/p99 in milliseconds of durations in seconds."""
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 2)

    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": at(0.95),
        "p99_ms": at(0.99),
        "n": len(ordered),
    }
