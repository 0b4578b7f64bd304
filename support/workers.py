"""Real processes for the tests and the bench: a Celery worker on the test database, waiting
for a web server to answer, and stopping a process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import requests
from django.conf import settings
from django.db import connection


def tests_database_url() -> str:
    db = connection.settings_dict
    host = (db["HOST"] or "127.0.0.1").replace("/", "%2F")
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def celery_worker(**env: str) -> Iterator[subprocess.Popen]:
    """A worker with the real settings (``MEMORYHUB_ENV=test``) plus ``env``; stopped after."""
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=tests_database_url(),
        **env,
    )
    worker = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memoryhub",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "-n",
            f"test-{uuid.uuid4().hex[:8]}@%h",
        ],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield worker
    finally:
        stop(worker)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL when it has not ended within 20 seconds."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_up(url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    """Until ``url``/healthz answers 200; a server that died fails with what it printed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read().decode()[-3000:]
        try:
            # A busy machine may take seconds to answer the first request: wait for it.
            if requests.get(url + "/healthz", timeout=10).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


def assert_alive(worker: subprocess.Popen) -> None:
    assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
