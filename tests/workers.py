"""A real Celery worker process for the tests that need one, on the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def assert_alive(worker: subprocess.Popen) -> None:
    assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
