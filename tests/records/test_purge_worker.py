"""A real Celery worker process purges a deleted memory's namespace through Redis."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
from django.conf import settings
from django.db import connection

from records.models import PurgeJob
from records.services.kind import on_delete
from records.services.providers import backend_of
from tests.records.conftest import record_memory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _worker() -> subprocess.Popen:
    db = connection.settings_dict
    environ = dict(os.environ)
    environ.update(
        MEMORYHUB_ENV="test",
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}",
        REDIS_URL=settings.CELERY_BROKER_URL,
        # The fake mem0 server listens on loopback over plain HTTP.
        MEMORYHUB_OUTBOUND_ALLOW_PRIVATE="1",
        MEMORYHUB_OUTBOUND_ALLOW_HTTP="1",
    )
    return subprocess.Popen(
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
            f"records-{uuid.uuid4().hex[:8]}@%h",
        ],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_a_worker_purges_the_namespace_after_the_delete_commits(tenant, oss_provider, oss_server):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    memory = record_memory(tenant, oss_provider, namespace="worker-ns")
    backend_of(oss_provider).add("worker-ns", "to be purged by a worker", {})
    worker = _worker()
    try:
        from django.db import transaction

        with transaction.atomic():  # commits: the task is sent on commit
            on_delete(tenant.owner, memory)
            memory.delete()
        job = PurgeJob.objects.get(namespace="worker-ns")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.status != "pending":
                break
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
            time.sleep(0.2)
        assert job.status == "done", job.last_error
        assert oss_server.in_namespace("worker-ns") == []
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
