"""A real Celery worker process purges a deleted memory's namespace through Redis."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.db import transaction

from records.kind import on_delete
from records.models import PurgeJob
from records.services.providers import backend_of
from support.workers import assert_alive, celery_worker
from tests.records.conftest import record_memory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_worker_purges_the_namespace_after_the_delete_commits(tenant, oss_provider, oss_server):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    memory = record_memory(tenant, oss_provider, namespace="worker-ns")
    backend_of(oss_provider).add("worker-ns", "to be purged by a worker", {})
    with celery_worker(
        REDIS_URL=settings.CELERY_BROKER_URL,
        # The fake mem0 server listens on loopback over plain HTTP.
        MEMORYHUB_OUTBOUND_ALLOW_PRIVATE="1",
        MEMORYHUB_OUTBOUND_ALLOW_HTTP="1",
    ) as worker:
        with transaction.atomic():  # commits: the task is sent on commit
            on_delete(tenant.owner, memory)
            memory.delete()
        job = PurgeJob.objects.get(namespace="worker-ns")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.status != "pending":
                break
            assert_alive(worker)
            time.sleep(0.2)
        assert job.status == "done", job.last_error
        assert oss_server.in_namespace("worker-ns") == []
