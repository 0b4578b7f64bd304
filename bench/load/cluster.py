"""The cluster a load run drives, as a deployment on several machines would have it: two
gunicorn web processes (the README's production command) and two Celery workers, sharing
one PostgreSQL database (fresh for the run, dropped after) and one Redis, and the local
mem0 server of the record-memory tests."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import requests
from django.db import connections

from bench.common import ROOT, own_database
from memoryhub.embedded import free_port
from support.workers import stop

MEM0_KEY, MEM0_ADMIN_KEY = "load-user-key", "load-admin-key"


@dataclass
class Cluster:
    bases: list[str]  # the web processes' URLs
    mem0: object  # support.fakes.mem0.OssServer
    logs: Path  # each process's stderr, for a failed run
    workers: list[subprocess.Popen]  # the Celery workers (a fault run kills one)
    servers: list[subprocess.Popen]  # the web processes


def _environment(database_url: str, redis_url: str, secret: str) -> dict[str, str]:
    return {
        **os.environ,
        "MEMORYHUB_ENV": "production",
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        "SECRET_KEY": secret,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DB_CONN_MAX_AGE": "600",
        "LOG_LEVEL": "WARNING",
        # The mem0 server listens on loopback over plain HTTP.
        "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1",
        "MEMORYHUB_OUTBOUND_ALLOW_HTTP": "1",
        "PYTHONPATH": str(ROOT),  # this checkout's code
    }


@contextmanager
def _process(argv: list[str], env: dict, log: Path) -> Iterator[subprocess.Popen]:
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log.open("wb")
    )
    try:
        yield process
    finally:
        stop(process)


def _wait_until_up(base: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{base} ended: {log.read_text()[-2000:]}")
        try:
            if requests.get(base + "/healthz", timeout=10).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{base} did not come up: {log.read_text()[-2000:]}")


@contextmanager
def fresh_database(name: str) -> Iterator[str]:
    """A new, migrated database for Django and the cluster; dropped afterwards."""
    try:
        with own_database(name) as url:
            yield url
    finally:
        settings = connections.settings["default"]
        connections.close_all()
        with psycopg.connect(
            host=settings.get("HOST") or "127.0.0.1",
            port=settings.get("PORT") or 5432,
            user=settings.get("USER") or "postgres",
            password=settings.get("PASSWORD") or None,
            dbname="postgres",
            autocommit=True,
        ) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _celery(command: str, name: str, logs: Path) -> list[str]:
    common = [sys.executable, "-m", "celery", "-A", "memoryhub", command, "--loglevel=WARNING"]
    if command == "beat":
        return [*common, "--schedule", str(logs / "celerybeat-schedule")]
    return [*common, "--pool=solo", "--without-heartbeat", "--without-mingle",
            "--without-gossip", "-n", name]  # fmt: skip


@contextmanager
def cluster(
    redis_url: str, web: int = 2, workers: int = 2, *, database_url: str | None = None,
    env: dict[str, str] | None = None, beat: bool = False,
) -> Iterator[Cluster]:  # fmt: skip
    """Everything running on a fresh database (or on ``database_url``, which Django in this
    process already points at); Django in this process points at it too. ``env`` adds
    settings; ``beat`` adds the one beat process (a fault run's purges need its sweep)."""
    from support.fakes.mem0 import OssServer
    from support.servers import GUNICORN

    logs = Path(tempfile.mkdtemp(prefix="memoryhub-load-"))
    with ExitStack() as stack:
        url = database_url or stack.enter_context(fresh_database(f"mh_load_run_{os.getpid()}"))
        mem0 = OssServer(api_key=MEM0_KEY, admin_key=MEM0_ADMIN_KEY).start()
        stack.callback(mem0.stop)
        env = {**_environment(url, redis_url, secrets.token_urlsafe(32)), **(env or {})}
        celery = [
            stack.enter_context(
                _process(
                    _celery("worker", f"load-{os.getpid()}-{n}@%h", logs),
                    env,
                    logs / f"worker-{n}.log",
                )
            )
            for n in range(workers)
        ]
        if beat:
            stack.enter_context(_process(_celery("beat", "", logs), env, logs / "beat.log"))
        bases, servers = [], []
        for n in range(web):
            port, log = free_port(), logs / f"web-{n}.log"
            server = stack.enter_context(_process(
                [sys.executable, "-m", "gunicorn", *GUNICORN, "--bind", f"127.0.0.1:{port}",
                 "--workers", "2", "--timeout", "60", "--log-level", "warning"],
                env, log,
            ))  # fmt: skip
            bases.append(f"http://127.0.0.1:{port}")
            servers.append(server)
            _wait_until_up(bases[-1], server, log)
        yield Cluster(bases, mem0, logs, celery, servers)
